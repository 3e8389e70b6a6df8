"""The encoder never writes what the schema forbids from our side (issue 28).

Generated from the pinned schemas, so the next schema bump tests itself: for every field
of every class of both schemas, each value of a fixed pool goes into a minimal valid
instance of the class, and an oracle written here (independently of the generator's
emission, from the generator's parse of the schema) says whether the schema allows it.
Allowed: `encode` succeeds and the JSON validates against the class's schema definition.
Not allowed: `encode` raises `EncodeError` whose path is the field's wire name followed
by the path the oracle expects (`prompt[2].text`).
"""

from __future__ import annotations

import copy
import enum
import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import Any

import attrs
import orjson
import pytest

import acp_sdk
from acp_sdk import EncodeError
from acp_sdk import schema as s
from acp_sdk._codegen import ir
from acp_sdk._codegen.common import all_fields, default_of
from acp_sdk.protocol._generated import models, unstable_models
from tests.schema_tools import raw_schema, schema_errors

JSON_LEVEL = "json"
"""The oracle's verdict for a value orjson itself cannot write (inside a free-form field):
`EncodeError`, with no path to check."""


class _Schema:
    """One schema's parse, its classes, and minimal valid values of its types."""

    def __init__(self, unstable: bool) -> None:
        self.unstable = unstable
        self.model = ir.parse(raw_schema(unstable))
        self.module: ModuleType = unstable_models if unstable else models
        self.classes = {
            name: d for name, d in self.model.defs.items() if isinstance(d, ir.ClassDef)
        }
        self.by_class = {getattr(self.module, name): d for name, d in self.classes.items()}

    def cls(self, name: str) -> type:
        found: type = getattr(self.module, name)
        return found

    def union_arms(self, union: ir.UnionDef) -> list[type]:
        names = [arm for _, arm in union.tagged] + list(union.untagged)
        if union.unknown is not None:
            names.append(union.unknown)
        return [self.cls(name) for name in names]

    # ------------------------------------------------------------------ minimal values

    def minimal(self, expr: ir.TypeExpr) -> Any:
        if isinstance(expr, ir.TPrim):
            return {"str": "s", "int": 0, "float": 0.5, "bool": True, "object": {}, "any": None}[
                expr.kind
            ]
        if isinstance(expr, ir.TConst):
            return expr.value
        if isinstance(expr, ir.TList):
            return []
        if isinstance(expr, ir.TMap):
            return {}
        definition = self.model.defs[expr.name]
        if isinstance(definition, ir.LiteralDef):
            return definition.values[0]
        if isinstance(definition, ir.AliasDef):
            return self.minimal(definition.options[0])
        if isinstance(definition, ir.UnionDef):
            first = definition.tagged[0][1] if definition.tagged else definition.untagged[0]
            return self.instance(first)
        assert isinstance(definition, ir.ClassDef)
        return self.instance(definition.name)

    def instance(self, name: str, **values: Any) -> Any:
        """An instance of class `name` with its required fields at minimal values."""
        definition = self.classes[name]
        kwargs = {
            f.py: self.minimal(f.type)
            for f in all_fields(self.model, definition)
            if default_of(self.model, name, f) is None and not f.nullable
        }
        kwargs.update(
            {
                f.py: None
                for f in all_fields(self.model, definition)
                if default_of(self.model, name, f) is None and f.nullable
            }
        )
        kwargs.update(values)
        return self.cls(name)(**kwargs)

    # ------------------------------------------------------------------ the oracle

    def problem(self, expr: ir.TypeExpr, value: Any) -> tuple[str | int, ...] | str | None:
        """None when the schema allows `value` for `expr`; else the path below the field
        to what is wrong (`()` for the value itself), or JSON_LEVEL."""
        if isinstance(expr, ir.TPrim):
            return self._prim_problem(expr, value)
        if isinstance(expr, ir.TConst):
            return None if isinstance(value, str) and value == expr.value else ()
        if isinstance(expr, ir.TList):
            if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
                return ()
            for index, item in enumerate(value):
                found = self.problem(expr.item, item)
                if found is not None:
                    return found if found == JSON_LEVEL else (index, *found)
            return None
        if isinstance(expr, ir.TMap):
            if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
                return ()
            for key, item in value.items():
                found = self.problem(expr.value, item)
                if found is not None:
                    return found if found == JSON_LEVEL else (key, *found)
            return None
        definition = self.model.defs[expr.name]
        if isinstance(definition, ir.LiteralDef):
            if not isinstance(value, str):
                return ()
            return None if definition.open or value in definition.values else ()
        if isinstance(definition, ir.AliasDef):
            if value is None and definition.nullable:
                return None
            found_all = [self.problem(option, value) for option in definition.options]
            if any(found is None for found in found_all):
                return None
            paths = [found for found in found_all if isinstance(found, tuple)]
            return max(paths, key=len, default=())
        if isinstance(definition, ir.UnionDef):
            if type(value) not in self.union_arms(definition):
                return ()
            arm = self.by_class.get(type(value))
            return None if arm is None else self.fields_problem(arm, value)
        assert isinstance(definition, ir.ClassDef)
        if type(value) is not self.cls(definition.name):
            return ()
        return self.fields_problem(definition, value)

    @staticmethod
    def _prim_problem(expr: ir.TPrim, value: Any) -> tuple[()] | str | None:
        if expr.kind in ("any", "object"):
            if expr.kind == "object":
                if not isinstance(value, Mapping):
                    return ()
                value = dict(value)  # any mapping is written as a JSON object
            try:
                orjson.dumps(value)
            except TypeError:
                return JSON_LEVEL
            return None
        if expr.kind == "str":
            return None if isinstance(value, str) else ()
        if expr.kind == "bool":
            return None if type(value) is bool else ()
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return ()
        if expr.kind == "float":  # an integer beyond 64 bits is no JSON number orjson writes
            if isinstance(value, int):
                return None if -(2**63) <= value < 2**64 else ()
            return None if math.isfinite(value) else ()
        low, high = ir.INT_RANGES[expr.int_format or "int64"]
        return None if isinstance(value, int) and low <= value <= high else ()

    def field_problem(
        self, owner: str, field: ir.Field, value: Any
    ) -> tuple[str | int, ...] | str | None:
        if value is None and (field.nullable or default_of(self.model, owner, field)):
            return None  # null, or an optional field left out
        found = self.problem(field.type, value)
        return found if found is None or found == JSON_LEVEL else (field.wire, *found)

    def fields_problem(self, definition: ir.ClassDef, obj: Any) -> tuple[str | int, ...] | None:
        for field in all_fields(self.model, definition):
            found = self.field_problem(definition.name, field, getattr(obj, field.py))
            if found is not None:
                assert found != JSON_LEVEL
                return found  # type: ignore[return-value]
        return None


