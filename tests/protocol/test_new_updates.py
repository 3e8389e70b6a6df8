"""The session updates and fields the schema gained after v1.21.0, decoded and encoded
exactly: notices, compaction updates and summary chunks, tool names."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import acp_sdk
from acp_sdk import schema
from acp_sdk.schema import UNSET
from tests.schema_tools import schema_errors

TEXT = {"type": "text", "text": "Summary so far"}

# (wire form of the update, its class) as the schema's descriptions define them.
EXAMPLES: list[tuple[dict[str, Any], type]] = [
    ({"sessionUpdate": "notice", "severity": "info", "title": "Indexing"}, schema.Notice),
    (
        {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "Rate limited",
            "description": "Retrying in 30 s",
            "_meta": {"vendor": {"retryAfter": 30}},
        },
        schema.Notice,
    ),
    ({"sessionUpdate": "notice", "severity": "_vendor.debug", "title": "t"}, schema.Notice),
    (
        {"sessionUpdate": "notice", "severity": "error", "title": "t", "description": None},
        schema.Notice,
    ),
    (
        {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"},
        schema.CompactionUpdate,
    ),
    (
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c1",
            "status": "completed",
            "summary": [TEXT],
            "_meta": {"tokensBefore": 120000},
        },
        schema.CompactionUpdate,
    ),
    (
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c1",
            "status": "failed",
            "summary": None,
            "error": "context too large",
            "_meta": None,
        },
        schema.CompactionUpdate,
    ),
    (
        {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "_paused"},
        schema.CompactionUpdate,
    ),
    (
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1", "content": TEXT},
        schema.CompactionSummaryChunk,
    ),
    (
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": "c1",
            "content": TEXT,
            "_meta": None,
        },
        schema.CompactionSummaryChunk,
    ),
    (
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read", "name": "read_file"},
        schema.ToolCall,
    ),
    (
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "name": "grep"},
        schema.ToolCallProgress,
    ),
    (
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "name": None},
        schema.ToolCallProgress,
    ),
]


@pytest.mark.parametrize(("wire", "cls"), EXAMPLES, ids=lambda v: str(v)[:60])
def test_new_updates_decode_and_encode_exactly(wire: dict[str, Any], cls: type) -> None:
    assert not schema_errors(wire, "SessionUpdate")
    update = acp_sdk.decode(wire, schema.SessionUpdate)
    assert type(update) is cls
    assert orjson.loads(acp_sdk.encode(update)) == wire
    note = {"sessionId": "s1", "update": wire, "_meta": {"n": 1}}
    decoded = acp_sdk.decode(note, schema.SessionNotification)
    assert decoded.update == update
    assert orjson.loads(acp_sdk.encode(decoded)) == note


@pytest.mark.parametrize(("wire", "cls"), EXAMPLES, ids=lambda v: str(v)[:60])
def test_unknown_fields_of_the_new_updates_are_kept(wire: dict[str, Any], cls: Any) -> None:
    with_extra = {**wire, "futureField": {"x": [1, None]}}
    update: Any = acp_sdk.decode(with_extra, schema.SessionUpdate)
    assert type(update) is cls
    assert update.extra == {"futureField": {"x": [1, None]}}
    assert orjson.loads(acp_sdk.encode(update)) == with_extra


def describe(update: schema.SessionUpdate) -> str:
    match update:
        case schema.Notice(severity=severity, title=title):
            return f"notice {severity}: {title}"
        case schema.CompactionUpdate(compaction_id=cid, status=status):
            return f"compaction {cid} {status}"
        case schema.CompactionSummaryChunk(compaction_id=cid, content=schema.TextContent(text=t)):
            return f"summary {cid} += {t}"
        case schema.ToolCall(name=name):
            return f"tool {name}"
        case _:
            return "other"


def test_match_on_the_new_classes() -> None:
    said = [describe(acp_sdk.decode(w, schema.SessionUpdate)) for w, _ in EXAMPLES[:9:4]]
    assert said == [
        "notice info: Indexing",
        "compaction c1 in_progress",
        "summary c1 += Summary so far",
    ]
    assert describe(acp_sdk.decode(EXAMPLES[10][0], schema.SessionUpdate)) == "tool read_file"


def test_compaction_patch_fields_have_three_states() -> None:
    # "`summary`, `error`, and `_meta` have patch semantics: omission leaves the stored
    # value unchanged, `null` clears it, and a concrete value replaces it."
    base = {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed"}
    absent = acp_sdk.decode(base, schema.CompactionUpdate)
    assert absent.summary is UNSET
    assert absent.error is UNSET
    assert absent.meta is UNSET
    cleared = acp_sdk.decode(
        {**base, "summary": None, "error": None, "_meta": None}, schema.CompactionUpdate
    )
    assert cleared.summary is None
    assert cleared.error is None
    assert cleared.meta is None
    built = schema.CompactionUpdate(compaction_id="c1", status="completed", summary=None)
    assert orjson.loads(acp_sdk.encode(built)) == {**base, "summary": None}
    assert (
        orjson.loads(
            acp_sdk.encode(schema.CompactionUpdate(compaction_id="c1", status="completed"))
        )
        == base
    )


def test_tool_call_update_name_is_not_three_state() -> None:
    # "Omitting it or sending `null` both mean that the existing name is left unchanged."
    absent = acp_sdk.decode({"toolCallId": "t"}, schema.ToolCallUpdate)
    null = acp_sdk.decode({"toolCallId": "t", "name": None}, schema.ToolCallUpdate)
    assert absent.name is None
    assert null.name is None
    assert absent == null


def test_new_client_capabilities() -> None:
    caps = schema.ClientCapabilities(
        session=schema.ClientSessionCapabilities(
            notices=schema.NoticeCapabilities(), compaction=schema.CompactionCapabilities()
        )
    )
    wire = orjson.loads(acp_sdk.encode(caps))
    assert wire == {"session": {"notices": {}, "compaction": {}}}
    assert acp_sdk.decode(wire, schema.ClientCapabilities) == caps
    # An empty capability object keeps what a newer peer puts in it.
    odd = {"session": {"notices": {"levels": ["info"]}}}
    assert orjson.loads(acp_sdk.encode(acp_sdk.decode(odd, schema.ClientCapabilities))) == odd


def test_default_on_null_round_trips_losslessly() -> None:
    wire = {"cwd": "/w", "mcpServers": None, "additionalDirectories": None}
    request = acp_sdk.decode(wire, schema.NewSessionRequest)
    assert request.mcp_servers == []
    assert request.additional_directories == []
    assert orjson.loads(acp_sdk.encode(request)) == wire
    # Built by hand (or changed with attrs.evolve), the value is what it says: `[]`.
    assert orjson.loads(acp_sdk.encode(schema.NewSessionRequest(cwd="/w", mcp_servers=[]))) == {
        "cwd": "/w",
        "mcpServers": [],
    }


def test_an_invalid_mcp_server_is_an_error_no_longer_skipped() -> None:
    # v1.21.0 marked `mcpServers` skip-invalid-items: the bad entry was dropped silently.
    wire = {"cwd": "/w", "mcpServers": [{"name": "ok", "command": "c", "args": [], "env": []}, 7]}
    with pytest.raises(acp_sdk.DecodeError) as caught:
        acp_sdk.decode(wire, schema.NewSessionRequest)
    assert caught.value.path_text == "mcpServers[1]"


def test_an_invalid_item_inside_a_stdio_server_names_its_whole_path() -> None:
    server = {"name": "x", "command": "c", "args": ["ok", 7], "env": []}
    with pytest.raises(acp_sdk.DecodeError) as caught:
        acp_sdk.decode({"cwd": "/w", "mcpServers": [server]}, schema.NewSessionRequest)
    assert caught.value.path_text == "mcpServers[0].args[1]"
    null_args = {**server, "args": None, "env": None}
    request = acp_sdk.decode({"cwd": "/w", "mcpServers": [null_args]}, schema.NewSessionRequest)
    assert request.mcp_servers == [schema.McpServerStdio(name="x", command="c", args=[], env=[])]
    assert orjson.loads(acp_sdk.encode(request))["mcpServers"] == [null_args]
