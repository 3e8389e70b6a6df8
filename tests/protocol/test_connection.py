"""The sans-IO connection, driven through an in-memory pair: every rule, table-driven."""

from __future__ import annotations

import inspect
from typing import Any

import orjson
import pytest

from acp_sdk import (
    CapabilityNotNegotiated,
    Connection,
    ConnectionClosed,
    EncodeError,
    LocalProtocolError,
    RemoteProtocolError,
    RequestError,
    RequestTimeout,
    UnsupportedProtocolVersion,
)
from acp_sdk import methods as m
from acp_sdk import schema as s
from acp_sdk.protocol import (
    NEED_DATA,
    CallFailed,
    CancelRequested,
    ConnectionClosedEvent,
    ErrorReceived,
    FrameRejected,
    NotificationReceived,
    PromptCancelRequested,
    RequestReceived,
    ResponseReceived,
)
from acp_sdk.protocol import _connection as connection_module
from acp_sdk.protocol import _jsonrpc as rpc
from acp_sdk.protocol._rows import Side
from acp_sdk.protocol._state import TRANSITIONS, Lifecycle, State, Trigger, step
from acp_sdk.testing import ConnectionPair


def ready_agent(**agent_capabilities: Any) -> Connection:
    pair = ConnectionPair()
    pair.initialize(agent_capabilities=s.AgentCapabilities(**agent_capabilities))
    return pair.agent


def state_of(conn: Connection) -> State:
    """`conn.state`, read afresh (mypy keeps a property narrowed after an assert)."""
    return conn.state


def replies(conn: Connection) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in conn.data_to_send().splitlines()]


def frame(**message: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"


NEW_SESSION = {"cwd": "/w", "mcpServers": []}

# ------------------------------------------------------------------ hostile frames

HOSTILE = [
    ("bad json", b"{nope\n", -32700, None),
    ("scalar", b"42\n", -32600, None),
    ("batch", b'[{"jsonrpc":"2.0","id":1,"method":"session/new"}]\n', -32600, None),
    ("string", b'"hi"\n', -32600, None),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":7,"method":"session/new","params":{}}\n', -32600, 7),
    ("no jsonrpc", b'{"id":7,"method":"session/new","params":{}}\n', -32600, 7),
    ("null id", b'{"jsonrpc":"2.0","id":null,"method":"session/new","params":{}}\n', -32600, None),
    ("float id", b'{"jsonrpc":"2.0","id":1.5,"method":"session/new","params":{}}\n', -32600, None),
    ("bool id", b'{"jsonrpc":"2.0","id":true,"method":"session/new","params":{}}\n', -32600, None),
    ("huge id", b'{"jsonrpc":"2.0","id":99999999999999999999,"method":"x"}\n', -32600, None),
    (
        "int64 overflow id",
        b'{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}\n',
        -32600,
        None,
    ),
    ("method is a number", b'{"jsonrpc":"2.0","id":3,"method":5}\n', -32600, 3),
    (
        "params is a list",
        b'{"jsonrpc":"2.0","id":3,"method":"session/new","params":[]}\n',
        -32600,
        3,
    ),
    (
        "params is a string",
        b'{"jsonrpc":"2.0","id":3,"method":"session/new","params":"x"}\n',
        -32600,
        3,
    ),
    ("no method, no result", b'{"jsonrpc":"2.0","id":3}\n', -32600, 3),
    ("bad utf-8", b'{"jsonrpc":"2.0","id":3,"method":"\xff"}\n', -32700, None),
]


@pytest.mark.parametrize(
    ("data", "code", "echo"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE]
)
def test_hostile_frames_get_one_error_reply(data: bytes, code: int, echo: Any) -> None:
    agent = ready_agent()
    agent.receive_data(data)
    [reply] = replies(agent)
    assert reply["error"]["code"] == code
    assert reply["id"] == echo
    assert type(reply["id"]) is type(echo)
    [event] = agent.events()
    assert isinstance(event, FrameRejected)
    assert agent.state is State.READY
    assert agent.inbound_ids == ()


@pytest.mark.parametrize("rid", [0, -1, "", "日本語-🎉", "c1|5", 2**63 - 1, "1"])
def test_ids_are_echoed_exactly(rid: Any) -> None:
    agent = ready_agent()
    agent.receive_data(frame(id=rid, method="session/new", params=NEW_SESSION))
    [event] = agent.events()
    assert isinstance(event, RequestReceived)
    assert event.request_id == rid
    assert type(event.request_id) is type(rid)
    data = agent.send_response(rid, s.NewSessionResponse(session_id="s"))
    assert orjson.loads(data)["id"] == rid
    assert type(orjson.loads(data)["id"]) is type(rid)


def test_int_and_string_ids_are_different_requests() -> None:
    agent = ready_agent()
    agent.receive_data(frame(id=1, method="session/new", params=NEW_SESSION))
    agent.receive_data(frame(id="1", method="session/new", params=NEW_SESSION))
    assert [type(e.request_id) for e in agent.events() if isinstance(e, RequestReceived)] == [
        int,
        str,
    ]


RESPONSE_SHAPED = [
    ("unknown id", {"id": 99, "result": {}}),
    ("both", {"id": 0, "result": {}, "error": {"code": 1, "message": "x"}}),
    ("bad error", {"id": 0, "error": {"code": "x", "message": "x"}}),
    ("error not object", {"id": 0, "error": 5}),
    ("no id", {"result": {}}),
    ("bool id", {"id": True, "result": {}}),
]


@pytest.mark.parametrize(
    "message", [r[1] for r in RESPONSE_SHAPED], ids=[r[0] for r in RESPONSE_SHAPED]
)
def test_response_shaped_frames_are_never_answered(message: dict[str, Any]) -> None:
    pair = ConnectionPair()
    pair.initialize()
    rid, _ = pair.client.send_request(m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[]))
    assert rid == 1
    pair.client.receive_data(frame(**message))
    assert pair.client.data_to_send() == b""
    assert all(isinstance(e, FrameRejected) and not e.replied for e in pair.client.events())
    assert pair.client.pending_ids == (1,)  # nothing resolved the wrong call


