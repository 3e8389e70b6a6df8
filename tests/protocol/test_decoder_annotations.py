"""The schema's decoder annotations, field by field, read from the raw pinned schemas.

Every property of both schemas is walked here without the generator: its annotations
(`x-deserialize-default-on-null`, `-default-on-error`, `-skip-invalid-items`) say how the
generated decoder must treat `null`, a wrong-typed value and an invalid list item. So the
next schema bump tests itself: a field that gains or loses an annotation is checked by
the rule it now has.

- default-on-null: `null` decodes as the default (`[]`, `{}`) and re-encodes as `null`
  (lossless); an invalid item, or a value of the wrong type, is a `DecodeError` with its
  path; absent is the default when optional, an error when required.
- default-on-error: a wrong-typed value decodes as the default, invalid items of a
  skip-invalid-items list are dropped.
- neither: a wrong-typed value is a `DecodeError` at the field.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import attrs
import orjson
import pytest

import acp_sdk
from acp_sdk.protocol._generated import models, unstable_models
from acp_sdk.protocol._model_support import UNSET
from tests.schema_minimal import minimal
from tests.schema_tools import raw_schema, schema_errors

ANNOTATION = "x-deserialize-"


class Prop(NamedTuple):
    unstable: bool
    owner: str  # the `$defs` name, which is the model class's name
    wire: str
    node: Mapping[str, Any]
    required: bool

    @property
    def annotations(self) -> frozenset[str]:
        return frozenset(
            k[len(ANNOTATION) :] for k, v in self.node.items() if k.startswith(ANNOTATION) and v
        )

    @property
    def id(self) -> str:
        return f"{'unstable.' if self.unstable else ''}{self.owner}.{self.wire}"


def _defs(unstable: bool) -> Mapping[str, Any]:
    return raw_schema(unstable)["$defs"]  # type: ignore[no-any-return]


def _props(unstable: bool) -> Iterator[Prop]:
    """The top-level properties of every `$def` that is a model class of its own."""
    module = unstable_models if unstable else models
    for owner, node in _defs(unstable).items():
        cls = getattr(module, owner, None)
        if not (isinstance(cls, type) and attrs.has(cls)):
            continue  # a union, an alias, a JSON-RPC envelope
        required = set(node.get("required", ()))
        for wire, prop in node.get("properties", {}).items():
            if any(f.metadata.get("wire") == wire for f in attrs.fields(cls)):
                yield Prop(unstable, owner, wire, prop, wire in required)


ALL = [p for flag in (False, True) for p in _props(flag)]
ON_NULL = [p for p in ALL if "default-on-null" in p.annotations]
ON_ERROR = [p for p in ALL if "default-on-error" in p.annotations]
STRICT = [p for p in ALL if not p.annotations & {"default-on-error", "default-on-null"}]


def test_the_walk_found_what_the_schema_announces() -> None:
    # latest/README.md: "x-deserialize-default-on-null (14 request fields ...)".
    assert sorted(p.id for p in ON_NULL if not p.unstable) == sorted(
        [
            "NewSessionRequest.mcpServers",
            "NewSessionRequest.additionalDirectories",
            "LoadSessionRequest.mcpServers",
            "LoadSessionRequest.additionalDirectories",
            "ResumeSessionRequest.mcpServers",
            "ResumeSessionRequest.additionalDirectories",
            "CreateTerminalRequest.args",
            "CreateTerminalRequest.env",
            "AuthMethodTerminal.args",
            "AuthMethodTerminal.env",
            "McpServerHttp.headers",
            "McpServerSse.headers",
            "McpServerStdio.args",
            "McpServerStdio.env",
        ]
    )
    assert len(ON_ERROR) > 500
    assert len(STRICT) > 300
    # No field has both rules (the schema replaced one by the other on these fields).
    assert not [p.id for p in ON_NULL if "default-on-error" in p.annotations]
    known = {"default-on-null", "default-on-error", "skip-invalid-items"}
    assert not [p.id for p in ALL if p.annotations - known]


# ------------------------------------------------------------------ values from the schema


@functools.cache
def base_of(owner: str, unstable: bool) -> dict[str, Any]:
    value = minimal(_defs(unstable)[owner], unstable)
    assert not schema_errors(value, owner, unstable), (owner, value)
    return value  # type: ignore[no-any-return]


def cls_of(prop: Prop) -> type:
    return getattr(unstable_models if prop.unstable else models, prop.owner)  # type: ignore[no-any-return]


def attribute(prop: Prop) -> str:
    names = (str(f.name) for f in attrs.fields(cls_of(prop)) if f.metadata.get("wire") == prop.wire)
    return next(names)


def _item_schema(prop: Prop) -> Mapping[str, Any] | None:
    node = prop.node
    if "items" in node:
        return node["items"]  # type: ignore[no-any-return]
    extra = node.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def wrong_for(node: Mapping[str, Any], unstable: bool) -> Any:
    """A JSON value the node's schema rejects (None when it accepts any value)."""
    validator = _validator(orjson.dumps(node), unstable)
    for candidate in ("x", 7, [[[7]]], {"k": [7]}):
        if not validator.is_valid(candidate):
            return candidate
    return None


@functools.cache
def _validator(node: bytes, unstable: bool) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator({**orjson.loads(node), "$defs": _defs(unstable)})


def _decode(prop: Prop, wire_value: Any) -> Any:
    return acp_sdk.decode(
        {**base_of(prop.owner, prop.unstable), prop.wire: wire_value}, cls_of(prop)
    )


