"""The one exception hierarchy of acp_sdk.

Every error the SDK raises derives from `ACPError`. Messages say what went wrong and
where; they never echo values received from a peer, which may be hostile or huge. The one
exception is `RequestError`, which *is* the peer's answer: its `str()` shows the peer's
message and a compact rendering of `data`, cut to 200 characters.

Two errors also derive from the builtin they mean, so generic code catches them:
`ConnectionClosed` is a `ConnectionError` and `RequestTimeout` a `TimeoutError` (both
`OSError`s). Each is built with exactly one positional argument, so `OSError` never reads
it as `(errno, strerror)`: `errno` stays None. Every error here survives pickling with its
message and attributes.
"""

from __future__ import annotations

import enum
import signal as _signal
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import orjson

__all__ = [
    "ACPError",
    "CapabilityNotNegotiated",
    "ConnectionClosed",
    "DecodeError",
    "EncodeError",
    "ErrorCode",
    "LocalProtocolError",
    "NotAnAgent",
    "ProtocolError",
    "RemoteProtocolError",
    "RequestError",
    "RequestTimeout",
    "UnsupportedProtocolVersion",
]


class ACPError(Exception):
    """Base of every error raised by acp_sdk."""


_Located = TypeVar("_Located", bound="_LocatedError")


class _LocatedError(ACPError):
    """An error about one place in a JSON document: a message and the path to the place.

    Attributes:
        message: What is wrong, without the offending value.
        path: Where: wire field names and list indices from the root, for example
            `("prompt", 2, "type")`, rendered as `prompt[2].type`.
    """

    def __init__(self, message: str, path: Sequence[str | int] = ()) -> None:
        super().__init__(message)
        self.message = message
        # Kept innermost-first while the error travels outwards (see `at`).
        self._reversed_path: list[str | int] = list(reversed(path))

    @property
    def path(self) -> tuple[str | int, ...]:
        """Where in the JSON the error is: keys and list indexes, outermost first."""
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

    def at(self: _Located, segment: str | int) -> _Located:
        """Prefix the path with an enclosing field name or list index; returns self."""
        self._reversed_path.append(segment)
        return self

    def __str__(self) -> str:
        where = self.path_text
        return f"{where}: {self.message}" if where else self.message

    def __reduce__(self) -> tuple[type[_LocatedError], tuple[str, tuple[str | int, ...]]]:
        return (type(self), (self.message, self.path))


class DecodeError(_LocatedError, ValueError):
    """Data does not decode as the requested ACP type.

    Attributes:
        message: What is wrong, without the offending value.
        path: Where: wire field names and list indices from the decoded root, for
            example `("prompt", 2, "type")`, rendered as `prompt[2].type`.
    """


class EncodeError(_LocatedError, TypeError):
    """An object cannot be encoded as ACP JSON: it is not a model, a field holds a value of
    the wrong JSON type (a number for a string, a value outside a closed enum, a non-list
    for a list, a model of the wrong class), or it holds a value JSON cannot represent.

    Attributes:
        message: What is wrong, without the offending value.
        path: Where: the wire names and list indices of the offending field from the
            encoded object, for example `("prompt", 2, "text")`, rendered as
            `prompt[2].text` (empty when the object itself is at fault).
    """


class ProtocolError(ACPError):
    """Somebody broke the ACP/JSON-RPC protocol; the subclass says who."""


class LocalProtocolError(ProtocolError):
    """This side tried something the protocol forbids in the current state.

    Raised before anything is written: the connection is unchanged and usable.
    """


class RemoteProtocolError(ProtocolError):
    """The peer sent something the protocol forbids."""


class CapabilityNotNegotiated(LocalProtocolError):
    """The peer did not advertise the capability a method (or a parameter, or a session
    update such as a `notice`) needs; or, with `ours`, this side did not advertise the
    capability its own sending needs (the unstable `auth/status_update`).

    Attributes:
        method: The wire method name.
        capability: The dotted wire path that was required, e.g.
            `agentCapabilities.sessionCapabilities.list`.
        ours: True when the capability is one this side had to advertise itself.
    """

    def __init__(self, method: str, capability: str, ours: bool = False) -> None:
        who = "this side" if ours else "the peer"
        super().__init__(f"{method} needs {capability}, which {who} did not advertise")
        self.method = method
        self.capability = capability
        self.ours = ours

    def __reduce__(self) -> tuple[type[CapabilityNotNegotiated], tuple[str, str, bool]]:
        return (type(self), (self.method, self.capability, self.ours))


