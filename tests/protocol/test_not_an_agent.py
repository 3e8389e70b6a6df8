"""A client whose peer prints only lines that are not JSON-RPC before answering
`initialize` gives up on it (`NotAnAgent`); a few log lines first are fine; a timed-out
call names its method, and an `initialize` what the agent printed."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import orjson
import pytest

from acp_sdk import ConnectionClosed, NotAnAgent, RequestTimeout, Side
from acp_sdk import methods as m
from acp_sdk import schema as s
from acp_sdk.protocol import (
    CallFailed,
    ConnectionClosedEvent,
    FrameRejected,
    ResponseReceived,
    State,
)
from acp_sdk.protocol._connection import Connection
from acp_sdk.protocol._intake import STRAY_LIMIT_BYTES, STRAY_LIMIT_LINES
from tests.protocol.test_framing import CHUNKING_IDS, chunkings


def state_of(conn: Connection) -> State:
    """`conn.state`, read afresh (mypy keeps a property narrowed after an assert)."""
    return conn.state


def frame(**message: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"


def initializing() -> Connection:
    client = Connection(Side.CLIENT)
    client.send_request(m.INITIALIZE, s.InitializeRequest(protocol_version=1))
    return client


ANSWER = frame(id=0, result={"protocolVersion": 1})


def test_a_flood_of_lines_before_the_answer_ends_the_connection() -> None:
    client = initializing()
    client.receive_data(b"garbage\n" * STRAY_LIMIT_LINES)
    assert state_of(client) is State.INITIALIZING  # the limit itself is allowed
    client.events()
    client.data_to_send()
    client.receive_data(b"garbage\n" * 5 + ANSWER)
    assert state_of(client) is State.CLOSED
    events = client.events()
    assert [type(e) for e in events] == [CallFailed, ConnectionClosedEvent]
    failed, closed = events
    assert isinstance(failed, CallFailed)
    assert isinstance(closed, ConnectionClosedEvent)
    error = failed.error
    assert isinstance(error, NotAnAgent)
    assert isinstance(error, ConnectionClosed)
    assert closed.reason is error
    assert error.first_line == "garbage"
    assert error.lines == STRAY_LIMIT_LINES + 1
    assert "initialize" in str(error)
    assert "'garbage'" in str(error)
    assert error.stdout_tail.splitlines()[-1] == "garbage"
    assert client.data_to_send() == b""  # the line past the limit is not answered
    client.receive_data(ANSWER)  # later frames are ignored
    assert client.events() == []


@pytest.mark.parametrize("chunks", chunkings(b"y\n" * 300), ids=CHUNKING_IDS)
def test_yes_gives_up_however_chunked(chunks: list[bytes]) -> None:
    client = initializing()
    for chunk in chunks:
        client.receive_data(chunk)
    assert state_of(client) is State.CLOSED
    failed = next(e for e in client.events() if isinstance(e, CallFailed))
    assert isinstance(failed.error, NotAnAgent)
    assert failed.error.lines == STRAY_LIMIT_LINES + 1


def test_the_byte_limit_counts_too_and_the_first_line_is_cut() -> None:
    client = initializing()
    line = b"Usage: " + b"x" * (STRAY_LIMIT_BYTES // 2) + b"\n"
    client.receive_data(line)
    assert state_of(client) is State.INITIALIZING
    client.receive_data(line)
    assert state_of(client) is State.CLOSED
    assert 2 * len(line) > STRAY_LIMIT_BYTES
    error = next(e for e in client.events() if isinstance(e, CallFailed)).error
    assert isinstance(error, NotAnAgent)
    assert error.lines == 2
    assert error.first_line == ("Usage: " + "x" * 200)[:200]
    assert len(str(error)) < 500


def test_a_few_log_lines_before_the_first_frame_keep_working() -> None:
    client = initializing()
    client.receive_data(b"INFO starting\nINFO loading model\nINFO ready\n" + ANSWER)
    assert state_of(client) is State.READY
    kinds = [type(e) for e in client.events()]
    assert kinds == [FrameRejected, FrameRejected, FrameRejected, ResponseReceived]
    assert client.stray_lines == ("INFO starting", "INFO loading model", "INFO ready")
    # After initialize, stray output is answered as always and never ends anything.
    client.receive_data(b"noise\n" * (STRAY_LIMIT_LINES * 3))
    assert state_of(client) is State.READY


def test_json_that_is_an_object_is_not_stray() -> None:
    client = initializing()
    client.receive_data(b'{"level": "info"}\n' * (STRAY_LIMIT_LINES + 10) + ANSWER)
    assert state_of(client) is State.READY  # JSON-RPC gone wrong is answered, not given up on


def test_an_agent_never_gives_up_on_its_client() -> None:
    agent = Connection(Side.AGENT)
    agent.receive_data(b"garbage\n" * (STRAY_LIMIT_LINES * 3))
    assert state_of(agent) is State.NEW
    agent.receive_data(frame(id=0, method="initialize", params={"protocolVersion": 1}))
    assert state_of(agent) is State.INITIALIZING


def test_not_an_agent_copies_and_pickles_with_its_details() -> None:
    error = NotAnAgent("m", first_line="Usage: x", lines=3, stdout_tail="a\nb", exit_code=2)
    for twin in (copy.copy(error), pickle.loads(pickle.dumps(error))):
        assert type(twin) is NotAnAgent
        assert str(twin) == "m"
        assert (twin.first_line, twin.lines, twin.stdout_tail, twin.exit_code) == (
            "Usage: x",
            3,
            "a\nb",
            2,
        )


# ------------------------------------------------------------------ timeouts


def test_a_timed_out_initialize_names_itself_and_what_the_agent_printed() -> None:
    client = initializing()
    client.receive_data(b"Usage: myagent --acp\n")
    error, cancel = client.time_out(0, after=2.5)
    assert isinstance(error, RequestTimeout)
    assert error.method == "initialize"
    assert str(error).startswith("initialize (request 0) got no answer within 2.5 s")
    assert "printed, not JSON-RPC: Usage: myagent --acp" in str(error)
    assert error.stdout_tail == "Usage: myagent --acp"
    assert orjson.loads(cancel)["method"] == "$/cancel_request"
    assert state_of(client) is State.NEW


def test_a_silent_agent_printed_nothing() -> None:
    client = initializing()
    error, _ = client.time_out(0, after=60)
    assert str(error) == (
        "initialize (request 0) got no answer within 60 s; the agent printed nothing"
    )
    assert error.stdout_tail == ""


def test_any_timed_out_call_names_its_method() -> None:
    client = initializing()
    client.receive_data(ANSWER)
    rid, _ = client.send_request(m.SESSION_NEW, s.NewSessionRequest(cwd="/w", mcp_servers=[]))
    error, _ = client.time_out(rid)
    assert str(error) == f"session/new (request {rid}) got no answer"
    assert error.method == "session/new"
    assert pickle.loads(pickle.dumps(error)).method == "session/new"