@pytest.mark.parametrize("method", ["session/cancel", "$/cancel_request"])
def test_notification_methods_sent_as_requests_get_32601(method: str) -> None:
    agent = ready_agent()
    agent.receive_data(frame(id=5, method=method, params={"sessionId": "s", "requestId": 1}))
    [reply] = replies(agent)
    assert (reply["id"], reply["error"]["code"]) == (5, -32601)
    assert [type(e) for e in agent.events()] == [FrameRejected]


# ------------------------------------------------------------------ lifecycle


def test_requests_before_initialize_are_refused() -> None:
    agent = Connection(Side.AGENT)
    agent.receive_data(frame(id=1, method="session/new", params=NEW_SESSION))
    [reply] = replies(agent)
    assert reply["error"]["code"] == -32600
    assert "initialize" in reply["error"]["data"]["reason"]


def test_second_initialize_is_refused() -> None:
    agent = ready_agent()
    agent.receive_data(frame(id=9, method="initialize", params={"protocolVersion": 1}))
    [reply] = replies(agent)
    assert (reply["id"], reply["error"]["code"]) == (9, -32600)


def test_client_cannot_send_before_initialize() -> None:
    client = Connection(Side.CLIENT)
    with pytest.raises(LocalProtocolError, match="initialize first"):
        client.send_request(m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[]))
    with pytest.raises(LocalProtocolError):
        client.send_notification(m.SESSION_CANCEL, s.CancelNotification(session_id="s"))
    assert client.pending_ids == ()


def test_client_cannot_send_agent_side_methods() -> None:
    pair = ConnectionPair()
    pair.initialize()
    with pytest.raises(LocalProtocolError, match="handled by the client"):
        pair.client.send_request(
            m.FS_READ_TEXT_FILE, s.ReadTextFileRequest(session_id="s", path="/x")
        )


def test_version_negotiation() -> None:
    agent = Connection(Side.AGENT)
    assert agent.negotiate_version(1) == 1
    assert agent.negotiate_version(7) == 1
    client = Connection(Side.CLIENT)
    rid, _ = client.send_request(m.INITIALIZE, s.InitializeRequest(protocol_version=1))
    client.receive_data(frame(id=rid, result={"protocolVersion": 2}))
    [event] = client.events()
    assert isinstance(event, CallFailed)
    assert isinstance(event.error, UnsupportedProtocolVersion)
    assert client.state is State.NEW


def test_initialize_error_returns_to_new() -> None:
    client = Connection(Side.CLIENT)
    rid, _ = client.send_request(m.INITIALIZE, s.InitializeRequest(protocol_version=1))
    client.receive_data(frame(id=rid, error={"code": -32603, "message": "boom"}))
    [event] = client.events()
    assert isinstance(event, ErrorReceived)
    assert event.error == RequestError(-32603, "boom")
    assert client.state is State.NEW


# ------------------------------------------------------------------ capability gates

AGENT_GATED = [
    ("session/load", {"sessionId": "s", "cwd": "/", "mcpServers": []}, {"load_session": True}),
    (
        "session/list",
        {},
        {"session_capabilities": s.SessionCapabilities(list=s.SessionListCapabilities())},
    ),
    (
        "session/delete",
        {"sessionId": "s"},
        {"session_capabilities": s.SessionCapabilities(delete=s.SessionDeleteCapabilities())},
    ),
    (
        "session/resume",
        {"sessionId": "s", "cwd": "/"},
        {"session_capabilities": s.SessionCapabilities(resume=s.SessionResumeCapabilities())},
    ),
    (
        "session/close",
        {"sessionId": "s"},
        {"session_capabilities": s.SessionCapabilities(close=s.SessionCloseCapabilities())},
    ),
    ("logout", {}, {"auth": s.AgentAuthCapabilities(logout=s.LogoutCapabilities())}),
]


@pytest.mark.parametrize(("method", "params", "caps"), AGENT_GATED, ids=[g[0] for g in AGENT_GATED])
def test_agent_gate_matrix(method: str, params: dict[str, Any], caps: dict[str, Any]) -> None:
    closed = ready_agent()
    closed.receive_data(frame(id=1, method=method, params=params))
    [reply] = replies(closed)
    assert reply["error"]["code"] == -32601
    opened = ready_agent(**caps)
    opened.receive_data(frame(id=1, method=method, params=params))
    assert opened.data_to_send() == b""
    assert isinstance(opened.events()[0], RequestReceived)


CLIENT_GATED = [
    (
        "fs/read_text_file",
        {"sessionId": "s", "path": "/x"},
        {"fs": s.FileSystemCapabilities(read_text_file=True)},
    ),
    (
        "fs/write_text_file",
        {"sessionId": "s", "path": "/x", "content": ""},
        {"fs": s.FileSystemCapabilities(write_text_file=True)},
    ),
    ("terminal/create", {"sessionId": "s", "command": "ls"}, {"terminal": True}),
    ("terminal/output", {"sessionId": "s", "terminalId": "t"}, {"terminal": True}),
    ("terminal/release", {"sessionId": "s", "terminalId": "t"}, {"terminal": True}),
    ("terminal/wait_for_exit", {"sessionId": "s", "terminalId": "t"}, {"terminal": True}),
    ("terminal/kill", {"sessionId": "s", "terminalId": "t"}, {"terminal": True}),
    (
        "elicitation/create",
        {"mode": "form", "message": "m", "sessionId": "s", "requestedSchema": {}},
        {"elicitation": s.ElicitationCapabilities(form=s.ElicitationFormCapabilities())},
    ),
]


