"""What every generated model shares: the base class, the "unset" sentinel, empty constants.

Theory of operation: a model instance is what the user sees (snake_case fields, absent
fields at their defaults). Two private facts ride along so the wire form round-trips
exactly: `extra` (keys this SDK does not know, re-emitted in place) and `_explicit` (wire
names that were present although their value equals the field's default, such as an
explicit `null`; and `"<wire>:null"` for an `x-deserialize-default-on-null` field that
was `null`, which decoded as its default `[]` and re-encodes as `null`). `_explicit`
takes no part in equality: `{"x": null}` and `{}` mean the same thing wherever the schema
does not say otherwise.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, Literal

import attrs

EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})
NO_EXPLICIT: Final[frozenset[str]] = frozenset()
OBJECT_SETATTR: Final[Callable[[object, str, Any], None]] = object.__setattr__
"""What the generated `__init__` methods store fields with (the classes are frozen)."""

_repr_context = threading.local()


def model_repr(self: Any) -> str:
    """`__repr__` of every generated model: attrs' format, `Name(field=value, ...)`.

    The fields are those with `repr=True`, in attrs order; an object met again while its
    own repr is being built shows as `...` (attrs' recursion guard).
    """
    try:
        active: set[int] = _repr_context.active
    except AttributeError:
        active = _repr_context.active = set[int]()
    key = id(self)
    if key in active:
        return "..."
    active.add(key)
    try:
        cls = self.__class__
        name = cls.__qualname__.rsplit(">.", 1)[-1]
        parts = ", ".join(
            f"{a.name}={getattr(self, a.name)!r}" for a in cls.__attrs_attrs__ if a.repr
        )
        return f"{name}({parts})"
    finally:
        active.discard(key)


class UnsetType(enum.Enum):
    """Type of `UNSET`: a field the wire did not carry, where `null` means something else."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> Literal[False]:
        return False


UNSET: Final = UnsetType.UNSET


@attrs.frozen(kw_only=True, order=False)
class WireModel:
    """Base of every generated ACP model class.

    Attributes:
        extra: Fields this SDK does not know (from a newer peer, or a vendor), keyed by
            wire name. They are re-emitted unchanged when the object is encoded.
    """

    extra: Mapping[str, Any] = attrs.field(
        default=EMPTY, repr=False, hash=False, metadata={"wire": None}
    )
    _explicit: frozenset[str] = attrs.field(
        init=False, default=NO_EXPLICIT, eq=False, repr=False, hash=False, metadata={"wire": None}
    )


@attrs.frozen(kw_only=True, order=False)
class UnknownVariant:
    """Base of the generated `Unknown*` classes: a member of an open union (a session
    update, a content block, ...) that this SDK does not know, kept whole in `raw`."""