# ------------------------------------------------------------------ default-on-null


@pytest.mark.parametrize("prop", ON_NULL, ids=lambda p: p.id)
def test_null_decodes_as_the_default_and_re_encodes_as_null(prop: Prop) -> None:
    decoded = _decode(prop, None)
    value = getattr(decoded, attribute(prop))
    assert value == ([] if "items" in prop.node else {})
    assert type(value) in (list, dict)  # a decoded value is always plain JSON
    encoded = orjson.loads(acp_sdk.encode(decoded))
    assert encoded[prop.wire] is None  # lossless: the wire said null
    assert acp_sdk.decode(encoded, cls_of(prop)) == decoded
    # What `null` decodes to equals the model built with the default.
    empty = _decode(prop, [] if "items" in prop.node else {})
    assert empty == decoded
    assert orjson.loads(acp_sdk.encode(empty))[prop.wire] in ([], {})


@pytest.mark.parametrize("prop", ON_NULL, ids=lambda p: p.id)
def test_an_invalid_item_is_a_decode_error_with_its_path(prop: Prop) -> None:
    item = _item_schema(prop)
    assert item is not None
    bad = wrong_for(item, prop.unstable)
    assert bad is not None
    value: Any = [bad] if "items" in prop.node else {"k": bad}
    with pytest.raises(acp_sdk.DecodeError) as caught:
        _decode(prop, value)
    expected = f"{prop.wire}[0]" if "items" in prop.node else f"{prop.wire}.k"
    assert caught.value.path_text.startswith(expected), caught.value.path_text
    # A valid item next to it does not help: the list is not filtered any more.
    good = minimal(item, prop.unstable)
    with pytest.raises(acp_sdk.DecodeError):
        _decode(prop, [good, bad] if "items" in prop.node else {"a": good, "k": bad})
    assert getattr(_decode(prop, [good] if "items" in prop.node else {"a": good}), attribute(prop))


@pytest.mark.parametrize("prop", ON_NULL, ids=lambda p: p.id)
def test_a_wrong_type_is_a_decode_error_and_absence_follows_required(prop: Prop) -> None:
    with pytest.raises(acp_sdk.DecodeError) as caught:
        _decode(prop, "x")
    assert caught.value.path_text == prop.wire
    without = {k: v for k, v in base_of(prop.owner, prop.unstable).items() if k != prop.wire}
    if prop.required:
        with pytest.raises(acp_sdk.DecodeError) as missing:
            acp_sdk.decode(without, cls_of(prop))
        assert missing.value.path_text == prop.wire
    else:
        decoded: Any = acp_sdk.decode(without, cls_of(prop))
        assert not getattr(decoded, attribute(prop))
        assert prop.wire not in orjson.loads(acp_sdk.encode(decoded))


# ------------------------------------------------------------------ the other fields

STRICT_CHECKED = [p for p in STRICT if wrong_for(p.node, p.unstable) is not None]
ON_ERROR_CHECKED = [p for p in ON_ERROR if wrong_for(p.node, p.unstable) is not None]


def test_the_other_walks_cover_the_dropped_annotations() -> None:
    # The fields the new schema no longer marks default-on-error are strict now.
    dropped = {
        "CreateTerminalRequest.cwd",
        "CreateTerminalRequest.outputByteLimit",
        "ReadTextFileRequest.line",
        "ReadTextFileRequest.limit",
    }
    assert dropped <= {p.id for p in STRICT_CHECKED}
    assert len(STRICT_CHECKED) > 300
    assert len(ON_ERROR_CHECKED) > 500


@pytest.mark.parametrize("prop", STRICT_CHECKED, ids=lambda p: p.id)
def test_a_field_without_leniency_rejects_a_wrong_type(prop: Prop) -> None:
    with pytest.raises(acp_sdk.DecodeError) as caught:
        _decode(prop, wrong_for(prop.node, prop.unstable))
    assert caught.value.path_text.startswith(prop.wire), caught.value.path_text


@pytest.mark.parametrize("prop", ON_ERROR_CHECKED, ids=lambda p: p.id)
def test_a_default_on_error_field_takes_its_default(prop: Prop) -> None:
    decoded = _decode(prop, wrong_for(prop.node, prop.unstable))  # no DecodeError
    without = {k: v for k, v in base_of(prop.owner, prop.unstable).items() if k != prop.wire}
    if prop.required:
        default: Any = [] if "items" in prop.node else None
        assert getattr(decoded, attribute(prop)) in (default, {}, UNSET)
    else:
        expected = getattr(acp_sdk.decode(without, cls_of(prop)), attribute(prop))
        assert getattr(decoded, attribute(prop)) == expected
    assert acp_sdk.decode(acp_sdk.encode(decoded), cls_of(prop)) == decoded


SKIPPING = [p for p in ON_ERROR if "skip-invalid-items" in p.annotations]


@pytest.mark.parametrize("prop", SKIPPING, ids=lambda p: p.id)
def test_a_skip_invalid_items_list_drops_only_the_bad_items(prop: Prop) -> None:
    item = _item_schema(prop)
    assert item is not None
    good, bad = minimal(item, prop.unstable), wrong_for(item, prop.unstable)
    assert bad is not None
    decoded = _decode(prop, [bad, good, bad])
    kept = getattr(decoded, attribute(prop))
    assert len(kept) == 1
    assert kept == getattr(_decode(prop, [good]), attribute(prop))
