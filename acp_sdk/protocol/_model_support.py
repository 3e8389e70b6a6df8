"""What every generated model shares: the base class, the "unset" sentinel, empty constants.

Theory of operation: a model instance is what the user sees (snake_case fields, absent
fields at their defaults). Two more facts ride along so the wire form round-trips
exactly: `extra` (keys this SDK does not know, re-emitted in place; a public attrs field,
so `attrs.evolve` keeps it) and `_explicit` (wire names that were present although their
value equals the field's default, such as an explicit `null`; and `"<wire>:null"` for an
`x-deserialize-default-on-null` field that was `null`, which decoded as its default `[]`
and re-encodes as `null`). `_explicit` is a private slot, not an attrs field:
`attrs.fields`, `attrs.asdict` and `attrs.evolve` see exactly the constructor's keywords.
It takes no part in equality: `{"x": null}` and `{}` mean the same thing wherever the
schema does not say otherwise.

Copying and pickling: the shared empty constants `EMPTY` and `NO_EXPLICIT` pickle as
references to themselves and copy to themselves, so a model travels through `pickle`,
`copy.copy` and `copy.deepcopy` whole (unknown fields, explicit nulls, `null` notes and
all) and comes back on the encoder's fast paths, which recognise those constants by
identity.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Literal, NoReturn, cast

import attrs


class _EmptyMapping(dict[str, Any]):
    """The type of `EMPTY`: an empty mapping that refuses to change.

    A `dict` subclass, not a `mappingproxy`: it pickles (as a reference to `EMPTY`, so
    identity survives), orjson writes it as `{}`, and `len` and truth tests stay C calls
    on the encoder's hot path. Every mutating method raises `TypeError`.
    """

    __slots__ = ()

    def _refuse(self, *_args: object, **_kwargs: object) -> NoReturn:
        raise TypeError("this empty mapping is shared and read-only; pass a dict of your own")

    def __setitem__(self, key: str, value: Any) -> NoReturn:
        self._refuse()

    def __delitem__(self, key: str) -> NoReturn:
        self._refuse()

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        self._refuse()

    def clear(self) -> NoReturn:
        self._refuse()

    def pop(self, *args: Any) -> NoReturn:
        self._refuse()

    def popitem(self) -> NoReturn:
        self._refuse()

    def setdefault(self, *args: Any) -> NoReturn:
        self._refuse()

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse()

    def __reduce__(self) -> str:
        return "EMPTY"  # pickled as the module global: unpickles to the same object

    def __copy__(self) -> _EmptyMapping:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _EmptyMapping:
        return self


class _NoExplicit(frozenset[str]):
    """The type of `NO_EXPLICIT`: an empty frozenset that pickles as itself."""

    __slots__ = ()

    def __reduce__(self) -> str:
        return "NO_EXPLICIT"

    def __copy__(self) -> _NoExplicit:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _NoExplicit:
        return self


EMPTY: Final[Mapping[str, Any]] = _EmptyMapping()
"""The shared default of `extra` and of every optional mapping field: empty, read-only."""
NO_EXPLICIT: Final[frozenset[str]] = _NoExplicit()
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


class _ExplicitSlot:
    """Holds `_explicit` as a plain slot beneath the attrs fields (see the module doc)."""

    __slots__ = ("_explicit",)
    _explicit: frozenset[str]


def _rebuild(cls: type[WireModel], state: Mapping[str, Any], explicit: Iterable[str]) -> Any:
    """Unpickle (or copy) a model: its attrs fields by name, then `_explicit`."""
    obj: Any = object.__new__(cls)
    obj.__setstate__(state)
    OBJECT_SETATTR(obj, "_explicit", frozenset(explicit) if explicit else NO_EXPLICIT)
    return obj


@attrs.frozen(kw_only=True, order=False)
class WireModel(_ExplicitSlot):
    """Base of every generated ACP model class.

    Attributes:
        extra: Fields this SDK does not know (from a newer peer, or a vendor), keyed by
            wire name. They are re-emitted unchanged when the object is encoded.
    """

    extra: Mapping[str, Any] = attrs.field(
        default=EMPTY, repr=False, hash=False, metadata={"wire": None}
    )

    def __reduce__(self) -> tuple[Any, ...]:
        # attrs' own state (the attrs fields by name) plus the `_explicit` slot, which
        # attrs does not know about; `copy` and `deepcopy` go through here too.
        # (`object.__getstate__` exists from Python 3.11 on, typed as returning `object`.)
        state = cast("Mapping[str, Any]", self.__getstate__())  # type: ignore[attr-defined, unused-ignore]
        return (_rebuild, (self.__class__, state, self._explicit))


@attrs.frozen(kw_only=True, order=False)
class UnknownVariant:
    """Base of the generated `Unknown*` classes: a member of an open union (a session
    update, a content block, ...) that this SDK does not know, kept whole in `raw`."""