@pytest.mark.parametrize(
    ("method", "params", "caps"), CLIENT_GATED, ids=[g[0] for g in CLIENT_GATED]
)
def test_client_gate_matrix(method: str, params: dict[str, Any], caps: dict[str, Any]) -> None:
    for capabilities, advertised in (
        (s.ClientCapabilities(), False),
        (s.ClientCapabilities(**caps), True),
    ):
        pair = ConnectionPair()
        pair.initialize(client_capabilities=capabilities)
        pair.client.receive_data(frame(id=1, method=method, params=params))
        out = replies(pair.client)
        if advertised:
            assert out == []
            assert isinstance(pair.client.events()[0], RequestReceived)
        else:
            assert out[0]["error"]["code"] == -32601


def test_gate_beats_params_decode() -> None:
    agent = ready_agent()
    agent.receive_data(frame(id=1, method="session/list", params={"cwd": 5}))
    assert replies(agent)[0]["error"]["code"] == -32601
    agent = ready_agent(
        session_capabilities=s.SessionCapabilities(list=s.SessionListCapabilities())
    )
    agent.receive_data(frame(id=1, method="session/list", params={"cwd": 5}))
    error = replies(agent)[0]["error"]
    assert error["code"] == -32602
    assert error["data"]["path"] == "cwd"


def test_false_boolean_capability_is_not_advertised() -> None:
    agent = ready_agent(load_session=False)
    agent.receive_data(
        frame(id=1, method="session/load", params={"sessionId": "s", "cwd": "/", "mcpServers": []})
    )
    assert replies(agent)[0]["error"]["code"] == -32601


def test_invalid_params_never_echo_values() -> None:
    agent = ready_agent()
    agent.receive_data(
        frame(
            id=1, method="session/prompt", params={"sessionId": "s", "prompt": [{"type": "<evil>"}]}
        )
    )
    [reply] = replies(agent)
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"]["path"] == "prompt[0].type"
    assert "<evil>" not in orjson.dumps(reply).decode()


PARAM_GATES = [
    ("image", {"type": "image", "data": "AA", "mimeType": "image/png"}, {"image": True}),
    ("audio", {"type": "audio", "data": "AA", "mimeType": "audio/wav"}, {"audio": True}),
    (
        "resource",
        {"type": "resource", "resource": {"uri": "u", "text": "t"}},
        {"embedded_context": True},
    ),
]


@pytest.mark.parametrize(
    ("block", "caps"), [p[1:] for p in PARAM_GATES], ids=[p[0] for p in PARAM_GATES]
)
def test_prompt_content_needs_prompt_capabilities(
    block: dict[str, Any], caps: dict[str, Any]
) -> None:
    params = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}, block]}
    agent = ready_agent()
    agent.receive_data(frame(id=1, method="session/prompt", params=params))
    assert replies(agent)[0]["error"]["code"] == -32602
    agent = ready_agent(prompt_capabilities=s.PromptCapabilities(**caps))
    agent.receive_data(frame(id=1, method="session/prompt", params=params))
    assert replies(agent) == []


@pytest.mark.parametrize(
    ("server", "caps"),
    [
        ({"type": "http", "name": "a", "url": "u", "headers": []}, {"http": True}),
        ({"type": "sse", "name": "a", "url": "u", "headers": []}, {"sse": True}),
    ],
)
def test_mcp_transports_need_capabilities(server: dict[str, Any], caps: dict[str, Any]) -> None:
    params = {"cwd": "/", "mcpServers": [server]}
    agent = ready_agent()
    agent.receive_data(frame(id=1, method="session/new", params=params))
    assert replies(agent)[0]["error"]["code"] == -32602
    agent = ready_agent(mcp_capabilities=s.McpCapabilities(**caps))
    agent.receive_data(frame(id=1, method="session/new", params=params))
    assert replies(agent) == []


def test_additional_directories_need_capability() -> None:
    params = {"cwd": "/", "mcpServers": [], "additionalDirectories": ["/extra"]}
    agent = ready_agent()
    agent.receive_data(frame(id=1, method="session/new", params=params))
    assert replies(agent)[0]["error"]["data"]["capability"].endswith("additionalDirectories")


def test_outbound_capability_checks() -> None:
    pair = ConnectionPair()
    pair.initialize()
    with pytest.raises(CapabilityNotNegotiated) as caught:
        pair.client.send_request(m.SESSION_LIST, s.ListSessionsRequest())
    assert caught.value.capability == "agentCapabilities.sessionCapabilities.list"
    image = s.ImageContent(data="AA", mime_type="image/png")
    with pytest.raises(CapabilityNotNegotiated):
        pair.client.send_request(m.SESSION_PROMPT, s.PromptRequest(session_id="s", prompt=[image]))
    _rid, data = pair.client.send_request(
        m.SESSION_LIST, s.ListSessionsRequest(), check_capability=False
    )
    assert orjson.loads(data)["method"] == "session/list"
    with pytest.raises(CapabilityNotNegotiated):
        pair.agent.send_request(
            m.FS_READ_TEXT_FILE, s.ReadTextFileRequest(session_id="s", path="/x")
        )
    assert pair.agent.pending_ids == ()


# ------------------------------------------------------------------ calls and their endings


def test_call_round_trip_decodes_the_expected_type() -> None:
    pair = ConnectionPair()
    pair.initialize()
    rid, data = pair.client.send_request(
        m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[])
    )
    [request] = pair.deliver_to_agent(data)
    assert isinstance(request, RequestReceived)
    assert isinstance(request.params, s.NewSessionRequest)
    [response] = pair.deliver_to_client(
        pair.agent.send_response(rid, s.NewSessionResponse(session_id="s1"))
    )
    assert isinstance(response, ResponseReceived)
    assert response.result == s.NewSessionResponse(session_id="s1")
    assert pair.client.pending_ids == ()


