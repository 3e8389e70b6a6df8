"""Every model survives `copy.copy`, `copy.deepcopy` and `pickle` whole (issue 28).

Property tests over the generated models of both schemas: schema-valid messages of every
decodable type, with and without unknown fields, decoded and rebuilt from their fields.
After each trip the object equals the original, every nested object keeps its unknown
fields, `_meta`, explicit nulls and the `"<wire>:null"` notes of default-on-null fields
(`_explicit`), the shared constants (`EMPTY`,
`NO_EXPLICIT`, `UNSET`) are the same objects again, and the object encodes to the same
bytes. `attrs.fields` and `attrs.asdict` show exactly the constructor's keywords.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import acp_sdk
from acp_sdk import schema as s
from acp_sdk._codegen import ir
from acp_sdk._codegen.common import all_fields
from acp_sdk.protocol._generated import codec, unstable_codec
from acp_sdk.protocol._model_support import EMPTY, NO_EXPLICIT, UNSET
from tests.schema_strategies import valid
from tests.schema_tools import def_name_of, raw_schema


def _pickler(protocol: int) -> Callable[[Any], Any]:
    def trip(value: Any) -> Any:
        return pickle.loads(pickle.dumps(value, protocol))

    return trip


COPIERS: dict[str, Callable[[Any], Any]] = {
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    **{f"pickle{p}": _pickler(p) for p in range(2, pickle.HIGHEST_PROTOCOL + 1)},
}


def _types(unstable: bool) -> list[Any]:
    """Every model class and union of models of one schema, as `decode` takes them."""
    table = unstable_codec.DECODERS if unstable else codec.DECODERS
    stable = set(codec.DECODERS)
    defs = raw_schema(unstable)["$defs"]
    parsed = ir.parse(raw_schema(unstable)).defs
    found = []
    for type_ in table:
        if unstable and type_ in stable:
            continue  # the very same object as the stable one: drawn there
        try:
            name = def_name_of(type_)
        except LookupError:
            continue
        if name in defs and isinstance(parsed.get(name), (ir.ClassDef, ir.UnionDef)):
            found.append(pytest.param(type_, unstable, id=("unstable." if unstable else "") + name))
    return found


TYPES = _types(False) + _types(True)


def test_both_schemas_are_covered() -> None:
    assert len(TYPES) > 200
    assert any(param.values[1] for param in TYPES)


def _slots(value: Any) -> list[tuple[str, str, Any]]:
    """Every (class, slot, value) of a model tree in order, `extra` and `_explicit` too."""
    found: list[tuple[str, str, Any]] = []
    if attrs.has(type(value)):
        names = [field.name for field in attrs.fields(type(value))]
        if hasattr(value, "_explicit"):
            names.append("_explicit")
        for name in names:
            child = getattr(value, name)
            found.append((type(value).__qualname__, name, child))
            found.extend(_slots(child))
    elif isinstance(value, (list, tuple)):
        for item in value:
            found.extend(_slots(item))
    elif isinstance(value, Mapping):
        for item in value.values():
            found.extend(_slots(item))
    return found


SHARED = (EMPTY, NO_EXPLICIT, UNSET)


def assert_survives(model: Any) -> None:
    encoded = acp_sdk.encode(model)
    before = _slots(model)
    for name, copier in COPIERS.items():
        again = copier(model)
        assert type(again) is type(model), name
        assert again == model, name
        assert acp_sdk.encode(again) == encoded, name
        after = _slots(again)
        assert after == before, name  # extra, _meta and _explicit of every nested object
        for (_, slot, old), (_, _, new) in zip(before, after, strict=True):
            if any(old is shared for shared in SHARED):
                assert new is old, (name, slot)  # the encoder's fast paths see them again


def _rebuilt(value: Any) -> Any:
    """The same model built with its constructor, from `attrs.asdict` (no `_explicit`)."""
    if attrs.has(type(value)):
        fields = attrs.asdict(value, recurse=False)
        return type(value)(**{k: _rebuilt(v) for k, v in fields.items()})
    if isinstance(value, list):
        return [_rebuilt(item) for item in value]
    return value


UNKNOWN_FIELDS = st.dictionaries(
    st.sampled_from(["zzVendor", "x-other", "futureField"]),
    st.none() | st.integers(-5, 5) | st.lists(st.text(max_size=3), max_size=2),
    max_size=2,
)


@pytest.mark.parametrize(("type_", "unstable"), TYPES)
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_decoded_and_built_models_survive_copy_and_pickle(
    type_: Any, unstable: bool, data: st.DataObject
) -> None:
    value = data.draw(valid(def_name_of(type_), unstable=unstable))
    if isinstance(value, dict):
        value = {**data.draw(UNKNOWN_FIELDS), **value}
    try:
        model = acp_sdk.decode(value, type_)
    except acp_sdk.DecodeError:
        assume(False)  # an unknown key that the schema's shape refuses
    assert_survives(model)
    built = _rebuilt(model)
    assert built == model
    assert_survives(built)


def _default_on_null() -> list[Any]:
    """Every class with `x-deserialize-default-on-null` fields, and those fields' wire names."""
    found = []
    for unstable in (False, True):
        module = unstable_codec if unstable else codec
        parsed = ir.parse(raw_schema(unstable))
        for name, definition in parsed.defs.items():
            if not isinstance(definition, ir.ClassDef):
                continue
            wires = [f.wire for f in all_fields(parsed, definition) if f.default_on_null]
            type_ = next(t for t in module.DECODERS if getattr(t, "__name__", "") == name)
            if wires and not (unstable and type_ in codec.DECODERS):
                prefix = "unstable." if unstable else ""
                found.append(pytest.param(type_, unstable, wires, id=prefix + name))
    return found


