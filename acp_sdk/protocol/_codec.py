"""`encode` and `decode`: ACP models to and from JSON bytes.

Theory of operation: orjson parses and serialises; the generated functions in
`acp_sdk.protocol._generated.codec` turn parsed JSON into models and back. Those functions are
registered as the hooks of the one cattrs `Converter` of this package, which also serves
types the generator did not produce (a user's extension params, containers of models)
with ACP's strict scalar rules. Nothing here runs at import: the generated code and the
converter load on first use, so `import acp_sdk` stays cheap.
"""

# Decoding takes JSON of any shape and narrows it by exact type checks, which pyright types
# as containers of Unknown; every value is checked before use.
# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportUnknownMemberType=false

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import orjson

from acp_sdk.protocol._errors import DecodeError, EncodeError
from acp_sdk.protocol._model_support import UnknownVariant, WireModel

if TYPE_CHECKING:
    import cattrs
    from typing_extensions import TypeForm

__all__ = ["Model", "decode", "encode", "get_converter"]

Model: TypeAlias = WireModel | UnknownVariant
"""Any generated ACP model: a `WireModel` class or an `Unknown*` union member."""

T = TypeVar("T")

JSONInput = bytes | bytearray | memoryview | str | Mapping[str, Any] | list[Any]


_Tables = tuple[Mapping[Any, Callable[[Any], Any]], Mapping[type, Callable[[Any], Any]]]


_LOADED: dict[str, Any] = {}  # filled on first use: the generated tables, the converter


def _stable_tables() -> _Tables:
    tables: _Tables | None = _LOADED.get("stable")
    if tables is None:
        from acp_sdk.protocol._generated import codec

        tables = _LOADED["stable"] = (codec.DECODERS, codec.ENCODERS)
    return tables


def _unstable_tables() -> _Tables:
    tables: _Tables | None = _LOADED.get("unstable")
    if tables is None:
        from acp_sdk.protocol._generated import unstable_codec

        tables = _LOADED["unstable"] = (unstable_codec.DECODERS, unstable_codec.ENCODERS)
    return tables


def _is_unstable(type_: Any) -> bool:
    return getattr(type_, "__module__", "") == "acp_sdk.protocol._generated.unstable_models"


def _decoder_for(type_: Any) -> Callable[[Any], Any]:
    try:
        decoders = _unstable_tables()[0] if _is_unstable(type_) else _stable_tables()[0]
        found = decoders.get(type_)
    except TypeError:  # an unhashable "type"
        found = None
    if found is not None:
        return found
    converter = get_converter()
    return lambda value: converter.structure(value, type_)


def _parse(data: Any) -> Any:
    if isinstance(data, (bytes, bytearray, memoryview, str)):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as error:
            raise DecodeError(f"invalid JSON at byte {error.pos}") from None
    if isinstance(data, Mapping) and type(data) is not dict:
        return dict(data)
    return data


_DECODER_CACHE: dict[Any, Callable[[Any], Any]] = {}


def decode(data: JSONInput, type_: TypeForm[T]) -> T:
    """Decode JSON into an ACP model.

    Args:
        data: JSON text (bytes or str) or an already parsed JSON object.
        type_: A model class (`acp_sdk.schema.PromptRequest`) or union alias
            (`acp_sdk.schema.SessionUpdate`), or any attrs class or container cattrs
            can build, such as an extension method's params class.

    Returns:
        The decoded, immutable model, typed as `type_` (a union alias gives the union:
        `decode(raw, SessionUpdate)` is an `AgentMessageChunk | ToolCall | ...`).

    Raises:
        DecodeError: For any input that is not valid JSON of that type, with the JSON
            path of the offending field. Nothing else escapes, whatever the input.
    """
    try:
        decoder = _DECODER_CACHE.get(type_)
        if decoder is None:
            decoder = _decoder_for(type_)
            _DECODER_CACHE[type_] = decoder
        if type(data) is dict:  # already parsed (the connection decodes params so)
            parsed_already: T = decoder(data)
            return parsed_already
        if type(data) is bytes or type(data) is str:
            try:
                parsed = orjson.loads(data)
            except orjson.JSONDecodeError as error:
                raise DecodeError(f"invalid JSON at byte {error.pos}") from None
        else:
            parsed = _parse(data)
        decoded: T = decoder(parsed)  # the decoder registered for (or built from) type_
        return decoded
    except DecodeError:
        raise
    except RecursionError:
        raise DecodeError("value is nested too deeply") from None
    except Exception as error:  # the contract: only DecodeError escapes
        raise _from_cattrs(error) from None