def test_undecodable_result_fails_only_that_call() -> None:
    pair = ConnectionPair()
    pair.initialize()
    first, _ = pair.client.send_request(m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[]))
    second, _ = pair.client.send_request(
        m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[])
    )
    pair.client.receive_data(frame(id=first, result={"sessionId": 5}))
    [event] = pair.client.events()
    assert isinstance(event, CallFailed)
    assert isinstance(event.error, RemoteProtocolError)
    assert pair.client.pending_ids == (second,)


def test_null_result_decodes_as_empty_object() -> None:
    pair = ConnectionPair()
    pair.initialize(agent_capabilities=s.AgentCapabilities(load_session=True))
    rid, _ = pair.client.send_request(
        m.SESSION_LOAD, s.LoadSessionRequest(session_id="s", cwd="/", mcp_servers=[])
    )
    pair.client.receive_data(frame(id=rid, result=None))
    [event] = pair.client.events()
    assert isinstance(event, ResponseReceived)
    assert event.result == s.LoadSessionResponse()


def test_late_and_duplicate_responses_are_no_ops() -> None:
    pair = ConnectionPair()
    pair.initialize()
    rid, _ = pair.client.send_request(m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[]))
    cancel = pair.client.cancel(rid)
    assert orjson.loads(cancel) == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": rid},
    }
    pair.client.receive_data(frame(id=rid, result={"sessionId": "s"}))
    pair.client.receive_data(frame(id=rid, result={"sessionId": "s"}))
    assert all(isinstance(e, FrameRejected) for e in pair.client.events())
    assert pair.client.cancel(rid) == b""


def test_timeout_ends_the_call() -> None:
    pair = ConnectionPair()
    pair.initialize()
    rid, _ = pair.client.send_request(m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[]))
    error, data = pair.client.time_out(rid)
    assert isinstance(error, RequestTimeout)
    assert b"$/cancel_request" in data
    assert pair.client.pending_ids == ()


def test_end_of_input_fails_every_pending_call() -> None:
    pair = ConnectionPair()
    pair.initialize()
    ids = [
        pair.client.send_request(m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[]))[0]
        for _ in range(3)
    ]
    pair.client.receive_data(b"")
    events = pair.client.events()
    assert [e.request_id for e in events if isinstance(e, CallFailed)] == ids
    assert all(isinstance(e.error, ConnectionClosed) for e in events if isinstance(e, CallFailed))
    assert isinstance(events[-1], ConnectionClosedEvent)
    assert pair.client.next_event() is NEED_DATA
    with pytest.raises(ConnectionClosed):
        pair.client.send_request(m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[]))


def test_exactly_one_answer_per_request() -> None:
    agent = ready_agent()
    agent.receive_data(frame(id=4, method="session/new", params=NEW_SESSION))
    agent.receive_data(frame(id=4, method="session/new", params=NEW_SESSION))  # duplicate, dropped
    events = agent.events()
    assert [type(e) for e in events] == [RequestReceived, FrameRejected]
    agent.send_response(4, s.NewSessionResponse(session_id="s"))
    with pytest.raises(LocalProtocolError):
        agent.send_response(4, s.NewSessionResponse(session_id="s"))
    with pytest.raises(LocalProtocolError):
        agent.send_error(4, RequestError.internal_error())


def test_error_constructors_cover_every_spec_code() -> None:
    codes = {
        RequestError.parse_error().code,
        RequestError.invalid_request().code,
        RequestError.method_not_found("x").code,
        RequestError.invalid_params().code,
        RequestError.internal_error().code,
        RequestError.request_cancelled().code,
        RequestError.auth_required().code,
        RequestError.resource_not_found("u").code,
    }
    assert codes == {-32700, -32600, -32601, -32602, -32603, -32800, -32000, -32002}


# ------------------------------------------------------------------ cancellation


def test_cancel_request_inbound() -> None:
    pair = ConnectionPair()
    pair.initialize()
    rid, data = pair.client.send_request(
        m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[])
    )
    pair.deliver_to_agent(data)
    events = pair.deliver_to_agent(pair.client.cancel(rid))
    assert events == [CancelRequested(request_id=rid)]
    answer = pair.agent.send_error(rid, RequestError.request_cancelled())
    assert orjson.loads(answer)["error"]["code"] == -32800
    # A cancel for a request already answered changes nothing.
    assert pair.deliver_to_agent(frame(method="$/cancel_request", params={"requestId": rid})) == []


def _prompting_pair() -> tuple[ConnectionPair, int | str]:
    pair = ConnectionPair()
    pair.initialize()
    rid, data = pair.client.send_request(
        m.SESSION_PROMPT, s.PromptRequest(session_id="s1", prompt=[s.TextContent(text="wait")])
    )
    pair.deliver_to_agent(data)
    return pair, rid


def test_session_cancel_routes_to_the_running_prompt() -> None:
    pair, rid = _prompting_pair()
    events = pair.deliver_to_agent(
        pair.client.send_notification(m.SESSION_CANCEL, s.CancelNotification(session_id="s1"))
    )
    assert events[0] == PromptCancelRequested(request_id=rid, session_id="s1")
    assert isinstance(events[1], NotificationReceived)


