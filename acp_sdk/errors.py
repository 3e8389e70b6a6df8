"""The one exception hierarchy of acp_sdk.

Every error the SDK raises derives from `ACPError`. Messages say what went wrong and
where; they never echo values received from a peer, which may be hostile or huge.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["ACPError", "DecodeError", "EncodeError"]


class ACPError(Exception):
    """Base of every error raised by acp_sdk."""


class DecodeError(ACPError, ValueError):
    """Data does not decode as the requested ACP type.

    Attributes:
        message: What is wrong, without the offending value.
        path: Where: wire field names and list indices from the decoded root, for
            example `("prompt", 2, "type")`, rendered as `prompt[2].type`.
    """

    def __init__(self, message: str, path: Sequence[str | int] = ()) -> None:
        super().__init__(message)
        self.message = message
        # Kept innermost-first while the error travels outwards (see `at`).
        self._reversed_path: list[str | int] = list(reversed(path))

    @property
    def path(self) -> tuple[str | int, ...]:
        return tuple(reversed(self._reversed_path))

    @property
    def path_text(self) -> str:
        """The path as `prompt[2].type` (empty at the root)."""
        out = ""
        for segment in self.path:
            if isinstance(segment, int):
                out += f"[{segment}]"
            else:
                out += f".{segment}" if out else segment
        return out

    def at(self, segment: str | int) -> DecodeError:
        """Prefix the path with an enclosing field name or list index; returns self."""
        self._reversed_path.append(segment)
        return self

    def __str__(self) -> str:
        where = self.path_text
        return f"{where}: {self.message}" if where else self.message

    def __reduce__(self) -> tuple[type[DecodeError], tuple[str, tuple[str | int, ...]]]:
        return (type(self), (self.message, self.path))


class EncodeError(ACPError, TypeError):
    """An object cannot be encoded as ACP JSON (not a model, or holds a non-JSON value)."""
