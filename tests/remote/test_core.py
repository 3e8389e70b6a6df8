"""What the sans-IO core gained for message-framed transports, the HTTP routing table,
and the optional dependencies staying optional."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest

from acp_sdk.protocol import _routes
from acp_sdk.protocol._connection import Connection
from acp_sdk.protocol._events import FrameRejected, RequestReceived
from acp_sdk.protocol._framing import split_frames
from acp_sdk.protocol._rows import Side
from acp_sdk.remote._backends import one_line

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


def test_receive_message_takes_one_whole_message_newlines_and_all() -> None:
    agent = Connection(Side.AGENT)
    agent.receive_message(orjson.dumps(INIT, option=orjson.OPT_INDENT_2))
    (event,) = agent.events()
    assert isinstance(event, RequestReceived)
    assert (event.row.wire, event.request_id) == ("initialize", 0)


def test_receive_message_applies_the_size_limit() -> None:
    agent = Connection(Side.AGENT, max_frame_size=100)
    agent.receive_message(orjson.dumps({**INIT, "params": {"pad": "x" * 200}}))
    (event,) = agent.events()
    assert isinstance(event, FrameRejected)
    assert b"-32600" in agent.data_to_send()


def test_split_frames_gives_each_frame_without_its_newline() -> None:
    assert split_frames(b'{"a":1}\n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']
    assert split_frames(b"") == []


def test_one_line_keeps_a_message_on_one_stdio_line() -> None:
    assert one_line(b'{"a": 1}') == b'{"a": 1}'
    assert one_line(b'{\n  "a": 1\n}') == b'{"a":1}'
    assert b"\n" not in one_line(b"{not json\n}")


def test_routes_follow_the_typescript_sdk() -> None:
    routes = _routes.Routes()
    new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}}
    routes.inbound(new, None)
    assert routes.outbound({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}}) == ""
    prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "s"}}
    with pytest.raises(_routes.Refused, match="Missing"):
        routes.inbound(prompt, None)
    with pytest.raises(_routes.Refused, match="Mismatched"):
        routes.inbound(prompt, "t")
    routes.inbound(prompt, "s")
    update = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}}
    assert routes.outbound(update) == "s"
    ask = {"jsonrpc": "2.0", "id": 7, "method": "session/request_permission"}
    ask["params"] = {"sessionId": "s"}
    assert routes.outbound(ask) == "s"
    with pytest.raises(_routes.Refused, match="Missing"):
        routes.inbound({"jsonrpc": "2.0", "id": 7, "result": {}}, None)
    routes.inbound({"jsonrpc": "2.0", "id": 7, "result": {}}, "s")
    assert routes.outbound({"jsonrpc": "2.0", "id": 2, "result": {}}) == "s"
    # session/load is answered on the connection stream (no session stream exists yet)
    load = {"jsonrpc": "2.0", "id": 3, "method": "session/load", "params": {"sessionId": "s"}}
    routes.inbound(load, "s")
    assert routes.outbound({"jsonrpc": "2.0", "id": 3, "result": {}}) == ""
    # ... unless the client has the session's stream open: the answer follows the replay
    routes.inbound({**load, "id": 4}, "s", session_stream_open=True)
    assert routes.outbound({"jsonrpc": "2.0", "id": 4, "result": {}}) == "s"


def test_importing_the_sdk_needs_no_remote_dependency() -> None:
    code = (
        "import sys\n"
        "for name in ('websockets', 'httpx', 'uvicorn'):\n"
        "    sys.modules[name] = None\n"
        "import acp_sdk, acp_sdk.remote\n"
        "from acp_sdk import Client\n"
        "client = Client.connect_url('ws://127.0.0.1:9/acp')\n"
        "try:\n"
        "    client.open()\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert "pip install 'acp-typed[ws]'" in done.stdout


def test_unsupported_schemes_are_refused() -> None:
    from acp_sdk.remote._client import transport_for

    with pytest.raises(ValueError, match="ws://"):
        transport_for("ftp://example/acp", None, 1.0, 100)


def test_the_http_inbox_is_bounded_and_still_ends_when_full() -> None:
    """A client that stops taking messages stops the event streams from reading (the
    server's buffer, then the agent, wait), and a connection that ends with a full inbox
    still hands out what it holds, then the end."""
    import asyncio

    from acp_sdk.remote._client import INBOX_LIMIT, HttpTransport

    async def scenario() -> None:
        transport = HttpTransport("http://127.0.0.1:1/acp")
        messages = [b'{"n":%d}' % i for i in range(INBOX_LIMIT + 5)]

        async def stream() -> None:
            for message in messages:
                await transport._received(message, None)

        async def settle() -> None:  # let the reader run until it blocks (no clock)
            for _ in range(INBOX_LIMIT * 4):
                await asyncio.sleep(0)

        reader = asyncio.ensure_future(stream())
        await settle()
        assert not reader.done()  # stuck on the full inbox, not buffering without end
        assert transport._inbox.qsize() == INBOX_LIMIT
        assert await transport.recv() == messages[0]
        await settle()
        assert transport._inbox.qsize() == INBOX_LIMIT  # one taken, one more read
        transport._end("the test ends it")  # with the inbox full
        reader.cancel()
        taken = [await asyncio.wait_for(transport.recv(), 1) for _ in range(INBOX_LIMIT)]
        assert taken == messages[1 : INBOX_LIMIT + 1]
        assert await asyncio.wait_for(transport.recv(), 1) is None
        assert await asyncio.wait_for(transport.recv(), 1) is None

    asyncio.run(asyncio.wait_for(scenario(), 10))
