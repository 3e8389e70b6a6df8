"""The codec's contract: strict where the schema is strict, lenient where it says so,
lossless for unknown fields, `_meta` and three-state fields, and only DecodeError out."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import acp_sdk
from acp_sdk import schema
from acp_sdk.schema import UNSET
from tests.schema_tools import schema_errors


def round_trip(value: Any, type_: Any) -> Any:
    return orjson.loads(acp_sdk.encode(acp_sdk.decode(value, type_)))


PROMPT = {
    "sessionId": "s1",
    "prompt": [
        {"type": "text", "text": "hi"},
        {"type": "resource_link", "uri": "file:///a", "name": "a"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
    ],
}

# (case, type, wire value, expected error path) -- each value is wrong in one place only.
STRICT_CASES = [
    ("sessionId is a number", schema.PromptRequest, {**PROMPT, "sessionId": 123}, "sessionId"),
    ("cwd is a number", schema.NewSessionRequest, {"cwd": 12345, "mcpServers": []}, "cwd"),
    ("missing required cwd", schema.NewSessionRequest, {"mcpServers": []}, "cwd"),
    ("bool is not an int", schema.InitializeRequest, {"protocolVersion": True}, "protocolVersion"),
    ("float is not an int", schema.InitializeRequest, {"protocolVersion": 1.0}, "protocolVersion"),
    ("uint16 overflow", schema.InitializeRequest, {"protocolVersion": 70000}, "protocolVersion"),
    ("negative uint16", schema.InitializeRequest, {"protocolVersion": -1}, "protocolVersion"),
    (
        "unknown content type deep in a list",
        schema.PromptRequest,
        {**PROMPT, "prompt": [*PROMPT["prompt"][:2], {"type": "hologram"}]},
        "prompt[2].type",
    ),
    (
        "missing text deep in a list",
        schema.PromptRequest,
        {**PROMPT, "prompt": [{"type": "text"}]},
        "prompt[0].text",
    ),
    ("prompt is an object", schema.PromptRequest, {**PROMPT, "prompt": {}}, "prompt"),
    ("stop reason unknown", schema.PromptResponse, {"stopReason": "bored"}, "stopReason"),
    ("stop reason is null", schema.PromptResponse, {"stopReason": None}, "stopReason"),
    (
        "bool for a string in a tagged arm",
        schema.SessionNotification,
        {"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": [], "_meta": {}}},
        None,
    ),
    ("root is a list", schema.PromptRequest, [], ""),
    ("root is a string", schema.PromptRequest, "x", ""),
    ("root is null", schema.PromptRequest, None, ""),
]


@pytest.mark.parametrize(
    ("type_", "value", "path"),
    [c[1:] for c in STRICT_CASES],
    ids=[c[0] for c in STRICT_CASES],
)
def test_strict_decoding(type_: Any, value: Any, path: str | None) -> None:
    if path is None:  # a control row: the same shape, correct, must decode
        acp_sdk.decode(value, type_)
        return
    with pytest.raises(acp_sdk.DecodeError) as caught:
        acp_sdk.decode(value, type_)
    assert caught.value.path_text == path
    assert str(caught.value).startswith(path)


def test_error_messages_never_echo_values() -> None:
    hostile = "<script>" * 1000
    with pytest.raises(acp_sdk.DecodeError) as caught:
        acp_sdk.decode({"sessionId": "s", "prompt": [{"type": hostile}]}, schema.PromptRequest)
    assert "<script>" not in str(caught.value)


# ------------------------------------------------------------------ leniency (x-deserialize-*)


def test_default_on_error_field_falls_back() -> None:
    # ToolCall.kind is x-deserialize-default-on-error: a bad value becomes "absent".
    update = acp_sdk.decode(
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "kind": 5},
        schema.SessionUpdate,
    )
    assert isinstance(update, schema.ToolCall)
    assert update.kind is None


def test_skip_invalid_items_drops_only_bad_items() -> None:
    response = acp_sdk.decode(
        {"sessions": [{"sessionId": "a", "cwd": "/"}, {"sessionId": 1}, {"cwd": "/"}]},
        schema.ListSessionsResponse,
    )
    assert [s.session_id for s in response.sessions] == ["a"]


def test_default_on_error_meta() -> None:
    decoded = acp_sdk.decode({"stopReason": "end_turn", "_meta": 7}, schema.PromptResponse)
    assert decoded.meta is None


# ------------------------------------------------------------------ lossless round trips


def test_unknown_fields_are_kept_at_every_level() -> None:
    wire = {
        "sessionId": "s",
        "future": {"x": [1, 2]},
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi", "sparkle": True},
            "newThing": None,
        },
    }
    decoded = acp_sdk.decode(wire, schema.SessionNotification)
    assert decoded.extra == {"future": {"x": [1, 2]}}
    assert isinstance(decoded.update, schema.AgentMessageChunk)
    assert decoded.update.extra == {"newThing": None}
    assert round_trip(wire, schema.SessionNotification) == wire


def test_meta_is_kept_exactly_and_omitted_when_absent() -> None:
    meta = {"": 1, "weird key": {"nested": [None, True]}, "_": "x", "日本": "語"}
    decoded = acp_sdk.decode({"stopReason": "end_turn", "_meta": meta}, schema.PromptResponse)
    assert decoded.meta == meta
    assert orjson.loads(acp_sdk.encode(decoded))["_meta"] == meta
    assert b"_meta" not in acp_sdk.encode(schema.PromptResponse(stop_reason="end_turn"))


@pytest.mark.parametrize(
    ("wire", "title"),
    [({}, UNSET), ({"title": None}, None), ({"title": "T"}, "T")],
    ids=["absent", "null", "value"],
)
def test_three_state_field(wire: dict[str, Any], title: Any) -> None:
    full = {"sessionUpdate": "session_info_update", **wire}
    update = acp_sdk.decode(full, schema.SessionUpdate)
    assert isinstance(update, schema.SessionInfoUpdate)
    assert update.title is title if title is None or title is UNSET else update.title == title
    assert round_trip(full, schema.SessionUpdate) == full


def test_explicit_null_of_an_optional_field_round_trips() -> None:
    wire = {"path": "/x", "newText": "b", "oldText": None, "type": "diff"}
    assert round_trip(wire, schema.ToolCallContent) == wire
    assert round_trip({"stopReason": "end_turn", "_meta": None}, schema.PromptResponse) == {
        "stopReason": "end_turn",
        "_meta": None,
    }


def test_defaults_present_on_the_wire_round_trip() -> None:
    wire = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
    decoded = acp_sdk.decode(wire, schema.InitializeResponse)
    assert decoded.agent_capabilities.load_session is False
    assert decoded.agent_capabilities.prompt_capabilities.image is False
    assert round_trip(wire, schema.InitializeResponse) == wire
    assert round_trip({"protocolVersion": 1}, schema.InitializeResponse) == {"protocolVersion": 1}


@pytest.mark.parametrize(
    ("wire", "cls"),
    [
        ({"type": "http", "name": "a", "url": "u", "headers": []}, schema.McpServerHttp),
        ({"type": "sse", "name": "a", "url": "u", "headers": []}, schema.McpServerSse),
        ({"name": "a", "command": "c", "args": [], "env": []}, schema.McpServerStdio),
    ],
)
def test_mcp_server_untagged_stdio(wire: dict[str, Any], cls: type) -> None:
    assert type(acp_sdk.decode(wire, schema.McpServer)) is cls
    assert round_trip(wire, schema.McpServer) == wire


@pytest.mark.parametrize(
    ("wire", "cls"),
    [
        ({"id": "a", "name": "A"}, schema.AuthMethodAgent),
        ({"id": "t", "name": "T", "type": "terminal"}, schema.AuthMethodTerminal),
    ],
)
def test_auth_method_untagged_agent(wire: dict[str, Any], cls: type) -> None:
    assert type(acp_sdk.decode(wire, schema.AuthMethod)) is cls
    assert round_trip(wire, schema.AuthMethod) == wire


@pytest.mark.parametrize(
    ("wire", "cls"),
    [
        ({"outcome": "cancelled"}, schema.CancelledPermissionOutcome),
        ({"outcome": "selected", "optionId": "o"}, schema.SelectedPermissionOutcome),
    ],
)
def test_permission_outcome(wire: dict[str, Any], cls: type) -> None:
    assert type(acp_sdk.decode(wire, schema.RequestPermissionOutcome)) is cls
    assert round_trip(wire, schema.RequestPermissionOutcome) == wire


def test_unknown_session_update_is_kept_whole() -> None:
    wire = {"sessionUpdate": "hologram", "payload": {"x": 1}}
    update = acp_sdk.decode(wire, schema.SessionUpdate)
    assert isinstance(update, schema.UnknownSessionUpdate)
    assert update.tag == "hologram"
    assert update.raw == wire
    assert round_trip(wire, schema.SessionUpdate) == wire


def test_unknown_tag_of_a_closed_union_is_an_error() -> None:
    with pytest.raises(acp_sdk.DecodeError) as caught:
        acp_sdk.decode({"type": "hologram"}, schema.ContentBlock)
    assert caught.value.path_text == "type"


def test_elicitation_open_unions() -> None:
    wire = {"type": "color", "title": "Pick"}
    prop = acp_sdk.decode(wire, schema.ElicitationPropertySchema)
    assert isinstance(prop, schema.UnknownElicitationPropertySchema)
    assert round_trip(wire, schema.ElicitationPropertySchema) == wire
    response = {"action": "defer", "until": "later"}
    assert isinstance(
        acp_sdk.decode(response, schema.CreateElicitationResponse),
        schema.UnknownCreateElicitationResponse,
    )
    assert round_trip(response, schema.CreateElicitationResponse) == response


def test_request_id_scope_keeps_null() -> None:
    wire = {
        "mode": "form",
        "message": "m",
        "requestId": None,
        "requestedSchema": {"properties": {"a": {"type": "string"}}},
    }
    assert round_trip(wire, schema.CreateElicitationRequest) == wire


# ------------------------------------------------------------------ construction and encode


def test_constructed_objects_encode_to_schema_valid_json() -> None:
    request = schema.PromptRequest(
        session_id="s1",
        prompt=[
            schema.TextContent(text="hi"),
            schema.ResourceLink(uri="file:///a", name="a"),
            schema.EmbeddedResource(
                resource=schema.TextResourceContents(uri="file:///b", text="b")
            ),
        ],
    )
    wire = orjson.loads(acp_sdk.encode(request))
    assert not schema_errors(wire, "PromptRequest")
    assert wire["prompt"][0] == {"type": "text", "text": "hi"}
    assert acp_sdk.decode(wire, schema.PromptRequest) == request


def test_encode_is_compact_without_newline() -> None:
    data = acp_sdk.encode(schema.PromptResponse(stop_reason="end_turn"))
    assert data == b'{"stopReason":"end_turn"}'


def test_encode_rejects_what_it_cannot_encode() -> None:
    with pytest.raises(acp_sdk.EncodeError):
        acp_sdk.encode(object())  # type: ignore[arg-type]  # what an untyped caller may pass
    with pytest.raises(acp_sdk.EncodeError):
        acp_sdk.encode(schema.PromptResponse(stop_reason="end_turn", meta={"x": {1, 2}}))


@pytest.mark.parametrize(
    "data",
    [
        b'{"stopReason":"end_turn"}',
        '{"stopReason":"end_turn"}',
        bytearray(b'{"stopReason":"end_turn"}'),
    ],
    ids=["bytes", "str", "bytearray"],
)
def test_decode_accepts_text_forms(data: Any) -> None:
    assert acp_sdk.decode(data, schema.PromptResponse).stop_reason == "end_turn"


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b"\xff\xfe", b"[1,2", b"nan", b"{" * 100_000, b"[" * 5000 + b"]" * 5000],
    ids=["empty", "open-brace", "bad-utf8", "open-list", "nan", "deep-open", "deep-list"],
)
def test_junk_raises_only_decode_error(data: bytes) -> None:
    with pytest.raises(acp_sdk.DecodeError):
        acp_sdk.decode(data, schema.SessionNotification)


def test_huge_values() -> None:
    big = {"sessionId": "s", "prompt": [{"type": "text", "text": "x" * 5_000_000}]}
    assert len(acp_sdk.decode(orjson.dumps(big), schema.PromptRequest).prompt) == 1
    with pytest.raises(acp_sdk.DecodeError):
        acp_sdk.decode(
            b'{"protocolVersion": 123456789012345678901234567890}', schema.InitializeRequest
        )


def test_models_are_immutable() -> None:
    response = schema.PromptResponse(stop_reason="end_turn")
    with pytest.raises(AttributeError):
        response.stop_reason = "cancelled"  # type: ignore[misc]
