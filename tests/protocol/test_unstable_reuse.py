"""`acp_sdk.unstable` shares the stable classes the unstable schema leaves unchanged.

The generator emits a definition of `schema.unstable.json` only when it differs from the
stable one, directly or through a type it holds (`acp_sdk/_codegen/reuse.py`). These tests
derive the same split again from the raw JSON of the two schemas, and check that the
namespace is still complete and every unstable definition still round-trips.
"""

from __future__ import annotations

import functools
import typing
from typing import Any

import attrs
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acp_sdk
from acp_sdk import schema, unstable
from acp_sdk._codegen import ir
from acp_sdk.protocol._codec import get_converter
from acp_sdk.protocol._generated import codec, unstable_codec, unstable_models
from acp_sdk.protocol._model_support import UnknownVariant
from tests.schema_strategies import valid
from tests.schema_tools import raw_schema, schema_errors
from tests.spec_examples import EXTENSION, examples

UNSTABLE_DEFS = sorted(set(raw_schema(unstable=True)["$defs"]) - set(ir.ENVELOPE_DEFS))


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"].rsplit("/", 1)[1]} if "$ref" in node else set()
        return found.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def _published_links(node: Any) -> Any:
    """The JSON with the unstable schema's links to the draft docs read as the stable
    schema's links to the published pages (`/protocol/v1/draft/x` is `/protocol/v1/x`)."""
    text = orjson.dumps(node).decode()
    return orjson.loads(text.replace("/protocol/v1/draft/", "/protocol/v1/"))


@functools.cache
def _unchanged() -> frozenset[str]:
    """$defs whose raw JSON is the same in both schemas (doc links aside), and so is every
    $def they reach."""
    stable_defs = _published_links(raw_schema()["$defs"])
    unstable_defs = _published_links(raw_schema(unstable=True)["$defs"])
    same = {n for n in UNSTABLE_DEFS if stable_defs.get(n) == unstable_defs[n]}
    while True:
        dropped = {n for n in same if not _refs(unstable_defs[n]) <= same}
        if not dropped:
            return frozenset(same)
        same -= dropped


def test_every_unstable_def_is_exposed() -> None:
    missing = [n for n in UNSTABLE_DEFS if n not in unstable.__all__ or not hasattr(unstable, n)]
    assert missing == []
    # The arms and unknown-arm classes the generator adds are exposed too.
    assert set(unstable_models.__all__) <= set(unstable.__all__)


def test_unchanged_defs_are_the_stable_objects() -> None:
    unchanged = _unchanged()
    assert len(unchanged) > 100  # most of the stable schema is left as it is
    not_shared = [n for n in sorted(unchanged) if getattr(unstable, n) is not getattr(schema, n)]
    assert not_shared == []
    assert unstable.TextContent is schema.TextContent
    assert unstable.ContentBlock is schema.ContentBlock  # a union alias, shared whole


def test_changed_defs_are_classes_of_their_own() -> None:
    changed = [n for n in UNSTABLE_DEFS if n not in _unchanged() and hasattr(schema, n)]
    assert changed  # the pinned unstable schema changes some stable definitions
    shared = [n for n in changed if getattr(unstable, n) is getattr(schema, n)]
    assert shared == []


def _fields(cls: type) -> dict[str, str | None]:
    return {f.name: f.metadata.get("wire") for f in attrs.fields(cls)}


def test_a_changed_class_carries_its_unstable_field() -> None:
    stable_cls: object = schema.NewSessionRequest
    assert unstable.NewSessionRequest is not stable_cls
    assert _fields(unstable.NewSessionRequest).get("system_prompt") == "systemPrompt"
    assert "system_prompt" not in _fields(schema.NewSessionRequest)
    prompt = {"mode": "append", "content": [{"type": "text", "text": "Be brief."}]}
    wire = {"cwd": "/w", "mcpServers": [], "systemPrompt": prompt}
    decoded = acp_sdk.decode(wire, unstable.NewSessionRequest)
    assert type(decoded) is unstable.NewSessionRequest
    assert isinstance(decoded.system_prompt, unstable.SystemPrompt)
    assert decoded.system_prompt.mode == "append"
    assert orjson.loads(acp_sdk.encode(decoded)) == wire
    # The stable class keeps the field it does not know as an extra.
    assert acp_sdk.decode(wire, schema.NewSessionRequest).extra == {"systemPrompt": prompt}