DEFAULT_ON_NULL = _default_on_null()


def test_the_default_on_null_classes_of_both_schemas_are_covered() -> None:
    assert len(DEFAULT_ON_NULL) >= 8
    assert any(param.values[1] for param in DEFAULT_ON_NULL)


@pytest.mark.parametrize(("type_", "unstable", "wires"), DEFAULT_ON_NULL)
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_null_a_default_on_null_field_decoded_survives(
    type_: Any, unstable: bool, wires: list[str], data: st.DataObject
) -> None:
    """`null` there decodes as the default and is noted in `_explicit` (`<wire>:null`):
    the note travels with every copy, which writes `null` again."""
    value = data.draw(valid(def_name_of(type_), unstable=unstable))
    nulled = data.draw(st.lists(st.sampled_from(wires), min_size=1, unique=True))
    value = {**value, **dict.fromkeys(nulled)}
    model = acp_sdk.decode(value, type_)
    assert {f"{wire}:null" for wire in nulled} <= model._explicit
    assert_survives(model)
    for copier in COPIERS.values():
        again = orjson.loads(acp_sdk.encode(copier(model)))
        assert {wire: again[wire] for wire in nulled} == dict.fromkeys(nulled)


BUILT = [
    s.TextContent(text="hi"),
    s.PromptRequest(session_id="s1", prompt=[s.TextContent(text="hi")]),
    s.Plan(entries=[s.PlanEntry(content="c", priority="high", status="pending")]),
    s.InitializeRequest(protocol_version=1),
    s.InitializeResponse(protocol_version=1),
    s.AgentMessageChunk(content=s.TextContent(text="hi"), extra={"x": 1}),
    s.SessionInfoUpdate(title=None),
    s.SessionInfoUpdate(),
    s.UnknownSessionUpdate(raw={"sessionUpdate": "vendor", "n": [1]}),
    s.TextContent(text="hi", meta={"k": [1, {"deep": None}]}),
]


@pytest.mark.parametrize("model", BUILT, ids=lambda m: type(m).__name__)
def test_the_issue_examples_survive(model: Any) -> None:
    assert_survives(model)