def _from_cattrs(error: Exception) -> DecodeError:
    import cattrs

    if isinstance(error, (cattrs.BaseValidationError, cattrs.StructureHandlerNotFoundError)):
        messages = (
            cattrs.transform_error(error) if isinstance(error, cattrs.BaseValidationError) else []
        )
        # transform_error renders "message @ $.path"; keep only our own wording.
        text = messages[0] if messages else str(error)
        return DecodeError(f"does not decode: {text.split(' @ ')[0]}")
    if isinstance(error, DecodeError):
        return error
    return DecodeError(f"does not decode ({type(error).__name__})")


def encode(obj: Model) -> bytes:
    """Encode an ACP model as compact JSON, with no newline.

    Only ACP models type-check here. Your own attrs classes (an extension method's
    params) are encoded by the connection through their row; to serialise one yourself,
    use `orjson.dumps(get_converter().unstructure(value))`.

    Raises:
        EncodeError: A field holds a value of the wrong JSON type for the schema (a
            number for a string, a value outside a closed enum, a non-list for a list, a
            model of the wrong class); `path_text` says which (`prompt[2].text`). Or the
            object is not an ACP model and cattrs cannot serialise it, or it holds a value
            JSON cannot represent (in `meta`, `extra`, raw fields).
    """
    try:
        encoder = _ENCODER_CACHE.get(type(obj))
        if encoder is None:
            encoder = _encoder_for(type(obj))
        return orjson.dumps(encoder(obj))
    except EncodeError:
        raise
    except (TypeError, ValueError, orjson.JSONEncodeError) as error:
        raise EncodeError(f"cannot encode {type(obj).__name__}: {error}") from None


def to_json_value(obj: Any) -> Any:
    """The JSON-ready value (dicts, lists, scalars) `encode` would serialise."""
    encoder = _ENCODER_CACHE.get(type(obj))
    if encoder is None:
        encoder = _encoder_for(type(obj))
    return encoder(obj)


_ENCODER_CACHE: dict[type, Callable[[Any], Any]] = {}


def _encoder_for(cls: type) -> Callable[[Any], Any]:
    """The generated encoder of a model class, else the converter's; remembered per class."""
    encoder = (_unstable_tables() if _is_unstable(cls) else _stable_tables())[1].get(cls)
    if encoder is None:
        encoder = get_converter().unstructure
    _ENCODER_CACHE[cls] = encoder
    return encoder


def get_converter() -> cattrs.Converter:
    """The package's cattrs converter, with ACP's strict scalars and every model's hooks."""
    existing: cattrs.Converter | None = _LOADED.get("converter")
    if existing is not None:
        return existing
    import cattrs

    from acp_sdk.protocol import _codec_support as support

    converter = cattrs.Converter(forbid_extra_keys=False)
    scalars: dict[Any, Callable[[Any], Any]] = {
        str: support.d_str,
        bool: support.d_bool,
        float: support.d_float,
        int: support.D_INT["int64"],
    }
    for decoders, encoders in (scalars, {}), _stable_tables(), _unstable_tables():
        for type_, decoder in decoders.items():
            if isinstance(type_, type):
                converter.register_structure_hook(type_, _ignore_type(decoder))
            else:  # unions and Literal aliases: matched by equality, not by class
                converter.register_structure_hook_func(_equals(type_), _ignore_type(decoder))
        for cls, encoder in encoders.items():
            converter.register_unstructure_hook(cls, encoder)
    _LOADED["converter"] = converter
    return converter


def _equals(expected: Any) -> Callable[[Any], bool]:
    def matches(candidate: Any) -> bool:
        try:
            return bool(candidate == expected)
        except Exception:
            return False

    return matches


def _ignore_type(decoder: Callable[[Any], T]) -> Callable[[Any, Any], T]:
    """cattrs hooks take (value, type); ours know their type already."""

    def hook(value: Any, _type: Any) -> T:
        return decoder(value)

    return hook