SCHEMAS = {False: _Schema(False), True: _Schema(True)}


class _NotJSON:
    def __repr__(self) -> str:
        return "<not JSON>"


class _Kind(enum.Enum):
    TEXT = "text"


class _Label(str, enum.Enum):
    """A `str` subclass (as `StrEnum` members are): a string to JSON and to the schema."""

    EXPLAIN = "end_turn"


def _pool() -> list[Any]:
    bad_text = s.TextContent(text=1)  # type: ignore[arg-type]
    return [
        None,
        True,
        False,
        0,
        7,
        -1,
        2**16,
        2**40,
        2**64,
        1.5,
        float("nan"),
        float("inf"),
        "",
        "s",
        "end_turn",
        _Label.EXPLAIN,
        b"x",
        [],
        ["s"],
        [1],
        ("s",),
        {},
        {"k": "v"},
        {"k": 1},
        MappingProxyType({"k": "v"}),
        _NotJSON(),
        _Kind.TEXT,
        s.TextContent(text="s"),
        s.EnvVariable(name="n", value="v"),
        bad_text,
        [bad_text],
        [s.TextContent(text="s"), bad_text],
    ]


def _cases() -> list[Any]:
    out = []
    for unstable, schema in SCHEMAS.items():
        for name in sorted(schema.classes):
            if unstable and name in models.__dict__ and schema.cls(name) is getattr(models, name):
                continue  # the same class as the stable one: tested there
            prefix = "unstable." if unstable else ""
            out.append(pytest.param(unstable, name, id=f"{prefix}{name}"))
    return out


CASES = _cases()


def test_every_class_of_both_schemas_is_covered() -> None:
    assert len(CASES) > 200
    ids = {case.id for case in CASES}
    # What the schema after v1.25.0 brought: an object with no declared fields, a class
    # with default-on-null fields, a flat class whose tag is an ordinary field.
    assert {"NoticeCapabilities", "NewSessionRequest", "unstable.IdleStateUpdate"} <= ids


