"""The agent's per-request path through the connection, after its shortcuts: the event
is what the attrs constructor builds, the lifecycle checks still refuse what they
refused, and answering still says why it cannot."""

from __future__ import annotations

from typing import Any

import attrs
import orjson
import pytest

from acp_sdk.methods import AUTHENTICATE
from acp_sdk.protocol._connection import Connection
from acp_sdk.protocol._errors import ConnectionClosed, LocalProtocolError
from acp_sdk.protocol._events import FrameRejected, RequestReceived, request_received
from acp_sdk.protocol._rows import Side
from acp_sdk.schema import AgentCapabilities, AuthenticateResponse, InitializeResponse


def frame(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return orjson.dumps(message) + b"\n"


INITIALIZE = frame(0, "initialize", {"protocolVersion": 1})
AUTHENTICATE_FRAME = frame(1, "authenticate", {"methodId": "login"})


def ready_agent() -> Connection:
    conn = Connection(Side.AGENT)
    conn.receive_data(INITIALIZE)
    conn.events()
    conn.answer(0, InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities()))
    return conn


def test_the_request_event_is_what_its_constructor_builds() -> None:
    params = object()
    built = request_received(7, AUTHENTICATE, params)
    expected = RequestReceived(request_id=7, row=AUTHENTICATE, params=params)
    assert type(built) is RequestReceived
    assert built == expected
    assert repr(built) == repr(expected)
    for field in attrs.fields(RequestReceived):
        assert getattr(built, field.name) is getattr(expected, field.name)


def test_a_request_before_initialize_is_refused_and_initialize_only_once() -> None:
    conn = Connection(Side.AGENT)
    conn.receive_data(AUTHENTICATE_FRAME)
    (event,) = conn.events()
    assert isinstance(event, FrameRejected)
    assert orjson.loads(conn.data_to_send())["error"]["code"] == -32600

    conn = ready_agent()
    conn.receive_data(frame(2, "initialize", {"protocolVersion": 1}))
    (event,) = conn.events()
    assert isinstance(event, FrameRejected)
    assert event.reason == "the connection is already initialized"
    assert orjson.loads(conn.data_to_send())["id"] == 2


def test_a_ready_connection_answers_a_request_once() -> None:
    conn = ready_agent()
    conn.receive_data(AUTHENTICATE_FRAME)
    (event,) = conn.events()
    assert isinstance(event, RequestReceived)
    assert event.row is AUTHENTICATE
    assert orjson.loads(conn.answer(1, AuthenticateResponse())) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {},
    }
    with pytest.raises(LocalProtocolError, match="no received request 1"):
        conn.send_response(1, AuthenticateResponse())
    assert conn.answer(1, AuthenticateResponse()) == b""  # answered already


def test_after_a_local_close_nothing_is_answered() -> None:
    conn = ready_agent()
    conn.receive_data(AUTHENTICATE_FRAME)
    conn.events()
    conn.close()
    with pytest.raises(ConnectionClosed):
        conn.send_response(1, AuthenticateResponse())
    assert conn.answer(1, AuthenticateResponse()) == b""


def test_after_end_of_input_a_received_request_is_still_answered() -> None:
    conn = ready_agent()
    conn.receive_data(AUTHENTICATE_FRAME)
    conn.events()
    conn.receive_data(b"")
    assert orjson.loads(conn.answer(1, AuthenticateResponse()))["id"] == 1