DECODED = [
    (b'{"type":"text","text":"hi","_meta":{"a":1}}', s.TextContent),
    (b'{"type":"text","text":"hi","annotations":null,"_meta":null}', s.TextContent),
    (b'{"sessionUpdate":"session_info_update","title":null}', s.SessionUpdate),
    (b'{"sessionUpdate":"vendor_thing","x":[1]}', s.SessionUpdate),
    (
        b'{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[],"zz":1}}',
        s.SessionNotification,
    ),
    (b'{"cwd":"/","mcpServers":null,"additionalDirectories":null}', s.NewSessionRequest),
    (
        b'{"cwd":"/","mcpServers":[{"name":"m","command":"c","args":null,"env":null}]}',
        s.NewSessionRequest,
    ),
]


@pytest.mark.parametrize(("wire", "type_"), DECODED, ids=[w.decode() for w, _ in DECODED])
def test_decoded_models_keep_the_wire_form(wire: bytes, type_: Any) -> None:
    model = acp_sdk.decode(wire, type_)
    for copier in COPIERS.values():
        assert orjson.loads(acp_sdk.encode(copier(model))) == orjson.loads(wire)


def test_unset_is_still_unset_after_the_trip() -> None:
    for copier in COPIERS.values():
        assert copier(UNSET) is UNSET
        assert copier(s.SessionInfoUpdate()).title is UNSET


# ------------------------------------------------------------------ what attrs sees


@pytest.mark.parametrize("cls", [s.TextContent, s.PromptRequest, s.SessionInfoUpdate])
def test_attrs_sees_the_constructors_keywords(cls: type) -> None:
    names = [field.name for field in attrs.fields(cls)]
    assert names[0] == "extra"
    assert "_explicit" not in names
    wire = [field.metadata["wire"] for field in attrs.fields(cls)[1:]]
    assert all(isinstance(w, str) for w in wire)


def test_asdict_gives_keywords_that_rebuild_the_model() -> None:
    model = acp_sdk.decode(b'{"type":"text","text":"hi","annotations":null,"zz":1}', s.TextContent)
    shallow = attrs.asdict(model, recurse=False)
    assert shallow == {"extra": {"zz": 1}, "annotations": None, "text": "hi", "meta": None}
    assert s.TextContent(**shallow) == model
    assert attrs.asdict(s.TextContent(text="hi")) == {
        "extra": {},
        "annotations": None,
        "text": "hi",
        "meta": None,
    }
    assert type(attrs.asdict(s.TextContent(text="hi"))["extra"]) is dict
    # The wire form as a plain dict: what docs/models.md gives as the supported way.
    wire = {"type": "text", "text": "hi", "annotations": None, "zz": 1}
    assert orjson.loads(acp_sdk.encode(model)) == wire


def test_evolve_keeps_unknown_fields() -> None:
    model = acp_sdk.decode(b'{"type":"text","text":"hi","zz":1}', s.TextContent)
    assert attrs.evolve(model, text="bye").extra == {"zz": 1}


# ------------------------------------------------------------------ the shared empty mapping

MUTATIONS: list[Callable[[Any], Any]] = [
    lambda m: m.__setitem__("k", 1),
    lambda m: m.__delitem__("k"),
    lambda m: m.update(k=1),
    lambda m: m.setdefault("k", 1),
    lambda m: m.pop("k"),
    lambda m: m.popitem(),
    lambda m: m.clear(),
    lambda m: m.__ior__({"k": 1}),
]


@pytest.mark.parametrize("mutate", MUTATIONS)
def test_the_shared_empty_mapping_is_read_only(mutate: Callable[[Any], Any]) -> None:
    with pytest.raises(TypeError, match="read-only"):
        mutate(EMPTY)
    assert len(EMPTY) == 0


def test_the_shared_empty_mapping_is_an_empty_json_object() -> None:
    assert EMPTY == {}
    assert isinstance(EMPTY, Mapping)
    assert orjson.dumps(EMPTY) == b"{}"
    assert s.TextContent(text="x").extra is EMPTY
    for copier in COPIERS.values():
        assert copier(EMPTY) is EMPTY
        assert copier(NO_EXPLICIT) is NO_EXPLICIT