def test_session_close_cancels_the_running_prompt_as_session_cancel_would() -> None:
    """session-setup.mdx § Closing a Session: the agent MUST cancel ongoing work "as if
    session/cancel had been called" (found by `python -m acp_sdk check`)."""
    pair = ConnectionPair()
    caps = s.AgentCapabilities(
        session_capabilities=s.SessionCapabilities(close=s.SessionCloseCapabilities())
    )
    pair.initialize(agent_capabilities=caps)
    prompts = []
    for session_id in ("s1", "s2"):
        rid, data = pair.client.send_request(
            m.SESSION_PROMPT,
            s.PromptRequest(session_id=session_id, prompt=[s.TextContent(text="wait")]),
        )
        pair.deliver_to_agent(data)
        prompts.append(rid)
    close_id, data = pair.client.send_request(
        m.SESSION_CLOSE, s.CloseSessionRequest(session_id="s1")
    )
    events = pair.deliver_to_agent(data)
    assert events[0] == PromptCancelRequested(request_id=prompts[0], session_id="s1")
    # The agent sees the cancel it would have been sent, then the close.
    assert isinstance(events[1], NotificationReceived)
    assert events[1].row is m.SESSION_CANCEL
    assert events[1].params == s.CancelNotification(session_id="s1")
    assert isinstance(events[2], RequestReceived)
    assert events[2].request_id == close_id
    assert len(events) == 3  # s2's turn runs on
    answer = pair.agent.send_response(prompts[0], s.PromptResponse(stop_reason="end_turn"))
    [event] = pair.deliver_to_client(answer)
    assert isinstance(event, ResponseReceived)
    assert event.result.stop_reason == "cancelled"


def test_session_close_of_an_idle_session_cancels_nothing() -> None:
    pair = ConnectionPair()
    caps = s.AgentCapabilities(
        session_capabilities=s.SessionCapabilities(close=s.SessionCloseCapabilities())
    )
    pair.initialize(agent_capabilities=caps)
    close_id, data = pair.client.send_request(
        m.SESSION_CLOSE, s.CloseSessionRequest(session_id="s1")
    )
    [event] = pair.deliver_to_agent(data)
    assert isinstance(event, RequestReceived)
    assert event.request_id == close_id


@pytest.mark.parametrize("handler_answer", ["end_turn", "error"])
def test_cancel_that_arrives_first_wins(handler_answer: str) -> None:
    pair, rid = _prompting_pair()
    pair.deliver_to_agent(
        pair.client.send_notification(m.SESSION_CANCEL, s.CancelNotification(session_id="s1"))
    )
    if handler_answer == "error":
        data = pair.agent.send_error(rid, RequestError.internal_error())
    else:
        data = pair.agent.send_response(rid, s.PromptResponse(stop_reason="end_turn"))
    [event] = pair.deliver_to_client(data)
    assert isinstance(event, ResponseReceived)
    assert event.result.stop_reason == "cancelled"


@pytest.mark.parametrize("handler_answer", ["end_turn", "cancelled-error"])
def test_end_of_input_cancels_running_prompts_but_not_other_requests(
    handler_answer: str,
) -> None:
    """The client closed its output mid-turn: the prompt is cancelled (its answer, for a
    half-closed client, says `cancelled`); a session/new received before still gets its
    real answer."""
    pair, rid = _prompting_pair()
    other, data = pair.client.send_request(
        m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[])
    )
    pair.deliver_to_agent(data)
    pair.agent.receive_data(b"")
    events = pair.agent.events()
    assert PromptCancelRequested(request_id=rid, session_id="s1") in events
    assert not any(isinstance(e, PromptCancelRequested) and e.request_id == other for e in events)
    if handler_answer == "cancelled-error":
        answer = pair.agent.answer(rid, cancelled=True)
    else:
        answer = pair.agent.send_response(rid, s.PromptResponse(stop_reason="end_turn"))
    assert orjson.loads(answer)["result"]["stopReason"] == "cancelled"
    session = orjson.loads(pair.agent.send_response(other, s.NewSessionResponse(session_id="s2")))
    assert session["result"]["sessionId"] == "s2"


def test_cancel_for_another_session_does_not_touch_the_prompt() -> None:
    pair, rid = _prompting_pair()
    events = pair.deliver_to_agent(
        pair.client.send_notification(m.SESSION_CANCEL, s.CancelNotification(session_id="other"))
    )
    assert not any(isinstance(e, PromptCancelRequested) for e in events)
    [event] = pair.deliver_to_client(
        pair.agent.send_response(rid, s.PromptResponse(stop_reason="end_turn"))
    )
    assert isinstance(event, ResponseReceived)
    assert event.result.stop_reason == "end_turn"


def test_unknown_notifications_are_ignored() -> None:
    agent = ready_agent()
    agent.receive_data(frame(method="_vendor/ping", params={}))
    agent.receive_data(frame(method="session/whatever", params={}))
    assert agent.events() == []
    assert agent.data_to_send() == b""


def test_extension_requests_without_a_row_get_32601() -> None:
    agent = ready_agent()
    agent.receive_data(frame(id=1, method="_vendor/ping", params={}))
    assert replies(agent)[0]["error"]["code"] == -32601


def test_oversized_frame_is_reported_and_the_connection_survives() -> None:
    pair = ConnectionPair(max_frame_size=1000)
    pair.initialize()
    pair.agent.receive_data(
        b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"' + b"x" * 5000
    )
    pair.agent.receive_data(b'"}}\n' + frame(id=2, method="session/new", params=NEW_SESSION))
    events = pair.agent.events()
    assert isinstance(events[0], FrameRejected)
    assert events[0].code == -32600
    assert isinstance(events[1], RequestReceived)
    assert events[1].request_id == 2


def test_requests_received_before_end_of_input_can_still_be_answered() -> None:
    agent = ready_agent()
    agent.receive_data(frame(id=7, method="session/new", params=NEW_SESSION))
    agent.receive_data(b"")  # the client closed its end; it may still read ours
    assert agent.state is State.CLOSED
    answer = orjson.loads(agent.send_response(7, s.NewSessionResponse(session_id="s")))
    assert answer["id"] == 7
    with pytest.raises(ConnectionClosed):
        agent.send_request(m.FS_READ_TEXT_FILE, s.ReadTextFileRequest(session_id="s", path="/x"))


