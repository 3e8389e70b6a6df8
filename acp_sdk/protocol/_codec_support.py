"""Runtime helpers the generated codec calls: strict scalar checks and container walks.

Strictness rules (the schema's, not Python's): a JSON string is only a `str` (no `123` ->
"123"), an integer is an `int` that is not a `bool` and fits its declared format, a
number is an `int` or `float` but never a `bool`. Errors name the expected JSON type and
the type received, never the value.
"""

# JSON values arrive as Any and are narrowed by exact type checks (`type(v) is dict`),
# which pyright types as dict[Unknown, Unknown]; a cast per value would cost a call on the
# per-frame path, and every value is checked before use.
# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportUnknownMemberType=false

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, TypeVar

from acp_sdk.protocol._errors import DecodeError

T = TypeVar("T")

MISSING: Final[Any] = object()

_JSON_TYPE_NAMES: Final[Mapping[type, str]] = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def describe(value: object) -> str:
    return _JSON_TYPE_NAMES.get(type(value), f"a Python {type(value).__name__}")


def wrong(expected: str, value: object) -> DecodeError:
    return DecodeError(f"expected {expected}, got {describe(value)}")


def missing(name: str) -> DecodeError:
    return DecodeError("required field is missing", (name,))


def not_object(value: object) -> DecodeError:
    return wrong("an object", value)


def bad_tag(prop: str, known: Collection[str]) -> DecodeError:
    return DecodeError(f"unknown variant; expected one of {', '.join(sorted(known))}", (prop,))


def bad_literal(value: object, allowed: Collection[str]) -> DecodeError:
    if type(value) is not str:
        return wrong("a string", value)
    return DecodeError(f"unknown value; expected one of {', '.join(sorted(allowed))}")


def note(explicit: list[str] | None, wire: str) -> list[str]:
    """Remember that `wire` was present although it decoded to the field's default."""
    if explicit is None:
        return [wire]
    explicit.append(wire)
    return explicit


def extras(data: Mapping[str, Any], known: Collection[str]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in known}


def add_extras(out: dict[str, Any], extra: Mapping[str, Any]) -> None:
    # A known field always wins over an unknown one of the same name.
    for key, value in extra.items():
        if key not in out:
            out[key] = value


def twin(cls: type) -> type[Any]:
    """A subclass of the frozen model `cls` that takes plain slot stores, for decoding.

    A generated decoder fills an instance of the twin (`w.text = v`: a specialised slot
    store, where going through the frozen class costs a descriptor call per slot), then
    makes it a `cls` with `w.__class__ = cls`. The twin adds no slot and no state, so the
    object is then exactly what `cls(...)` builds; its instances never escape the decoder.
    `__delattr__` goes back to `object`'s too, or the interpreter would keep the frozen
    `__setattr__` path for both (they share one type slot).
    """
    namespace = {
        "__slots__": (),
        "__setattr__": object.__setattr__,
        "__delattr__": object.__delattr__,
        "__module__": __name__,
        "__qualname__": f"twin[{cls.__qualname__}]",
    }
    return type(f"twin[{cls.__name__}]", (cls,), namespace)


# ----------------------------------------------------------------------------- scalars

INT_LIMITS: Final[Mapping[str, tuple[int, int]]] = {
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}


def bad_int(value: object, fmt: str) -> DecodeError:
    if type(value) is not int:
        return wrong("an integer", value)
    low, high = INT_LIMITS[fmt]
    return DecodeError(f"integer out of range for {fmt} ({low}..{high})")


def d_any(value: Any) -> Any:
    return value


def d_str(value: Any) -> str:
    if type(value) is not str:
        raise wrong("a string", value)
    return value


def d_bool(value: Any) -> bool:
    if type(value) is not bool:
        raise wrong("a boolean", value)
    return value


def d_float(value: Any) -> float:
    if type(value) is not float and type(value) is not int:
        raise wrong("a number", value)
    return value


def d_object(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise wrong("an object", value)
    return value


def int_decoder(fmt: str) -> Callable[[Any], int]:
    low, high = INT_LIMITS[fmt]

    def decode_int(value: Any) -> int:
        if type(value) is not int or not low <= value <= high:
            raise bad_int(value, fmt)
        return value

    return decode_int


D_INT: Final[Mapping[str, Callable[[Any], int]]] = {fmt: int_decoder(fmt) for fmt in INT_LIMITS}


# ----------------------------------------------------------------------------- containers


def d_list(value: Any, item: Callable[[Any], T]) -> list[T]:
    if type(value) is not list:
        raise wrong("an array", value)
    try:
        return [item(element) for element in value]
    except DecodeError:
        pass
    # Decoding is pure: decode again one by one to learn which index failed.
    for index, element in enumerate(value):
        try:
            item(element)
        except DecodeError as error:
            raise error.at(index) from None
    raise AssertionError("a decoder failed once and not again")  # pragma: no cover


def d_list_skip(value: Any, item: Callable[[Any], T]) -> list[T]:
    """The schema's `x-deserialize-skip-invalid-items`: drop elements that do not decode."""
    if type(value) is not list:
        raise wrong("an array", value)
    try:
        return [item(element) for element in value]  # the usual case: every item decodes
    except DecodeError:
        pass
    out: list[T] = []
    for element in value:
        try:
            out.append(item(element))
        except DecodeError:
            continue
    return out


def d_map(value: Any, item: Callable[[Any], T]) -> dict[str, T]:
    if type(value) is not dict:
        raise wrong("an object", value)
    out: dict[str, T] = {}
    for key, element in value.items():
        try:
            out[key] = item(element)
        except DecodeError as error:
            raise error.at(key) from None
    return out


def first_of(value: Any, decoders: tuple[Callable[[Any], Any], ...], what: str) -> Any:
    """Untagged union: the first alternative that decodes wins. With one alternative
    (`McpServer`'s stdio arm), its own error stands, with its path (`args[0]`)."""
    if len(decoders) == 1:
        return decoders[0](value)
    for decoder in decoders:
        try:
            return decoder(value)
        except DecodeError:
            continue
    raise DecodeError(f"matches none of the alternatives of {what}")
