"""The server says (at debug) when it holds agent messages for an event stream that no
client has open: a client that never opens its session stream otherwise hangs with no
clue (it used to be silent)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
import pytest

from acp_sdk.remote._server import _Connection, _Server

pytestmark = pytest.mark.timeout(30)


class Backend:
    """Hands the connection the messages it is given, then ends."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = [orjson.dumps(m) for m in messages]

    async def recv(self) -> bytes | None:
        return self.messages.pop(0) if self.messages else None

    async def ended(self) -> tuple[bool, str]:
        return True, "the agent ended the connection"

    async def aclose(self) -> None:
        pass


def update(session: str) -> dict[str, Any]:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": chunk},
    }


def route(messages: list[dict[str, Any]], reading: str | None = None) -> _Connection:
    server = _Server(
        lambda: Backend([]),  # type: ignore[arg-type, return-value]
        token=None,
        path="/acp",
        allowed_origins=(),
        max_connections=4,
        idle_timeout=60.0,
        max_message_size=1 << 20,
    )

    async def go() -> _Connection:
        connection = _Connection(server, Backend(messages), "http")  # type: ignore[arg-type]
        if reading is not None:
            connection.mailbox(reading).receiver = True
        await connection.route_output()
        return connection

    return asyncio.run(go())


def held(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "holding messages" in r.getMessage()]


def test_messages_for_an_unopened_session_stream_are_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="acp_sdk.remote")
    connection = route([update("sess_a"), update("sess_a"), update("sess_a")])
    assert len(connection.streams["sess_a"].messages) == 3  # held, not dropped
    (line,) = held(caplog)
    assert "session sess_a stream" in line
    assert "Acp-Session-Id: sess_a" in line


def test_nothing_is_logged_while_a_client_reads_the_stream(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="acp_sdk.remote")
    route([update("sess_b")], reading="sess_b")
    assert held(caplog) == []
