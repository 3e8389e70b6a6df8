"""Capabilities a sender needs beyond a method's own gate, through `ConnectionPair`.

- A `session/update` variant the schema gates ("Agents MUST only send this update when the
  Client advertised the `session.notices` Client capability"): the agent side refuses to
  send it (`CapabilityNotNegotiated`, no bytes) unless the client advertised it; a client
  that receives one anyway decodes and delivers it (lenient: the MUST binds the agent).
- The unstable `auth/status_update`, which only an agent that advertised `auth.status`
  itself may send.
- The unstable methods' gates on both sides, and the unstable params that need one.

The cases come from the tables themselves (`TABLE.update_gates`, the rows' gates), so a
schema that gates another update or method is tested by the same code.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import acp_sdk
from acp_sdk import CapabilityNotNegotiated, ErrorCode, LocalProtocolError, Side, schema, unstable
from acp_sdk.methods import SESSION_UPDATE, TABLE, Method, MethodTable, MethodTableError, Stability
from acp_sdk.protocol import (
    ErrorReceived,
    FrameRejected,
    NotificationReceived,
    RequestReceived,
    update_capability,
)
from acp_sdk.testing import ConnectionPair
from tests.schema_minimal import minimal
from tests.schema_tools import raw_schema


def _update_wire(tag: str, unstable_schema: bool) -> dict[str, Any]:
    """A minimal valid update of this `sessionUpdate` tag, from the raw schema."""
    arms = raw_schema(unstable_schema)["$defs"]["SessionUpdate"]["oneOf"]
    arm = next(a for a in arms if a["properties"]["sessionUpdate"]["const"] == tag)
    return {**minimal(arm, unstable_schema), "sessionUpdate": tag}


def _capabilities(path: str, unstable_schema: bool, advertised: bool) -> Any:
    """Client capabilities with exactly `path` present as `{}` (or nothing)."""
    module: Any = unstable if unstable_schema else schema
    wire: dict[str, Any] = {}
    if advertised:
        node = wire
        segments = path.split(".")[1:]
        for segment in segments[:-1]:
            node = node.setdefault(segment, {})
        node[segments[-1]] = {}
    return acp_sdk.decode(wire, module.ClientCapabilities)


CASES = [
    pytest.param(flag, tag, path, id=f"{'unstable.' if flag else ''}{tag}")
    for flag, table in ((False, TABLE), (True, unstable.TABLE))
    for tag, path in table.update_gates.items()
]


def test_the_tables_gate_the_updates_the_schema_names() -> None:
    assert dict(TABLE.update_gates) == {
        "notice": "clientCapabilities.session.notices",
        "compaction_update": "clientCapabilities.session.compaction",
        "compaction_summary_chunk": "clientCapabilities.session.compaction",
    }
    assert dict(TABLE.update_gates).items() <= dict(unstable.TABLE.update_gates).items()
    assert unstable.TABLE.update_gates["plan_update"] == "clientCapabilities.plan"
    assert unstable.TABLE.update_gates["subagent_update"] == "clientCapabilities.subagents"


def handshake(
    flag: bool, client_capabilities: Any = None, agent_capabilities: Any = None
) -> ConnectionPair:
    """`ConnectionPair.initialize`, with the models of the pair's schema (an unstable
    capability inside a stable `InitializeRequest` would encode as the stable one)."""
    if not flag:
        pair = ConnectionPair()
        pair.initialize(
            client_capabilities=client_capabilities, agent_capabilities=agent_capabilities
        )
        return pair
    pair = ConnectionPair(table=unstable.TABLE)
    request = unstable.InitializeRequest(
        protocol_version=1,
        client_capabilities=client_capabilities or unstable.ClientCapabilities(),
    )
    _, data = pair.client.send_request(unstable.INITIALIZE, request)
    [received] = pair.deliver_to_agent(data)
    assert isinstance(received, RequestReceived)
    response = unstable.InitializeResponse(
        protocol_version=1,
        agent_capabilities=agent_capabilities or unstable.AgentCapabilities(),
    )
    pair.deliver_to_client(pair.agent.send_response(received.request_id, response))
    return pair


def _pair(flag: bool, path: str, advertised: bool) -> tuple[ConnectionPair, Any]:
    pair = handshake(flag, client_capabilities=_capabilities(path, flag, advertised))
    row = unstable.SESSION_UPDATE if flag else SESSION_UPDATE
    return pair, row


def _note(flag: bool, tag: str) -> Any:
    module: Any = unstable if flag else schema
    wire = {"sessionId": "s1", "update": _update_wire(tag, flag)}
    return acp_sdk.decode(wire, module.SessionNotification)


@pytest.mark.parametrize(("flag", "tag", "path"), CASES)
def test_an_agent_cannot_send_a_gated_update_the_client_did_not_advertise(
    flag: bool, tag: str, path: str
) -> None:
    pair, row = _pair(flag, path, advertised=False)
    chunk = _note(flag, "agent_message_chunk")
    pair.agent.send_notification(row, chunk)  # the row's own checks pass (and are cached)
    with pytest.raises(CapabilityNotNegotiated) as caught:
        pair.agent.send_notification(row, _note(flag, tag))
    assert caught.value.method == "session/update"
    assert caught.value.capability == path
    assert not caught.value.ours
    assert pair.agent.data_to_send() == b""  # nothing reached the wire
    # The connection is as it was: ungated updates still go, the gated one still does not.
    [event] = pair.deliver_to_client(pair.agent.send_notification(row, chunk))
    assert isinstance(event, NotificationReceived)
    with pytest.raises(CapabilityNotNegotiated):
        pair.agent.send_notification(row, _note(flag, tag))


@pytest.mark.parametrize(("flag", "tag", "path"), CASES)
def test_an_advertised_update_goes_through_typed(flag: bool, tag: str, path: str) -> None:
    pair, row = _pair(flag, path, advertised=True)
    note = _note(flag, tag)
    data = pair.agent.send_notification(row, note)
    assert orjson.loads(data)["params"]["update"]["sessionUpdate"] == tag
    [event] = pair.deliver_to_client(data)
    assert isinstance(event, NotificationReceived)
    assert event.params == note
    assert type(event.params.update) is type(note.update)


@pytest.mark.parametrize(("flag", "tag", "path"), CASES)
def test_a_client_delivers_a_gated_update_it_did_not_advertise(
    flag: bool, tag: str, path: str
) -> None:
    # A non-conforming agent (ours with check_capability=False stands in for it): the
    # client does not drop what it can decode.
    pair, row = _pair(flag, path, advertised=False)
    note = _note(flag, tag)
    [event] = pair.deliver_to_client(
        pair.agent.send_notification(row, note, check_capability=False)
    )
    assert isinstance(event, NotificationReceived)
    assert event.params == note


def test_a_hand_built_unknown_update_with_a_gated_tag_is_gated() -> None:
    pair, row = _pair(False, "clientCapabilities.session.notices", advertised=False)
    # An unknown kind first: the answer for `UnknownSessionUpdate` is not kept per class.
    vendor = schema.UnknownSessionUpdate(raw={"sessionUpdate": "_vendor/x"})
    pair.agent.send_notification(row, schema.SessionNotification(session_id="s1", update=vendor))
    raw = {"sessionUpdate": "notice", "severity": "info", "title": "t"}
    note = schema.SessionNotification(session_id="s1", update=schema.UnknownSessionUpdate(raw=raw))
    with pytest.raises(CapabilityNotNegotiated):
        pair.agent.send_notification(row, note)


def test_null_and_unknown_shapes_of_the_capability_are_not_advertised() -> None:
    sessions: list[dict[str, Any]] = [{"notices": None}, {"compaction": {}}, {}]
    for session in sessions:
        caps = acp_sdk.decode({"session": session}, schema.ClientCapabilities)
        pair = ConnectionPair()
        pair.initialize(client_capabilities=caps)
        with pytest.raises(CapabilityNotNegotiated):
            pair.agent.send_notification(SESSION_UPDATE, _note(False, "notice"))


def test_update_capability_reads_the_tag() -> None:
    gates = TABLE.update_gates
    assert update_capability(gates, _note(False, "notice")) == "clientCapabilities.session.notices"
    assert update_capability(gates, _note(False, "agent_message_chunk")) is None
    assert update_capability(gates, object()) is None


def test_the_table_checks_its_extra_gates() -> None:
    rows = TABLE.rows
    roots = {
        "agentCapabilities": schema.AgentCapabilities,
        "clientCapabilities": schema.ClientCapabilities,
    }
    with pytest.raises(MethodTableError, match="the client's"):
        MethodTable(rows, capability_roots=roots, update_gates={"notice": "agentCapabilities.auth"})
    with pytest.raises(MethodTableError, match="breaks at"):
        MethodTable(
            rows, capability_roots=roots, update_gates={"notice": "clientCapabilities.nope"}
        )
    with pytest.raises(MethodTableError, match="the sender's"):
        MethodTable(
            rows, capability_roots=roots, sender_gates={"session/update": "clientCapabilities.fs"}
        )
    extended = TABLE.extend([])
    assert extended.update_gates == TABLE.update_gates


# ------------------------------------------------------------------ auth/status_update


def _unstable_pair(agent_caps: dict[str, Any]) -> ConnectionPair:
    caps = acp_sdk.decode(agent_caps, unstable.AgentCapabilities)
    return handshake(True, agent_capabilities=caps)


STATUS = unstable.AuthStatusUpdateNotification(state="authenticated")


def test_auth_status_update_needs_the_agents_own_capability() -> None:
    assert unstable.TABLE.sender_gates == {"auth/status_update": "agentCapabilities.auth.status"}
    pair = _unstable_pair({})
    with pytest.raises(CapabilityNotNegotiated) as caught:
        pair.agent.send_notification(unstable.AUTH_STATUS_UPDATE, STATUS)
    assert caught.value.ours
    assert caught.value.capability == "agentCapabilities.auth.status"
    assert "this side did not advertise" in str(caught.value)
    assert pair.agent.data_to_send() == b""
    # A client delivers one anyway (a non-conforming agent).
    data = pair.agent.send_notification(unstable.AUTH_STATUS_UPDATE, STATUS, check_capability=False)
    [event] = pair.deliver_to_client(data)
    assert isinstance(event, NotificationReceived)
    assert event.params == STATUS


def test_auth_status_update_goes_when_the_agent_advertised_it() -> None:
    pair = _unstable_pair({"auth": {"status": {}}})
    [event] = pair.deliver_to_client(
        pair.agent.send_notification(unstable.AUTH_STATUS_UPDATE, STATUS)
    )
    assert isinstance(event, NotificationReceived)
    assert type(event.params) is unstable.AuthStatusUpdateNotification


def test_the_error_pickles_with_its_side() -> None:
    import pickle

    error = CapabilityNotNegotiated(
        "auth/status_update", "agentCapabilities.auth.status", ours=True
    )
    again = pickle.loads(pickle.dumps(error))
    assert (again.method, again.capability, again.ours, str(again)) == (
        error.method,
        error.capability,
        True,
        str(error),
    )


# ------------------------------------------------------------------ unstable method gates

GATED_ROWS = [r for r in unstable.TABLE if r.stability is Stability.UNSTABLE and r.gate]
GATED = [pytest.param(row, id=row.wire) for row in GATED_ROWS]


def test_the_new_unstable_methods_are_gated() -> None:
    gates = {row.wire: row.gate for row in GATED_ROWS}
    assert gates == {
        "auth/status": "agentCapabilities.auth.status",
        "providers/disable": "agentCapabilities.providers",
        "providers/list": "agentCapabilities.providers",
        "providers/set": "agentCapabilities.providers",
        "session/archive": "agentCapabilities.sessionCapabilities.archive",
        "session/fork": "agentCapabilities.sessionCapabilities.fork",
        "session/set_title": "agentCapabilities.sessionCapabilities.title",
        "session/status": "agentCapabilities.sessionCapabilities.status",
        "session/unarchive": "agentCapabilities.sessionCapabilities.archive",
    }


def _params(row: Any) -> Any:
    name = next(n for n in unstable.__all__ if getattr(unstable, n) is row.params_type)
    return acp_sdk.decode(minimal(raw_schema(True)["$defs"][name], True), row.params_type)


def _advertising(gate: str) -> dict[str, Any]:
    wire: dict[str, Any] = {}
    node = wire
    segments = gate.split(".")[1:]
    for segment in segments[:-1]:
        node = node.setdefault(segment, {})
    node[segments[-1]] = {}
    return wire


@pytest.mark.parametrize("row", GATED)
def test_an_unstable_method_is_gated_on_both_sides(row: Any) -> None:
    pair = _unstable_pair({})
    params = _params(row)
    with pytest.raises(CapabilityNotNegotiated) as caught:
        pair.client.send_request(row, params)
    assert caught.value.capability == row.gate
    # Sent anyway, the agent answers "method not found" before decoding the params.
    rid, data = pair.client.send_request(row, params, check_capability=False)
    [rejected] = pair.deliver_to_agent(data)
    assert isinstance(rejected, FrameRejected)
    assert rejected.replied
    [refused] = pair.client.events()
    assert isinstance(refused, ErrorReceived)
    assert refused.request_id == rid
    assert refused.error.code == ErrorCode.METHOD_NOT_FOUND
    # Advertised: it reaches the agent, typed.
    pair = _unstable_pair(_advertising(row.gate))
    _rid, data = pair.client.send_request(row, params)
    [event] = pair.deliver_to_agent(data)
    assert isinstance(event, RequestReceived)
    assert type(event.params) is type(params)


def test_proxy_rows_are_for_conductors_only() -> None:
    pair = _unstable_pair({})
    for row in unstable.TABLE:
        if row.handled_by is not Side.PROXY:
            continue
        for side in (pair.client, pair.agent):
            if isinstance(row, Method):
                with pytest.raises(LocalProtocolError, match="proxy"):
                    side.send_request(row, _params(row))
            else:
                with pytest.raises(LocalProtocolError, match="proxy"):
                    side.send_notification(row, _params(row))
    assert {r.wire for r in unstable.TABLE if r.handled_by is Side.PROXY} == {
        "proxy/initialize",
        "proxy/successor",
    }
    assert Side.PROXY.peer is Side.PROXY


# ------------------------------------------------------------------ unstable params

SYSTEM_PROMPT = "agentCapabilities.sessionCapabilities.systemPrompt"
APPEND = {"mode": "append", "content": [{"type": "text", "text": "Be brief."}]}
OVERRIDE = {**APPEND, "mode": "override"}
ACP_SERVER = {"type": "acp", "name": "tools", "serverId": "srv1"}

PARAMS_CASES = [
    ("session/new", {"cwd": "/", "mcpServers": [], "systemPrompt": APPEND}, [SYSTEM_PROMPT]),
    (
        "session/new",
        {"cwd": "/", "mcpServers": [], "systemPrompt": OVERRIDE},
        [SYSTEM_PROMPT, SYSTEM_PROMPT + ".mode.override"],
    ),
    ("session/new", {"cwd": "/", "mcpServers": [], "systemPrompt": None}, []),
    (
        "session/fork",
        {"sessionId": "s", "cwd": "/", "systemPrompt": APPEND, "mcpServers": [ACP_SERVER]},
        ["agentCapabilities.mcpCapabilities.acp", SYSTEM_PROMPT],
    ),
    (
        "session/load",
        {"sessionId": "s", "cwd": "/", "mcpServers": [ACP_SERVER]},
        ["agentCapabilities.mcpCapabilities.acp"],
    ),
    ("session/list", {"archived": "include"}, ["agentCapabilities.sessionCapabilities.archive"]),
    ("session/list", {}, []),
]


@pytest.mark.parametrize(("wire", "params", "needed"), PARAMS_CASES)
def test_unstable_params_need_their_capabilities(
    wire: str, params: dict[str, Any], needed: list[str]
) -> None:
    from acp_sdk.protocol import required_by_params

    [row] = [r for r in unstable.TABLE.by_wire(wire) if isinstance(r, Method)]
    decoded = acp_sdk.decode(params, row.params_type)
    assert required_by_params(wire, decoded) == needed
    if not needed:
        return
    # The method's own gate is advertised; what the params need is not.
    own_gates: dict[str, dict[str, Any]] = {
        "session/fork": {"sessionCapabilities": {"fork": {}}},
        "session/load": {"loadSession": True},
        "session/list": {"sessionCapabilities": {"list": {}}},
    }
    caps = own_gates.get(wire, {})
    pair = _unstable_pair(caps)
    with pytest.raises(CapabilityNotNegotiated) as caught:
        pair.client.send_request(row, decoded)
    assert caught.value.capability == needed[0]
    # Sent anyway, the agent refuses the params: -32602 naming the capability.
    _rid, data = pair.client.send_request(row, decoded, check_capability=False)
    [rejected] = pair.deliver_to_agent(data)
    assert isinstance(rejected, FrameRejected)
    [refused] = pair.client.events()
    assert isinstance(refused, ErrorReceived)
    assert refused.error.code == ErrorCode.INVALID_PARAMS
    assert refused.error.data == {"capability": needed[0]}


def test_check_outbound_raises_what_sending_would_and_sends_nothing() -> None:
    pair, row = _pair(False, "clientCapabilities.session.notices", advertised=False)
    with pytest.raises(CapabilityNotNegotiated):
        pair.agent.check_outbound(row, _note(False, "notice"))
    pair.agent.check_outbound(row, _note(False, "notice"), check_capability=False)
    pair.agent.check_outbound(row, _note(False, "agent_message_chunk"))
    assert pair.agent.data_to_send() == b""
    with pytest.raises(LocalProtocolError):  # not the agent's to send
        pair.agent.check_outbound(unstable.SESSION_SET_TITLE, None)