def test_after_a_local_close_nothing_can_be_answered() -> None:
    agent = ready_agent()
    agent.receive_data(frame(id=7, method="session/new", params=NEW_SESSION))
    agent.close()
    with pytest.raises(ConnectionClosed):
        agent.send_response(7, s.NewSessionResponse(session_id="s"))


class Unencodable:
    """Not a model: the codec cannot encode it."""


ANSWERS = [
    ("result", {"result": s.NewSessionResponse(session_id="s")}, ("result", None)),
    ("request error", {"error": RequestError.resource_not_found("u")}, ("error", -32002)),
    ("handler crash", {"error": ValueError("secret detail")}, ("error", -32603)),
    ("cancelled", {"cancelled": True}, ("error", -32800)),
    ("unencodable result", {"result": Unencodable()}, ("error", -32603)),
    (
        "unencodable error data",
        {"error": RequestError(-32000, "auth", data={1, 2})},
        ("error", -32000),
    ),
]


@pytest.mark.parametrize(
    ("outcome", "expected"), [a[1:] for a in ANSWERS], ids=[a[0] for a in ANSWERS]
)
def test_every_handler_outcome_gets_exactly_one_answer(
    outcome: dict[str, Any], expected: tuple[str, int | None]
) -> None:
    agent = ready_agent()
    agent.receive_data(frame(id=3, method="session/new", params=NEW_SESSION))
    reply = orjson.loads(agent.answer(3, **outcome))
    kind, code = expected
    assert reply["id"] == 3
    assert kind in reply
    if code is not None:
        assert reply["error"]["code"] == code
    assert "secret detail" not in orjson.dumps(reply).decode()
    assert agent.inbound_ids == ()
    assert agent.answer(3, s.NewSessionResponse(session_id="s")) == b""  # never twice


def test_a_cancelled_prompt_crashing_is_still_answered_cancelled() -> None:
    pair, rid = _prompting_pair()
    pair.deliver_to_agent(
        pair.client.send_notification(m.SESSION_CANCEL, s.CancelNotification(session_id="s1"))
    )
    [event] = pair.deliver_to_client(pair.agent.answer(rid, error=RuntimeError("boom")))
    assert isinstance(event, ResponseReceived)
    assert event.result.stop_reason == "cancelled"


def test_unencodable_params_leave_the_connection_unchanged() -> None:
    client = Connection(Side.CLIENT)
    with pytest.raises(EncodeError):
        client.send_request(m.INITIALIZE, s.InitializeRequest(protocol_version=1, meta={"x": {1}}))
    assert client.state is State.NEW
    assert client.pending_ids == ()
    request_id, _ = client.send_request(m.INITIALIZE, s.InitializeRequest(protocol_version=1))
    assert request_id == 0


# ------------------------------------------------------------------ malformed answers to our calls

# (name, the response without its id, what the CallFailed message says was wrong)
MALFORMED_ANSWERS = [
    (
        "both result and error",
        {"jsonrpc": "2.0", "result": {}, "error": {"code": 1, "message": "<evil>"}},
        "response with both result and error",
    ),
    ("error not an object", {"jsonrpc": "2.0", "error": "<evil>"}, "error object: not an object"),
    ("error is null", {"jsonrpc": "2.0", "error": None}, "error object: not an object"),
    (
        "error code a string",
        {"jsonrpc": "2.0", "error": {"code": "<evil>", "message": "m"}},
        "code is not an integer",
    ),
    (
        "error code a boolean",
        {"jsonrpc": "2.0", "error": {"code": True, "message": "<evil>"}},
        "code is not an integer",
    ),
    (
        "error code a float",
        {"jsonrpc": "2.0", "error": {"code": -32603.0, "message": "<evil>"}},
        "code is not an integer",
    ),
    (
        "error message not a string",
        {"jsonrpc": "2.0", "error": {"code": 1, "message": ["<evil>"]}},
        "message is not a string",
    ),
    ("error without message", {"jsonrpc": "2.0", "error": {"code": 1}}, "message is not a string"),
    ("jsonrpc 1.0", {"jsonrpc": "1.0", "result": {"sessionId": "<evil>"}}, '"jsonrpc" must be'),
    ("no jsonrpc", {"result": {"sessionId": "<evil>"}}, '"jsonrpc" must be'),
    ("jsonrpc a number", {"jsonrpc": 2.0, "result": {"sessionId": "<evil>"}}, '"jsonrpc" must be'),
]


@pytest.mark.parametrize(
    ("message", "fault"), [r[1:] for r in MALFORMED_ANSWERS], ids=[r[0] for r in MALFORMED_ANSWERS]
)
def test_malformed_answer_fails_the_pending_call(message: dict[str, Any], fault: str) -> None:
    pair = ConnectionPair()
    pair.initialize()
    new_session = s.NewSessionRequest(cwd="/", mcp_servers=[])
    rid, _ = pair.client.send_request(m.SESSION_NEW, new_session)
    other, _ = pair.client.send_request(m.SESSION_NEW, new_session)
    pair.client.receive_data(orjson.dumps({**message, "id": rid}) + b"\n")
    assert pair.client.data_to_send() == b""  # responses are never answered
    events = pair.client.events()
    [rejected] = [e for e in events if isinstance(e, FrameRejected)]
    assert (rejected.request_id, rejected.replied) == (rid, False)
    [failed] = [e for e in events if isinstance(e, CallFailed)]
    assert failed.request_id == rid
    assert failed.row is m.SESSION_NEW
    assert isinstance(failed.error, RemoteProtocolError)
    assert str(failed.error).startswith("malformed response to session/new: ")
    assert fault in str(failed.error)
    assert "<evil>" not in str(failed.error)
    assert pair.client.pending_ids == (other,)
    assert pair.client.state is State.READY
    # The connection stays usable: the other call and a new one still get their answers.
    pair.client.receive_data(frame(id=other, result={"sessionId": "s"}))
    [answered] = pair.client.events()
    assert isinstance(answered, ResponseReceived)
    later, data = pair.client.send_request(m.SESSION_NEW, new_session)
    pair.deliver_to_agent(data)
    [answered] = pair.deliver_to_client(
        pair.agent.send_response(later, s.NewSessionResponse(session_id="s2"))
    )
    assert isinstance(answered, ResponseReceived)