def test_a_class_holding_a_changed_type_is_re_emitted() -> None:
    # SessionNotification's own fields are unchanged; its `update` union gained arms.
    stable_cls: object = schema.SessionNotification
    assert unstable.SessionNotification is not stable_cls
    assert _fields(unstable.SessionNotification) == _fields(schema.SessionNotification)
    assert "SessionNotification" not in _unchanged()
    chunk = {
        "sessionUpdate": "session_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": "hi"},
    }
    wire = {"sessionId": "s1", "update": chunk}
    decoded = acp_sdk.decode(wire, unstable.SessionNotification)
    assert type(decoded.update) is unstable.SessionMessageChunk
    assert orjson.loads(acp_sdk.encode(decoded)) == wire
    assert type(acp_sdk.decode(wire, schema.SessionNotification).update) is (
        schema.UnknownSessionUpdate
    )
    # An arm the two schemas share decodes to the stable class inside the unstable one.
    for shared in (
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
        {"sessionUpdate": "notice", "severity": "info", "title": "Heads up"},
    ):
        decoded = acp_sdk.decode(
            {"sessionId": "s1", "update": shared}, unstable.SessionNotification
        )
        assert type(decoded.update) is type(acp_sdk.decode(shared, schema.SessionUpdate))
    assert unstable.AgentMessageChunk in typing.get_args(unstable.SessionUpdate)
    assert unstable.Notice is schema.Notice


def test_shared_definitions_use_the_stable_codec_functions() -> None:
    for name in sorted(_unchanged()):
        value = getattr(unstable, name)
        if value in codec.DECODERS:
            assert unstable_codec.DECODERS[value] is codec.DECODERS[value], name
        if isinstance(value, type) and value in codec.ENCODERS:
            assert unstable_codec.ENCODERS[value] is codec.ENCODERS[value], name
    # Every unstable class has an encoder in the unstable table (union fields use it).
    classes = [getattr(unstable, n) for n in unstable_models.__all__]
    missing = [c for c in classes if attrs.has(c) and c not in unstable_codec.ENCODERS]
    assert missing == []


def _schema_name(type_: Any) -> str:
    return next(n for n in schema.__all__ if getattr(schema, n) is type_)


# The prose spec's examples, typed by the stable table; the few the schema itself rejects
# are checked in tests of the stable codec.
SPEC_EXAMPLES = [
    e
    for e in examples()
    if e.type_ is not EXTENSION
    and e.payload is not None
    and not schema_errors(e.payload, _schema_name(e.type_), unstable=True)
]


@pytest.mark.parametrize("example", SPEC_EXAMPLES, ids=lambda e: e.where)
def test_spec_examples_round_trip_through_the_unstable_types(example: Any) -> None:
    type_ = getattr(unstable, _schema_name(example.type_))
    decoded = acp_sdk.decode(example.payload, type_)
    assert orjson.loads(acp_sdk.encode(decoded)) == example.payload


def _round_trips(name: str, value: Any) -> None:
    type_ = getattr(unstable, name)
    decoded: Any = acp_sdk.decode(orjson.dumps(value), type_)  # JSON text: a str stays a str
    if isinstance(decoded, (schema.WireModel, UnknownVariant)):
        # A $def that is a tagged arm of a union writes its tag, which its own JSON may omit.
        cls: Any = type(decoded)
        tag = {cls.TAG_PROPERTY: cls.TAG} if hasattr(cls, "TAG") else {}
        assert orjson.loads(acp_sdk.encode(decoded)) == {**tag, **value}
    else:  # a scalar alias, or a list of models (SessionConfigSelectOptions)
        assert get_converter().unstructure(decoded) == value


@pytest.mark.parametrize("name", UNSTABLE_DEFS)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_unstable_def_round_trips(name: str, data: st.DataObject) -> None:
    _round_trips(name, data.draw(valid(name, unstable=True)))


def test_the_generator_re_emits_whatever_reaches_a_changed_type() -> None:
    from acp_sdk._codegen import reuse

    def model(inner: dict[str, Any]) -> ir.Model:
        obj = {"type": "object", "properties": {"x": {"type": "string"}}}
        return ir.parse(
            {
                "$defs": {
                    "Inner": inner,
                    "Outer": {"type": "object", "properties": {"i": {"$ref": "#/$defs/Inner"}}},
                    "Deep": {"type": "object", "properties": {"o": {"$ref": "#/$defs/Outer"}}},
                    "Alone": obj,
                }
            }
        )

    inner = {"type": "object", "properties": {"a": {"type": "string"}}}
    wider = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}}}
    assert reuse.shared_names(model(inner), model(inner)) == {"Inner", "Outer", "Deep", "Alone"}
    assert reuse.shared_names(model(inner), model(wider)) == {"Alone"}
