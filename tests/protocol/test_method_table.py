"""The method table: generated from the schema, equal to meta.json, invariants enforced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from acp_sdk import Side, schema, unstable
from acp_sdk.methods import (
    CAPABILITY_ROOTS,
    GATE_UNKNOWN_METHOD,
    SESSION_CANCEL,
    SESSION_NEW,
    TABLE,
    Kind,
    Layer,
    Method,
    MethodTable,
    MethodTableError,
    Notification,
    Stability,
)

META = Path(__file__).resolve().parents[2] / "acp_sdk/_codegen/schema/v1"


def _meta_wires(name: str) -> dict[str, set[str]]:
    meta = json.loads((META / name).read_text(encoding="utf-8"))
    return {
        group: set(meta.get(group, {}).values())
        for group in ("agentMethods", "clientMethods", "protocolMethods", "proxyMethods")
    }


def _table_wires(table: MethodTable) -> dict[str, set[str]]:
    return {
        "agentMethods": {
            r.wire
            for r in table
            if r.handled_by in (Side.AGENT, Side.BOTH) and r.layer is not Layer.PROTOCOL
        },
        "clientMethods": {
            r.wire
            for r in table
            if r.handled_by in (Side.CLIENT, Side.BOTH) and r.layer is not Layer.PROTOCOL
        },
        "protocolMethods": {r.wire for r in table if r.layer is Layer.PROTOCOL},
        "proxyMethods": {r.wire for r in table if r.handled_by is Side.PROXY},
    }


def test_stable_rows_equal_meta_json() -> None:
    assert _table_wires(TABLE) == _meta_wires("meta.json")


def test_stable_and_unstable_rows_equal_meta_unstable_json() -> None:
    assert _table_wires(unstable.TABLE) == _meta_wires("meta.unstable.json")
    # The pinned list's own shape: what the unstable schema added since v1.21.0 is there,
    # what it removed is gone (next-edit suggestions, document/*, mcp/connect|disconnect).
    wires = {r.wire for r in unstable.TABLE}
    added = {"session/set_title", "session/status", "session/archive", "session/unarchive"}
    assert added | {"auth/status", "auth/status_update", "proxy/initialize"} <= wires
    assert not {w for w in wires if w.startswith(("nes/", "document/", "mcp/connect"))}
    assert "mcp/disconnect" not in wires
    assert {r.wire for r in unstable.TABLE if r.stability is Stability.STABLE} == {
        r.wire for r in TABLE
    }


def test_a_typed_row() -> None:
    assert SESSION_NEW.wire == "session/new"
    assert SESSION_NEW.params_type is schema.NewSessionRequest
    assert SESSION_NEW.result_type is schema.NewSessionResponse
    assert SESSION_NEW.handled_by is Side.AGENT
    assert SESSION_NEW.kind is Kind.REQUEST
    assert SESSION_CANCEL.layer is Layer.SESSION_CONTROL
    assert SESSION_CANCEL.result_type is None


def test_mcp_message_is_a_client_request_and_an_agent_notification() -> None:
    # schema.unstable.json: MessageMcpRequest is `x-side: client` (the agent asks the client's
    # ACP-transport MCP server), MessageMcpNotification `x-side: agent` (the client's server
    # answers the agent's active request with notifications).
    rows = unstable.TABLE.by_wire("mcp/message")
    assert {(r.kind, r.handled_by) for r in rows} == {
        (Kind.REQUEST, Side.CLIENT),
        (Kind.NOTIFICATION, Side.AGENT),
    }
    assert unstable.TABLE.get(Side.CLIENT, "mcp/message", Kind.REQUEST) is not None
    assert unstable.TABLE.get(Side.AGENT, "mcp/message", Kind.NOTIFICATION) is not None
    assert unstable.TABLE.get(Side.AGENT, "mcp/message", Kind.REQUEST) is None


GATES = [
    ("session/load", Side.AGENT, "agentCapabilities.loadSession"),
    ("session/list", Side.AGENT, "agentCapabilities.sessionCapabilities.list"),
    ("session/delete", Side.AGENT, "agentCapabilities.sessionCapabilities.delete"),
    ("session/resume", Side.AGENT, "agentCapabilities.sessionCapabilities.resume"),
    ("session/close", Side.AGENT, "agentCapabilities.sessionCapabilities.close"),
    ("logout", Side.AGENT, "agentCapabilities.auth.logout"),
    ("fs/read_text_file", Side.CLIENT, "clientCapabilities.fs.readTextFile"),
    ("fs/write_text_file", Side.CLIENT, "clientCapabilities.fs.writeTextFile"),
    ("terminal/create", Side.CLIENT, "clientCapabilities.terminal"),
    ("elicitation/create", Side.CLIENT, "clientCapabilities.elicitation"),
    ("session/new", Side.AGENT, None),
    ("session/prompt", Side.AGENT, None),
    ("session/request_permission", Side.CLIENT, None),
]


@pytest.mark.parametrize(("wire", "side", "gate"), GATES)
def test_gates(wire: str, side: Side, gate: str | None) -> None:
    assert TABLE.gate_for(wire, side) == gate


def test_gate_lookup_tells_unknown_from_baseline() -> None:
    assert TABLE.gate_for("session/new", Side.AGENT) is None
    assert TABLE.gate_for("session/nope", Side.AGENT) is GATE_UNKNOWN_METHOD
    assert TABLE.gate_for("fs/read_text_file", Side.AGENT) is GATE_UNKNOWN_METHOD


def test_lookups_by_side() -> None:
    agent = {r.handler_name for r in TABLE.handled_by(Side.AGENT)}
    assert {
        "initialize",
        "new_session",
        "prompt",
        "cancel",
        "set_mode",
        "set_config_option",
    } <= agent
    assert "read_text_file" not in agent
    assert {r.wire for r in TABLE.sent_by(Side.CLIENT)} == {
        r.wire for r in TABLE.handled_by(Side.AGENT)
    }


@attrs.frozen(kw_only=True, order=False)
class Ping:
    value: int


def test_extension_rows() -> None:
    ping = Method.extension("_acme/ping", handled_by=Side.AGENT, params_type=Ping, result_type=Ping)
    table = TABLE.extend([ping])
    assert table.get(Side.AGENT, "_acme/ping", Kind.REQUEST) is ping
    assert ping.stability is Stability.EXTENSION
    assert TABLE.get(Side.AGENT, "_acme/ping", Kind.REQUEST) is None  # the original is untouched


def _row(**changes: Any) -> Any:
    return attrs.evolve(SESSION_NEW, **changes)


BROKEN = [
    ("duplicate key", [SESSION_NEW, _row(handler_name="other")], "duplicate"),
    ("handler name twice", [SESSION_NEW, _row(wire="session/new2")], "handler name"),
    ("core name with _", [_row(wire="_session/new")], "never start"),
    ("extension without _", [_row(stability=Stability.EXTENSION)], "start with '_'"),
    ("$/ on an app row", [_row(wire="$/new")], "protocol rows"),
    ("request without result", [_row(result_type=None)], "notification has no result"),
    ("gate on the wrong side", [_row(gate="clientCapabilities.fs.readTextFile")], "receiver"),
    ("gate that does not resolve", [_row(gate="agentCapabilities.nope")], "breaks at"),
    ("gate through a scalar", [_row(gate="agentCapabilities.loadSession.x")], "non-object"),
    ("gate ending on a non-capability", [_row(gate="agentCapabilities._meta")], "non-capability"),
    (
        "notification with a result",
        [Notification(wire="x/y", handled_by=Side.AGENT, params_type=Ping, handler_name="y")],
        None,
    ),
]


@pytest.mark.parametrize(("rows", "message"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_invariants_are_enforced(rows: list[Any], message: str | None) -> None:
    if message is None:  # control row: a well-formed notification builds
        MethodTable(rows, capability_roots=CAPABILITY_ROOTS)
        return
    with pytest.raises(MethodTableError, match=message):
        MethodTable(rows, capability_roots=CAPABILITY_ROOTS)