def _errors(obj: Any, source: str, unstable: bool) -> list[str]:
    found = schema_errors(orjson.loads(acp_sdk.encode(obj)), source, unstable)
    # Not a JSON type, and not checked by this SDK either way: `minLength` (`Notice.title`
    # only, in both schemas), which the generator's parse does not carry.
    return [error for error in found if "should be non-empty" not in error]


def _valid_base(schema: _Schema, name: str, source: str) -> tuple[Any, str | None]:
    """A minimal instance the schema accepts, and the optional field it needed, if any.
    Some classes need one by a rule across fields that is no field's type (an
    elicitation's scope: a session or a request id): they get the first that works."""
    base = schema.instance(name)
    if not _errors(base, source, schema.unstable):
        return base, None
    for field in all_fields(schema.model, schema.classes[name]):
        if default_of(schema.model, name, field) is not None:
            candidate = attrs.evolve(base, **{field.py: schema.minimal(field.type)})
            if not _errors(candidate, source, schema.unstable):
                return candidate, field.py
    raise AssertionError(f"no valid minimal {name}")


@pytest.mark.parametrize(("unstable", "name"), CASES)
def test_each_field_takes_only_what_the_schema_allows(unstable: bool, name: str) -> None:
    schema = SCHEMAS[unstable]
    definition = schema.classes[name]
    source = schema.model.source.get(name, name)
    base, needed = _valid_base(schema, name, source)
    for field in all_fields(schema.model, definition):
        for value in _pool():
            obj = attrs.evolve(base, **{field.py: value})
            expected = schema.field_problem(name, field, value)
            if expected is None:
                if field.py == needed and value is None:
                    acp_sdk.encode(obj)  # left out: the rule across fields is the user's
                    continue
                errors = _errors(obj, source, unstable)
                assert not errors, (field.wire, value, errors)
                continue
            with pytest.raises(EncodeError) as caught:
                acp_sdk.encode(obj)
            if expected != JSON_LEVEL:
                assert caught.value.path == expected, (field.wire, value, str(caught.value))


def _default_on_null_cases() -> list[Any]:
    out = []
    for case in CASES:
        unstable, name = case.values
        schema = SCHEMAS[unstable]
        for field in all_fields(schema.model, schema.classes[name]):
            if field.default_on_null:
                out.append(pytest.param(unstable, name, field.wire, id=f"{case.id}.{field.wire}"))
    return out


DEFAULT_ON_NULL = _default_on_null_cases()


def test_the_default_on_null_fields_of_both_schemas_are_covered() -> None:
    assert len(DEFAULT_ON_NULL) >= 14
    assert any(case.values[0] for case in DEFAULT_ON_NULL)


@pytest.mark.parametrize(("unstable", "name", "wire"), DEFAULT_ON_NULL)
def test_a_field_decoded_from_null_still_checks_its_value(
    unstable: bool, name: str, wire: str
) -> None:
    """A default-on-null field decoded from `null` re-encodes as `null` while it holds an
    empty value; any other value it is given (the model's slots changed behind attrs'
    back: the `null` note stays) is checked as everywhere else."""
    schema = SCHEMAS[unstable]
    (field,) = [f for f in all_fields(schema.model, schema.classes[name]) if f.wire == wire]
    base, _ = _valid_base(schema, name, schema.model.source.get(name, name))
    wire_form = {**orjson.loads(acp_sdk.encode(base)), wire: None}
    decoded = acp_sdk.decode(orjson.dumps(wire_form), type(base))
    assert f"{wire}:null" in decoded._explicit
    assert orjson.loads(acp_sdk.encode(decoded)) == wire_form
    for value in _pool():
        obj = copy.copy(decoded)
        object.__setattr__(obj, field.py, value)
        expected = schema.field_problem(name, field, value)
        if expected is None:
            written = orjson.loads(acp_sdk.encode(obj))[wire]
            plain = orjson.loads(acp_sdk.encode(attrs.evolve(base, **{field.py: value})))
            assert written == (plain[wire] if value else None), (value, written)
            continue
        with pytest.raises(EncodeError) as caught:
            acp_sdk.encode(obj)
        assert caught.value.path == expected, (value, str(caught.value))


# ------------------------------------------------------------------ what a user sees


def test_the_issue_examples() -> None:
    with pytest.raises(EncodeError) as caught:
        acp_sdk.encode(s.TextContent(text=1))  # type: ignore[arg-type]
    assert str(caught.value) == "text: expected a string, got an integer"
    with pytest.raises(EncodeError) as caught:
        acp_sdk.encode(attrs.evolve(s.TextContent(text="hi"), text=123))  # type: ignore[arg-type]
    assert caught.value.path == ("text",)