@pytest.mark.parametrize(
    ("message", "fault"), [r[1:] for r in MALFORMED_ANSWERS], ids=[r[0] for r in MALFORMED_ANSWERS]
)
def test_malformed_answer_to_initialize_fails_it_and_allows_a_retry(
    message: dict[str, Any], fault: str
) -> None:
    client = Connection(Side.CLIENT)
    rid, _ = client.send_request(m.INITIALIZE, s.InitializeRequest(protocol_version=1))
    client.receive_data(orjson.dumps({**message, "id": rid}) + b"\n")
    [failed] = [e for e in client.events() if isinstance(e, CallFailed)]
    assert isinstance(failed.error, RemoteProtocolError)
    assert str(failed.error).startswith("malformed response to initialize: ")
    assert fault in str(failed.error)
    assert client.state is State.NEW
    assert client.pending_ids == ()
    retry, _ = client.send_request(m.INITIALIZE, s.InitializeRequest(protocol_version=1))
    client.receive_data(frame(id=retry, result={"protocolVersion": 1}))
    [event] = client.events()
    assert isinstance(event, ResponseReceived)
    assert state_of(client) is State.READY


# A malformed response whose id is not exactly a pending call's id fails nothing.
MALFORMED_OTHER_IDS = [
    ("string for an int id", "1"),
    ("float id", 1.0),
    ("bool id", True),
    ("null id", None),
    ("unknown id", 99),
    ("finished id", 0),
]


@pytest.mark.parametrize(
    "rid", [r[1] for r in MALFORMED_OTHER_IDS], ids=[r[0] for r in MALFORMED_OTHER_IDS]
)
def test_malformed_answer_with_another_id_fails_nothing(rid: Any) -> None:
    pair = ConnectionPair()
    pair.initialize()
    call, _ = pair.client.send_request(m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[]))
    assert call == 1
    pair.client.receive_data(frame(id=rid, result={}, error={"code": 1, "message": "x"}))
    assert [type(e) for e in pair.client.events()] == [FrameRejected]
    assert pair.client.pending_ids == (1,)


CLASSIFIED_BAD = [
    ("both, int id", {"jsonrpc": "2.0", "id": 5, "result": 1, "error": {}}, 5),
    ("both, string id", {"jsonrpc": "2.0", "id": "5", "result": 1, "error": {}}, "5"),
    ("bad error, int id", {"jsonrpc": "2.0", "id": 5, "error": {"code": "x"}}, 5),
    ("bad error, string id", {"jsonrpc": "2.0", "id": "a", "error": 3}, "a"),
    ("jsonrpc 1.0, id", {"jsonrpc": "1.0", "id": 0, "result": {}}, 0),
    ("no jsonrpc, id", {"id": -7, "error": {"code": 1, "message": "m"}}, -7),
    ("both, invalid id", {"jsonrpc": "2.0", "id": 1.5, "result": 1, "error": {}}, None),
    ("bad error, bool id", {"jsonrpc": "2.0", "id": False, "error": 3}, None),
    ("no id", {"jsonrpc": "2.0", "result": {}}, None),
]


@pytest.mark.parametrize(
    ("message", "rid"), [c[1:] for c in CLASSIFIED_BAD], ids=[c[0] for c in CLASSIFIED_BAD]
)
def test_bad_responses_keep_a_valid_id(message: dict[str, Any], rid: Any) -> None:
    classified = rpc.classify(orjson.dumps(message))
    assert isinstance(classified, rpc.BadResponse)
    assert classified.id == rid
    assert type(classified.id) is type(rid)


def test_bom_at_the_start_of_input_is_ignored() -> None:
    agent = Connection(Side.AGENT)
    request = frame(id=0, method="initialize", params={"protocolVersion": 1})
    for byte in b"\xef\xbb\xbf" + request:
        agent.receive_data(bytes([byte]))
    assert agent.data_to_send() == b""
    [event] = agent.events()
    assert isinstance(event, RequestReceived)


# ------------------------------------------------------------------ the lifecycle table

T = Trigger
TABLE_ROWS = [
    (State.NEW, T.INITIALIZE_STARTED, State.INITIALIZING),
    (State.NEW, T.INITIALIZE_SUCCEEDED, None),
    (State.NEW, T.INITIALIZE_FAILED, None),
    (State.NEW, T.END_OF_INPUT, State.CLOSED),
    (State.NEW, T.NOT_AN_AGENT, State.CLOSED),
    (State.NEW, T.CLOSE, State.CLOSED),
    (State.INITIALIZING, T.INITIALIZE_STARTED, None),
    (State.INITIALIZING, T.INITIALIZE_SUCCEEDED, State.READY),
    (State.INITIALIZING, T.INITIALIZE_FAILED, State.NEW),
    (State.INITIALIZING, T.END_OF_INPUT, State.CLOSED),
    (State.INITIALIZING, T.NOT_AN_AGENT, State.CLOSED),
    (State.INITIALIZING, T.CLOSE, State.CLOSED),
    (State.READY, T.INITIALIZE_STARTED, None),
    (State.READY, T.INITIALIZE_SUCCEEDED, None),
    (State.READY, T.INITIALIZE_FAILED, None),
    (State.READY, T.END_OF_INPUT, State.CLOSED),
    (State.READY, T.NOT_AN_AGENT, None),
    (State.READY, T.CLOSE, State.CLOSED),
    (State.CLOSED, T.INITIALIZE_STARTED, None),
    (State.CLOSED, T.INITIALIZE_SUCCEEDED, None),
    (State.CLOSED, T.INITIALIZE_FAILED, None),
    (State.CLOSED, T.END_OF_INPUT, None),
    (State.CLOSED, T.NOT_AN_AGENT, None),
    (State.CLOSED, T.CLOSE, State.CLOSED),
]


