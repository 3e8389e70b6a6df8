"""The blocking `Client` cannot await: a coroutine callback is refused with a clear error
(not silently dropped with a "never awaited" warning later)."""

from __future__ import annotations

import sys

import pytest

from acp_sdk import Client
from acp_sdk.schema import SessionNotification, SessionUpdate

pytestmark = pytest.mark.timeout(60)
AGENT = [sys.executable, "-m", "acp_sdk", "agent"]


def test_an_async_on_update_is_refused_by_the_blocking_client() -> None:
    async def on_update(update: SessionUpdate) -> None:
        print(update)

    with Client.spawn(AGENT) as client:
        session = client.new_session(cwd="/tmp")
        with pytest.raises(TypeError, match="needs AsyncClient"):
            session.prompt("echo hi", on_update=on_update).wait()
        # The connection survives: a turn in another session runs.
        other = client.new_session(cwd="/tmp")
        assert other.prompt("echo again").wait().stop_reason == "end_turn"


def test_an_async_client_level_on_update_is_refused_and_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def on_update(notification: SessionNotification) -> None:
        print(notification)

    with Client.spawn(AGENT, on_update=on_update) as client:
        session = client.new_session(cwd="/tmp")
        session.prompt("echo one two").wait()
        # The replay's updates reach the client-level callback, outside any turn.
        loaded = client.load_session(session_id=session.session_id, cwd="/tmp")
        assert loaded.session_id == session.session_id
    refused = [r for r in caplog.records if "callback failed" in r.getMessage()]
    assert refused
    assert all("needs AsyncClient" in str(r.exc_info[1]) for r in refused if r.exc_info)
