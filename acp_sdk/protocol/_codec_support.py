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

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Final, NoReturn, TypeVar

from acp_sdk.protocol._errors import DecodeError, EncodeError

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


def add_extras(out: dict[str, Any], extra: Any) -> None:
    """Write the unknown fields a model carries (`extra`: typed, but set by the user)."""
    if not isinstance(extra, Mapping):
        raise EncodeError(f"extra must be a mapping of wire names, got {e_describe(extra)}")
    # A known field always wins over an unknown one of the same name.
    for key, value in extra.items():
        if not isinstance(key, str):
            raise EncodeError(f"extra: expected string keys, got {e_describe(key)}")
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


# ----------------------------------------------------------------------------- encoding
#
# The generated encoders test each value inline (`type(v) is str`) and call these only
# when that test fails: they accept what the annotation allows beyond the exact JSON types
# (a `str` subclass such as a `StrEnum` member, any `Sequence` for a list, any `Mapping`
# for an object) and raise `EncodeError` (without a path: the caller adds it) otherwise.

_Encode = Callable[[Any], Any]


def e_describe(value: object) -> str:
    """What a value is, in the words of an encode error: its JSON type or its class."""
    name = _JSON_TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    if type(value) is tuple:
        return "an array"
    if hasattr(type(value), "__attrs_attrs__"):
        return type(value).__name__  # a model (of another class than the field's)
    return f"a Python {type(value).__name__}"


def e_wrong(expected: str, value: object) -> EncodeError:
    return EncodeError(f"expected {expected}, got {e_describe(value)}")


def refuse(expected: str, value: object) -> NoReturn:
    """A field's value is not of its model class or union: `expected` names it."""
    raise e_wrong(expected, value)


def refuser(expected: str) -> _Encode:
    """The fallback of a union's encoder table: refuses whatever is not one of its arms."""

    def refuse_member(value: Any) -> Any:
        raise e_wrong(expected, value)

    return refuse_member


def encoders_by_class(table: Mapping[type, _Encode]) -> Callable[[type, _Encode], _Encode]:
    """A union's arm encoders, looked up by the member's exact class (`.get`)."""
    return dict(table).get


def checked(encode: Callable[..., Any], value: Any, segment: str, *args: Any) -> Any:
    """`encode(value, *args)`, an error located at the field `segment`."""
    try:
        return encode(value, *args)
    except EncodeError as error:
        raise error.at(segment) from None


def e_any(value: Any) -> Any:
    return value


def e_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise e_wrong("a string", value)


def e_key(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise EncodeError(f"expected string keys, got {e_describe(value)}")


def e_bool(value: Any) -> bool:
    if type(value) is bool:
        return value
    raise e_wrong("a boolean", value)


def e_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise e_wrong("a number", value)
    if isinstance(value, int):
        if -(2**63) <= value < 2**64:
            return value
        raise EncodeError("integer out of range for a JSON number (64 bits)")
    if value - value == 0:
        return value
    raise EncodeError("expected a finite number, got NaN or an infinity")


def e_object(value: Any) -> dict[str, Any]:
    if type(value) is dict:
        return value
    if isinstance(value, Mapping):
        return {e_key(key): item for key, item in value.items()}
    raise e_wrong("an object", value)


def _int_encoder(fmt: str) -> Callable[[Any], int]:
    low, high = INT_LIMITS[fmt]

    def encode_int(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise e_wrong("an integer", value)
        if not low <= value <= high:
            raise EncodeError(f"integer out of range for {fmt} ({low}..{high})")
        return value

    return encode_int


E_INT: Final[Mapping[str, Callable[[Any], int]]] = {fmt: _int_encoder(fmt) for fmt in INT_LIMITS}


def literal_check(allowed: Collection[str]) -> _Encode:
    """The checker of a closed enum: a string among `allowed`."""
    expected = ", ".join(sorted(allowed))

    def encode_literal(value: Any) -> Any:
        if not isinstance(value, str):
            raise e_wrong("a string", value)
        if value not in allowed:
            raise EncodeError(f"unknown value; expected one of {expected}")
        return value

    return encode_literal


def const_check(constant: str) -> _Encode:
    def encode_const(value: Any) -> Any:
        if isinstance(value, str) and value == constant:
            return value
        raise EncodeError(f"expected the string {constant!r}, got {e_describe(value)}")

    return encode_const


def _sequence(value: Any) -> Sequence[Any]:
    if type(value) is list or type(value) is tuple:
        return value
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        return value
    raise e_wrong("an array", value)


def e_list(value: Any, item: _Encode) -> list[Any]:
    out: list[Any] = []
    for index, element in enumerate(_sequence(value)):
        try:
            out.append(item(element))
        except EncodeError as error:
            raise error.at(index) from None
    return out


def list_of(item: _Encode) -> _Encode:
    def encode_list(value: Any) -> list[Any]:
        return e_list(value, item)

    return encode_list


def e_map(value: Any, item: _Encode) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise e_wrong("an object", value)
    out: dict[str, Any] = {}
    for key, element in value.items():
        e_key(key)
        try:
            out[key] = item(element)
        except EncodeError as error:
            raise error.at(key) from None
    return out


def map_of(item: _Encode) -> _Encode:
    def encode_map(value: Any) -> dict[str, Any]:
        return e_map(value, item)

    return encode_map


def first_option(value: Any, options: Sequence[_Encode], what: str) -> Any:
    """An alias of several shapes: the first option that encodes wins. When none does,
    the error that reached deepest (an element of the right container) is the one shown."""
    errors: list[EncodeError] = []
    for option in options:
        try:
            return option(value)
        except EncodeError as error:
            errors.append(error)
    deepest = max(errors, key=lambda error: len(error.path))
    if deepest.path:
        raise deepest
    raise EncodeError(f"matches none of the alternatives of {what}, got {e_describe(value)}")
