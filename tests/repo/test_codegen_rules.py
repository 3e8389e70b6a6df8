"""The generator's reading of the schema: each rule on a small schema of its own, and a
construct it does not know fails it loudly."""

from __future__ import annotations

from typing import Any

import pytest

from acp_sdk._codegen import emit_codec, gates, ir, naming
from acp_sdk._codegen.emit_encoders import EncoderEmitter


def _parse(defs: dict[str, Any]) -> ir.Model:
    return ir.parse({"$defs": defs})


def _field(model: ir.Model, cls: str, wire: str) -> ir.Field:
    definition = model.defs[cls]
    assert isinstance(definition, ir.ClassDef)
    return next(f for f in definition.fields if f.wire == wire)


LIST = {"type": "array", "items": {"type": "string"}}


def test_default_on_null_is_read_and_checked() -> None:
    model = _parse(
        {
            "R": {
                "type": "object",
                "properties": {"a": {**LIST, "x-deserialize-default-on-null": True}},
            }
        }
    )
    assert _field(model, "R", "a").default_on_null
    with pytest.raises(ir.SchemaError, match=r"R\.a: default-on-null"):
        _parse(
            {
                "R": {
                    "type": "object",
                    "properties": {
                        "a": {"type": ["string", "null"], "x-deserialize-default-on-null": True}
                    },
                }
            }
        )


def test_an_unknown_decoder_annotation_fails_the_generator() -> None:
    with pytest.raises(ir.SchemaError, match="unknown decoder annotation"):
        _parse(
            {"R": {"type": "object", "properties": {"a": {**LIST, "x-deserialize-clamp": True}}}}
        )


@pytest.mark.parametrize(
    ("description", "clears"),
    [
        ("Human-readable title for the session. Set to null to clear.", True),
        ("Omitted means unchanged. `null` clears it.", True),
        ("Omitted leaves content unchanged. `null` or `[]` clears it.", True),
        ("Omitted leaves metadata unchanged. `null` removes it.", True),
        (
            "Omitting it or sending `null` both mean that the existing name is left unchanged.",
            False,
        ),
        ("Omitted and `null` are equivalent and mean no description was supplied.", False),
        ("If omitted or set to `null`, the inner MCP message has no params.", False),
    ],
)
def test_which_descriptions_make_null_a_state_of_its_own(description: str, clears: bool) -> None:
    assert naming.null_is_meaningful(description) is clears


def test_a_class_description_gives_several_fields_patch_semantics() -> None:
    text = (
        "An upsert.\n\n`summary`, `error`, and `_meta` have patch semantics: omission leaves\n"
        "the stored value unchanged, `null` clears it, and a concrete value replaces it."
    )
    assert naming.patch_fields(text) == {"summary", "error", "_meta"}
    nullable = {"type": ["string", "null"]}
    model = _parse(
        {
            "U": {
                "type": "object",
                "description": text,
                "properties": dict.fromkeys(("summary", "error", "_meta", "other"), nullable),
            }
        }
    )
    assert [f.wire for f in model.defs["U"].fields if f.null_is_meaningful] == [  # type: ignore[union-attr]
        "summary",
        "error",
        "_meta",
    ]
    with pytest.raises(ir.SchemaError, match="unknown fields"):
        _parse({"U": {"type": "object", "description": text, "properties": {"summary": nullable}}})


def test_an_object_with_no_declared_fields_is_a_model() -> None:
    model = _parse({"NoticeCapabilities": {"type": "object", "description": "`{}` advertises"}})
    assert model.defs["NoticeCapabilities"] == ir.ClassDef(
        "NoticeCapabilities", "`{}` advertises", ()
    )


def test_another_name_for_a_definition_is_an_alias() -> None:
    model = _parse(
        {
            "InitializeRequest": {"type": "object", "properties": {"a": {"type": "string"}}},
            "InitializeProxyRequest": {"allOf": [{"$ref": "#/$defs/InitializeRequest"}]},
        }
    )
    assert model.defs["InitializeProxyRequest"] == ir.AliasDef(
        "InitializeProxyRequest", "", (ir.TRef("InitializeRequest"),)
    )


def test_another_name_for_a_definition_encodes_as_that_definition() -> None:
    model = _parse(
        {
            "InitializeRequest": {"type": "object", "properties": {"a": {"type": "string"}}},
            "InitializeProxyRequest": {"allOf": [{"$ref": "#/$defs/InitializeRequest"}]},
        }
    )
    encoders = EncoderEmitter(emit_codec._Emitter(model, "models", None))
    # Checked as the class itself, by its own encoder: no encoder of the alias's own.
    written = "\n".join(encoders.convert(ir.TRef("InitializeProxyRequest"), "v", "p", ""))
    assert "_e_InitializeRequest(v) if type(v) is InitializeRequest" in written
    assert "InitializeProxyRequest" not in written
    alias = model.defs["InitializeProxyRequest"]
    assert isinstance(alias, ir.AliasDef)
    assert encoders.alias_encoder(alias) == []


def test_the_fallback_arm_yields_its_name_to_a_schema_definition() -> None:
    def state(tag: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"state": {"type": "string", "const": tag}},
            "required": ["state"],
        }

    defs: dict[str, Any] = {
        "UnknownStateUpdate": {"type": "object", "properties": {}},
        "StateUpdate": {
            "anyOf": [
                {**state("unknown"), "allOf": [{"$ref": "#/$defs/UnknownStateUpdate"}]},
                {
                    "title": "other",
                    "type": "object",
                    "properties": {"state": {"type": "string"}},
                    "not": {"anyOf": [state("unknown")]},
                },
            ]
        },
    }
    model = _parse(defs)
    union = model.defs["StateUpdate"]
    assert isinstance(union, ir.UnionDef)
    assert union.unknown == "OtherStateUpdate"
    assert dict(union.tagged) == {"unknown": "UnknownStateUpdate"}


def test_a_tag_declared_as_a_field_makes_one_flat_class() -> None:
    defs = {
        "ErrorStopReason": {
            "type": "object",
            "properties": {"error": {"type": ["string", "null"]}},
        },
        "Idle": {
            "type": "object",
            "properties": {"stopReason": {"type": ["string", "null"]}},
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"stopReason": {"type": "string", "const": "end_turn"}},
                },
                {
                    "type": "object",
                    "properties": {"stopReason": {"type": "string", "const": "error"}},
                    "allOf": [{"$ref": "#/$defs/ErrorStopReason"}],
                },
            ],
        },
    }
    idle = _parse(defs).defs["Idle"]
    assert isinstance(idle, ir.ClassDef)
    assert [(f.wire, f.required) for f in idle.fields] == [("stopReason", False), ("error", False)]


def test_a_described_method_gate_must_be_the_tables() -> None:
    said = (
        "This method is only available if the agent advertises the "
        "`sessionCapabilities.list` capability."
    )
    gates.check_method_gate("session/list", "agentCapabilities.sessionCapabilities.list", [said])
    with pytest.raises(ir.SchemaError, match="add it"):
        gates.check_method_gate("session/list", None, [said])
    with pytest.raises(ir.SchemaError, match="is not the schema's"):
        gates.check_method_gate(
            "session/list", "agentCapabilities.sessionCapabilities.close", [said]
        )
    with pytest.raises(ir.SchemaError, match="is not the schema's"):
        gates.check_method_gate("session/list", "clientCapabilities.list", [said])
    # "the `session.fork` capability" names `sessionCapabilities.fork` by its last segment.
    fork = "Only available if the Agent supports the `session.fork` capability."
    gates.check_method_gate("session/fork", "agentCapabilities.sessionCapabilities.fork", [fork])