class UnsupportedProtocolVersion(RemoteProtocolError):
    """The agent chose a protocol version this SDK does not speak."""

    def __init__(self, version: int, supported: Sequence[int]) -> None:
        wanted = ", ".join(str(v) for v in supported)
        super().__init__(f"peer chose protocol version {version}; supported: {wanted}")
        self.version = version
        self.supported = tuple(supported)

    def __reduce__(self) -> tuple[type[UnsupportedProtocolVersion], tuple[int, tuple[int, ...]]]:
        return (type(self), (self.version, self.supported))


class ConnectionClosed(ACPError, ConnectionError):
    """The connection ended (end of input, or closed locally) before an answer came.

    Also a builtin `ConnectionError`. `str(e)` is the message.

    Attributes:
        exit_code: The agent process's exit status, when it exited normally.
        signal: The signal number, when the agent process was killed by one.
        stderr_tail: The last lines of the agent's stderr ("" when unknown or empty).
        stdout_tail: The last lines the agent wrote on its stdout that were not JSON-RPC
            (a usage message, a banner): "" when there were none.
    """

    def __init__(
        self,
        message: str = "the connection is closed",
        *,
        exit_code: int | None = None,
        signal: int | None = None,
        stderr_tail: str = "",
        stdout_tail: str = "",
    ) -> None:
        super().__init__(message)  # one argument: OSError reads two as (errno, strerror)
        self.exit_code = exit_code
        self.signal = signal
        self.stderr_tail = stderr_tail
        self.stdout_tail = stdout_tail

    @classmethod
    def agent_exited(
        cls,
        *,
        exit_code: int | None,
        signal: int | None,
        stderr_tail: str,
        max_lines: int = 10,
        stdout_tail: str = "",
    ) -> ConnectionClosed:
        """The error for an agent process that ended, e.g. `agent exited with code 1: <the
        last `max_lines` non-empty lines of its stderr>`, then what it wrote on its stdout
        that was not JSON-RPC, if anything (often the only clue: a usage message)."""
        if signal is not None:
            message = f"agent was killed by signal {signal}"
            name = _signal_name(signal)
            if name:
                message += f" ({name})"
        elif exit_code is not None:
            message = f"agent exited with code {exit_code}"
        else:
            message = "the agent closed its output"
        lines = [line for line in stderr_tail.splitlines() if line.strip()]
        tail = "\n".join(lines[-max_lines:]) if max_lines > 0 else ""
        if tail:
            message += f": {tail}"
        stray = [line for line in stdout_tail.splitlines() if line.strip()][-max_lines:]
        if stray and max_lines > 0:
            message += "; not JSON-RPC on its stdout: " + "\n".join(stray)
        return cls(
            message,
            exit_code=exit_code,
            signal=signal,
            stderr_tail=stderr_tail,
            stdout_tail=stdout_tail,
        )

    def __reduce__(self) -> tuple[type[ConnectionClosed], tuple[str], dict[str, Any]]:
        state = {
            "exit_code": self.exit_code,
            "signal": self.signal,
            "stderr_tail": self.stderr_tail,
            "stdout_tail": self.stdout_tail,
        }
        return (type(self), (str(self.args[0]) if self.args else "",), state)


class NotAnAgent(ConnectionClosed):
    """The peer is not speaking ACP: before answering `initialize` it wrote only lines
    that are not JSON-RPC (a usage text, `yes`), past `Connection`'s limit
    (100 lines or 4 MiB: `STRAY_LIMIT_LINES`, `STRAY_LIMIT_BYTES`). The client stopped reading
    it at once: `initialize` got no answer.

    Attributes:
        first_line: The first line it wrote, cut to 200 characters.
        lines: How many such lines had arrived.
        stdout_tail: The last of them (see `ConnectionClosed`).
    """

    def __init__(
        self,
        message: str = "the peer is not an ACP agent",
        *,
        first_line: str = "",
        lines: int = 0,
        **details: Any,
    ) -> None:
        super().__init__(message, **details)
        self.first_line = first_line
        self.lines = lines

    def __reduce__(self) -> tuple[type[ConnectionClosed], tuple[str], dict[str, Any]]:
        reduced = super().__reduce__()
        return (
            reduced[0],
            reduced[1],
            {**reduced[2], "first_line": self.first_line, "lines": self.lines},
        )


def _signal_name(number: int) -> str:
    try:
        return _signal.Signals(number).name
    except ValueError:
        return ""