def test_the_table_rows_cover_every_pair() -> None:
    assert {(row[0], row[1]) for row in TABLE_ROWS} == {(st, t) for st in State for t in Trigger}


@pytest.mark.parametrize(
    ("state", "trigger", "after"), TABLE_ROWS, ids=[f"{r[0].name}-{r[1].name}" for r in TABLE_ROWS]
)
def test_transition_table(state: State, trigger: Trigger, after: State | None) -> None:
    if after is None:
        assert (state, trigger) not in TRANSITIONS
        with pytest.raises(LocalProtocolError):
            step(Lifecycle(state=state), trigger)
        return
    assert step(Lifecycle(state=state), trigger) == Lifecycle(
        state=after, answerable=trigger not in (T.CLOSE, T.NOT_AN_AGENT)
    )
    assert not step(Lifecycle(state=state, answerable=False), trigger).answerable


def test_every_state_change_goes_through_fire() -> None:
    source = inspect.getsource(connection_module)
    assert "self.state =" not in source
    assert source.count("self._lifecycle =") == 2  # __init__ and _fire
    assert "advance(" not in source


def _initializing_client() -> tuple[Connection, int | str]:
    client = Connection(Side.CLIENT)
    rid, _ = client.send_request(m.INITIALIZE, s.InitializeRequest(protocol_version=1))
    return client, rid


# (name, how the pending initialize ends, the client's state after it)
INITIALIZE_ENDINGS = [
    ("result", lambda c, r: c.receive_data(frame(id=r, result={"protocolVersion": 1})), "READY"),
    ("error", lambda c, r: c.receive_data(frame(id=r, error={"code": 1, "message": "m"})), "NEW"),
    (
        "undecodable",
        lambda c, r: c.receive_data(frame(id=r, result={"protocolVersion": "x"})),
        "NEW",
    ),
    ("malformed", lambda c, r: c.receive_data(frame(id=r, result={}, error={})), "NEW"),
    ("timed out", lambda c, r: c.time_out(r), "NEW"),
    ("cancelled", lambda c, r: c.cancel(r), "NEW"),
    ("end of input", lambda c, r: c.receive_data(b""), "CLOSED"),
    ("closed", lambda c, r: c.close(), "CLOSED"),
]


@pytest.mark.parametrize(
    ("end", "after"), [e[1:] for e in INITIALIZE_ENDINGS], ids=[e[0] for e in INITIALIZE_ENDINGS]
)
def test_every_end_of_initialize_leaves_a_usable_state(end: Any, after: str) -> None:
    client, rid = _initializing_client()
    assert client.state is State.INITIALIZING
    end(client, rid)
    assert client.state is State[after]
    assert client.pending_ids == ()
    if state_of(client) is State.NEW:  # the client may try again
        retry, _ = client.send_request(m.INITIALIZE, s.InitializeRequest(protocol_version=1))
        client.receive_data(frame(id=retry, result={"protocolVersion": 1}))
        assert state_of(client) is State.READY


@pytest.mark.parametrize("answer", ["result", "error"])
def test_initialize_received_before_end_of_input_can_be_answered_after_it(answer: str) -> None:
    agent = Connection(Side.AGENT)
    agent.receive_data(frame(id=0, method="initialize", params={"protocolVersion": 1}))
    agent.events()
    agent.receive_data(b"")
    # The end of input waits behind the initialize it followed, like any frame would.
    assert agent.state is State.INITIALIZING
    assert agent.holding
    assert agent.events() == []
    if answer == "result":
        data = agent.send_response(0, s.InitializeResponse(protocol_version=1))
    else:
        data = agent.send_error(0, RequestError.internal_error())
    assert orjson.loads(data)["id"] == 0
    assert state_of(agent) is State.CLOSED
    assert not agent.holding
    assert [type(e) for e in agent.events()] == [ConnectionClosedEvent]


def test_half_close_then_local_close() -> None:
    agent = ready_agent()
    agent.receive_data(frame(id=7, method="session/new", params=NEW_SESSION))
    agent.receive_data(frame(id=8, method="session/new", params=NEW_SESSION))
    agent.receive_data(b"")
    events = agent.events()
    assert isinstance(events[-1], ConnectionClosedEvent)
    agent.receive_data(frame(id=9, method="session/new", params=NEW_SESSION))  # ignored
    assert agent.events() == []
    assert agent.inbound_ids == (7, 8)
    assert orjson.loads(agent.send_response(7, s.NewSessionResponse(session_id="s")))["id"] == 7
    with pytest.raises(ConnectionClosed):
        agent.send_response(9, s.NewSessionResponse(session_id="s"))
    agent.close()
    assert agent.events() == []  # closing twice announces nothing new
    assert not agent.inbound_ids
    assert agent.state is State.CLOSED
    with pytest.raises(ConnectionClosed):
        agent.send_response(8, s.NewSessionResponse(session_id="s"))
    assert agent.answer(8, s.NewSessionResponse(session_id="s")) == b""
