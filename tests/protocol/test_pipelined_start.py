"""A pipelined start: what arrives behind `initialize` is processed after its answer.

A client may write `initialize` and `session/new` in one write. The agent's connection
holds every frame that follows an `initialize` it has not answered yet and processes
them, in order, once it answers (success or error). On the client's side, a request the
agent sends right after its `initialize` answer arrives behind that answer, so it meets
a READY connection. Fed whole, byte by byte and in random chunks.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from acp_sdk import Connection, RequestError, Side
from acp_sdk import methods as m
from acp_sdk import schema as s
from acp_sdk.protocol import (
    CancelRequested,
    ConnectionClosedEvent,
    FrameRejected,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    State,
)
from acp_sdk.protocol._intake import HELD_FRAMES
from tests.protocol.test_framing import CHUNKING_IDS, chunkings


def state_of(conn: Connection) -> State:
    """`conn.state`, read afresh (mypy keeps a property narrowed after an assert)."""
    return conn.state


def frame(**message: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"


def lines(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines()]


INITIALIZE = frame(id=0, method="initialize", params={"protocolVersion": 1})
NEW_SESSION = frame(id=1, method="session/new", params={"cwd": "/w", "mcpServers": []})
PIPELINED = (
    INITIALIZE
    + NEW_SESSION
    + frame(method="$/cancel_request", params={"requestId": 0})  # too late: answered by then
    + frame(id=2, method="_acme/unknown", params={})
    + frame(method="session/cancel", params={"sessionId": "s"})
    + frame(id=3, method="session/new", params={"cwd": "/x", "mcpServers": []})
)


def feed(conn: Connection, chunks: list[bytes]) -> None:
    for chunk in chunks:
        conn.receive_data(chunk)


@pytest.mark.parametrize("chunks", chunkings(PIPELINED), ids=CHUNKING_IDS)
def test_requests_behind_initialize_wait_for_its_answer(chunks: list[bytes]) -> None:
    agent = Connection(Side.AGENT)
    feed(agent, chunks)
    [received] = agent.events()
    assert isinstance(received, RequestReceived)
    assert received.row is m.INITIALIZE
    assert state_of(agent) is State.INITIALIZING
    assert agent.holding
    assert agent.data_to_send() == b""  # nothing refused: held, not "not initialized"

    answer = agent.send_response(0, s.InitializeResponse(protocol_version=1))
    assert orjson.loads(answer)["id"] == 0
    assert state_of(agent) is State.READY
    assert not agent.holding
    events = agent.events()
    kinds = [type(e) for e in events]
    assert kinds == [RequestReceived, FrameRejected, NotificationReceived, RequestReceived]
    first, _, _, second = events
    assert isinstance(first, RequestReceived)
    assert isinstance(second, RequestReceived)
    assert (first.request_id, first.params.cwd) == (1, "/w")
    assert (second.request_id, second.params.cwd) == (3, "/x")
    assert not any(isinstance(e, CancelRequested) for e in events)
    [refused] = lines(agent.data_to_send())  # the unknown method, after the answer
    assert (refused["id"], refused["error"]["code"]) == (2, -32601)
    assert agent.inbound_ids == (1, 3)


@pytest.mark.parametrize("chunks", chunkings(INITIALIZE + NEW_SESSION), ids=CHUNKING_IDS)
def test_a_failed_initialize_refuses_what_followed_it(chunks: list[bytes]) -> None:
    agent = Connection(Side.AGENT)
    feed(agent, chunks)
    agent.events()
    agent.send_error(0, RequestError.internal_error())
    assert state_of(agent) is State.NEW
    [refused] = lines(agent.data_to_send())
    assert refused["id"] == 1
    assert refused["error"]["code"] == -32600
    assert "initialize first" in refused["error"]["data"]["reason"]


def test_a_second_initialize_behind_a_failed_one_holds_the_rest_again() -> None:
    agent = Connection(Side.AGENT)
    retry = frame(id=5, method="initialize", params={"protocolVersion": 1})
    agent.receive_data(INITIALIZE + retry + NEW_SESSION)
    agent.events()
    agent.send_error(0, RequestError.internal_error())
    [again] = agent.events()
    assert isinstance(again, RequestReceived)
    assert again.request_id == 5
    assert agent.holding
    assert agent.data_to_send() == b""
    agent.send_response(5, s.InitializeResponse(protocol_version=1))
    [new] = agent.events()
    assert isinstance(new, RequestReceived)
    assert new.request_id == 1
    assert state_of(agent) is State.READY


def test_end_of_input_behind_initialize_ends_after_what_came_before_it() -> None:
    agent = Connection(Side.AGENT)
    agent.receive_data(INITIALIZE + NEW_SESSION)
    agent.receive_data(b"")
    agent.receive_data(b"")  # reported once
    agent.events()
    assert state_of(agent) is State.INITIALIZING
    agent.send_response(0, s.InitializeResponse(protocol_version=1))
    events = agent.events()
    assert [type(e) for e in events] == [RequestReceived, ConnectionClosedEvent]
    assert state_of(agent) is State.CLOSED
    # Half-closed: the request received before the end can still be answered.
    reply = agent.send_response(1, s.NewSessionResponse(session_id="s1"))
    assert orjson.loads(reply)["result"] == {"sessionId": "s1"}


def test_whole_messages_are_held_too() -> None:
    agent = Connection(Side.AGENT)
    agent.receive_message(INITIALIZE.rstrip())
    agent.receive_message(NEW_SESSION.rstrip())
    agent.events()
    assert agent.data_to_send() == b""
    agent.send_response(0, s.InitializeResponse(protocol_version=1))
    [new] = agent.events()
    assert isinstance(new, RequestReceived)
    assert new.request_id == 1


def test_a_local_close_drops_what_is_held() -> None:
    agent = Connection(Side.AGENT)
    agent.receive_data(INITIALIZE + NEW_SESSION)
    agent.events()
    agent.close()
    assert not agent.holding
    assert [type(e) for e in agent.events()] == [ConnectionClosedEvent]
    assert agent.data_to_send() == b""


def test_what_is_held_is_bounded() -> None:
    agent = Connection(Side.AGENT)
    requests = b"".join(
        frame(id=10 + n, method="session/new", params={"cwd": "/w", "mcpServers": []})
        for n in range(HELD_FRAMES + 2)
    )
    agent.receive_data(INITIALIZE + requests + frame(method="session/cancel", params={}))
    agent.events()
    # Past the bound: refused at once (not held), the notification dropped.
    refused = lines(agent.data_to_send())
    assert [r["id"] for r in refused] == [10 + HELD_FRAMES, 11 + HELD_FRAMES]
    assert {r["error"]["code"] for r in refused} == {-32600}
    agent.send_response(0, s.InitializeResponse(protocol_version=1))
    held = agent.events()
    assert len(held) == HELD_FRAMES
    assert all(isinstance(e, RequestReceived) for e in held)


def test_the_byte_bound_is_the_frame_size() -> None:
    agent = Connection(Side.AGENT, max_frame_size=1000)
    big = frame(id=1, method="session/new", params={"cwd": "/" + "w" * 600, "mcpServers": []})
    agent.receive_data(INITIALIZE + big + big.replace(b'"id":1', b'"id":2'))
    agent.events()
    [refused] = lines(agent.data_to_send())
    assert refused["id"] == 2
    agent.send_response(0, s.InitializeResponse(protocol_version=1))
    [held] = agent.events()
    assert isinstance(held, RequestReceived)
    assert held.request_id == 1


# ------------------------------------------------------------------ the client's side


def _agent_answer_then_request() -> tuple[Connection, bytes]:
    client = Connection(Side.CLIENT)
    agent = Connection(Side.AGENT)
    caps = s.ClientCapabilities(fs=s.FileSystemCapabilities(read_text_file=True))
    _, data = client.send_request(
        m.INITIALIZE, s.InitializeRequest(protocol_version=1, client_capabilities=caps)
    )
    agent.receive_data(data)
    [received] = agent.events()
    assert isinstance(received, RequestReceived)
    answer = agent.send_response(0, s.InitializeResponse(protocol_version=1))
    _, ask = agent.send_request(
        m.FS_READ_TEXT_FILE, s.ReadTextFileRequest(session_id="s1", path="/etc/hostname")
    )
    update = agent.send_notification(
        m.SESSION_UPDATE,
        s.SessionNotification(
            session_id="s1", update=s.AgentMessageChunk(content=s.TextContent(text="hi"))
        ),
    )
    return client, answer + ask + update


@pytest.mark.parametrize("way", CHUNKING_IDS)
def test_a_request_right_behind_the_initialize_answer_reaches_a_ready_client(way: str) -> None:
    client, data = _agent_answer_then_request()
    for chunk in chunkings(data)[CHUNKING_IDS.index(way)]:
        client.receive_data(chunk)
    events = client.events()
    assert [type(e) for e in events] == [ResponseReceived, RequestReceived, NotificationReceived]
    assert state_of(client) is State.READY
    assert client.data_to_send() == b""  # nothing refused
    assert isinstance(events[1], RequestReceived)
    assert events[1].row is m.FS_READ_TEXT_FILE