def test_the_path_of_a_nested_field() -> None:
    request = s.PromptRequest(
        session_id="s1",
        prompt=[
            s.TextContent(text="a"),
            s.ResourceLink(name="n", uri="file:///x"),
            s.TextContent(text=None),  # type: ignore[arg-type]
        ],
    )
    with pytest.raises(EncodeError) as caught:
        acp_sdk.encode(request)
    assert caught.value.path == ("prompt", 2, "text")
    assert str(caught.value) == "prompt[2].text: expected a string, got null"


MESSAGES: list[tuple[Any, str]] = [
    (s.PromptResponse(stop_reason="finished"), "stopReason: unknown value; expected one of"),  # type: ignore[arg-type]
    (s.PromptRequest(session_id="s", prompt="hi"), "prompt: expected an array, got a string"),  # type: ignore[arg-type]
    (
        s.ContentChunk(content=s.EnvVariable(name="n", value="v")),  # type: ignore[arg-type]
        "content: expected ContentBlock, got EnvVariable",
    ),
    (
        s.TextContent(text="t", annotations=s.TextContent(text="x")),  # type: ignore[arg-type]
        "annotations: expected Annotations, got TextContent",
    ),
    (s.ReadTextFileRequest(path="/p", session_id="s", line=True), "line: expected an integer"),
    (s.ReadTextFileRequest(path="/p", session_id="s", line=-1), "line: integer out of range"),
    (s.Annotations(priority=math.nan), "priority: expected a finite number"),
    (s.AuthMethodTerminal(id="a", name="n", env={1: "v"}), "env: expected string keys"),  # type: ignore[dict-item]
    (s.TextContent(text="t", extra={1: 2}), "extra: expected string keys"),  # type: ignore[dict-item]
    (s.TextContent(text="t", extra=[1]), "extra must be a mapping"),  # type: ignore[arg-type]
    (s.TextContent(text="t", meta=[1]), "_meta: expected an object, got an array"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("obj", "message"), MESSAGES, ids=[m for _, m in MESSAGES])
def test_the_messages_say_what_and_where(obj: Any, message: str) -> None:
    with pytest.raises(EncodeError) as caught:
        acp_sdk.encode(obj)
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, TypeError)  # EncodeError is also a TypeError


def test_what_the_annotations_allow_beyond_the_exact_json_types() -> None:
    request = s.PromptRequest(
        session_id=_Label.EXPLAIN,
        prompt=(s.TextContent(text="a", meta=MappingProxyType({"k": 1})),),
    )
    assert orjson.loads(acp_sdk.encode(request)) == {
        "sessionId": "end_turn",
        "prompt": [{"type": "text", "text": "a", "_meta": {"k": 1}}],
    }
    response = s.PromptResponse(stop_reason=_Label.EXPLAIN)  # type: ignore[arg-type]
    assert acp_sdk.encode(response) == b'{"stopReason":"end_turn"}'


def test_none_in_an_optional_field_is_left_out() -> None:
    info = s.SessionInfo(session_id="s", cwd="/", additional_directories=None)  # type: ignore[arg-type]
    assert acp_sdk.encode(info) == b'{"sessionId":"s","cwd":"/"}'
    capabilities = s.AgentCapabilities(load_session=None)  # type: ignore[arg-type]
    assert acp_sdk.encode(capabilities) == b"{}"


def test_unknown_variants_and_extras_pass_through() -> None:
    note = s.SessionNotification(
        session_id="s", update=s.UnknownSessionUpdate(raw={"sessionUpdate": "vendor", "x": [1]})
    )
    assert orjson.loads(acp_sdk.encode(note))["update"] == {"sessionUpdate": "vendor", "x": [1]}
    text = s.TextContent(text="t", extra={"vendorField": {"deep": [1, 2]}})
    assert orjson.loads(acp_sdk.encode(text))["vendorField"] == {"deep": [1, 2]}
    unknown = s.UnknownSessionUpdate(raw=[1])  # type: ignore[arg-type]
    with pytest.raises(EncodeError) as caught:
        acp_sdk.encode(s.SessionNotification(session_id="s", update=unknown))
    assert str(caught.value) == "update: expected an object, got an array"


def test_an_invalid_value_in_a_free_form_field_is_an_encode_error() -> None:
    update = s.ToolCallUpdate(tool_call_id="t", raw_input={"k": _NotJSON()})
    with pytest.raises(EncodeError):
        acp_sdk.encode(update)