class RequestTimeout(ACPError, TimeoutError):
    """No answer came within the time the caller allowed. Also a builtin `TimeoutError`.

    Attributes:
        method: The wire method of the call that timed out (None when unknown).
        stdout_tail: For `initialize`: the lines the agent wrote that were not JSON-RPC
            (a usage message), newline-separated; "" when there were none.
    """

    def __init__(
        self,
        message: str = "the request timed out",
        *,
        method: str | None = None,
        stdout_tail: str = "",
    ) -> None:
        super().__init__(message)  # one argument: OSError reads two as (errno, strerror)
        self.method = method
        self.stdout_tail = stdout_tail

    def __reduce__(self) -> tuple[type[RequestTimeout], tuple[str], dict[str, Any]]:
        return (type(self), (str(self.args[0]) if self.args else "",), dict(self.__dict__))


class ErrorCode(enum.IntEnum):
    """The JSON-RPC and ACP error codes the schema names."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    REQUEST_CANCELLED = -32800
    AUTH_REQUIRED = -32000
    RESOURCE_NOT_FOUND = -32002


class RequestError(ACPError):
    """A JSON-RPC error response: received from the peer, or to send to it.

    Handlers raise it to answer a request with a specific error; a call whose peer
    answered with an error raises it to the caller.

    Attributes:
        code: The JSON-RPC error code (see `ErrorCode`).
        message: The peer-facing message.
        data: Optional structured details (any JSON value).
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        """`Method not found (-32601): {"method":"foo"}`; `data` cut to 200 characters."""
        text = f"{self.message} ({self.code})"
        if self.data is None:
            return text
        return f"{text}: {_compact(self.data)}"

    def __reduce__(self) -> tuple[type[RequestError], tuple[int, str, Any]]:
        return (type(self), (self.code, self.message, self.data))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RequestError):
            return NotImplemented
        return (self.code, self.message, self.data) == (other.code, other.message, other.data)

    def __hash__(self) -> int:
        return hash((self.code, self.message))

    def to_wire(self) -> dict[str, Any]:
        """The JSON-RPC `error` object: `code`, `message` and `data` if any."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_wire(cls, error: Mapping[str, Any]) -> RequestError:
        """Build from a JSON-RPC error object (already checked to have int code, str message)."""
        return cls(error["code"], error["message"], error.get("data"))

    @classmethod
    def parse_error(cls, data: Any = None) -> RequestError:
        """-32700: the message was not valid JSON."""
        return cls(ErrorCode.PARSE_ERROR, "Parse error", data)

    @classmethod
    def invalid_request(cls, data: Any = None) -> RequestError:
        """-32600: not a valid JSON-RPC request."""
        return cls(ErrorCode.INVALID_REQUEST, "Invalid request", data)

    @classmethod
    def method_not_found(cls, method: str | None = None) -> RequestError:
        """-32601: no such method here (`data` names it)."""
        return cls(
            ErrorCode.METHOD_NOT_FOUND, "Method not found", {"method": method} if method else None
        )

    @classmethod
    def invalid_params(cls, data: Any = None) -> RequestError:
        """-32602: the params are invalid for the method."""
        return cls(ErrorCode.INVALID_PARAMS, "Invalid params", data)

    @classmethod
    def internal_error(cls, data: Any = None) -> RequestError:
        """-32603: the handler failed."""
        return cls(ErrorCode.INTERNAL_ERROR, "Internal error", data)

    @classmethod
    def request_cancelled(cls, data: Any = None) -> RequestError:
        """-32800: the request was cancelled (`$/cancel_request`)."""
        return cls(ErrorCode.REQUEST_CANCELLED, "Request cancelled", data)

    @classmethod
    def auth_required(cls, data: Any = None) -> RequestError:
        """-32000: the agent needs `authenticate` first."""
        return cls(ErrorCode.AUTH_REQUIRED, "Authentication required", data)

    @classmethod
    def resource_not_found(cls, uri: str | None = None) -> RequestError:
        """-32002: a resource (a file, a session) does not exist (`data` names its URI)."""
        return cls(
            ErrorCode.RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri} if uri else None
        )


_DATA_LIMIT = 200


def _compact(data: Any) -> str:
    """`data` as compact JSON (its repr when it is not JSON), at most 200 characters."""
    try:
        text = orjson.dumps(data).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = repr(data)
    if len(text) > _DATA_LIMIT:
        text = text[: _DATA_LIMIT - 1] + "\u2026"
    return text
