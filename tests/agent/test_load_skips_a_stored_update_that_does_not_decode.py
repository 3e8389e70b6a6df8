"""A stored update that does not decode (written by another program, a custom store or
another version) is skipped with a warning by `session/load`, as `history()` skips it:
one bad record must not make a session impossible to load (before: -32603 after a
partial replay)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from acp_sdk.agent import MemorySessionStore, SessionStore, SqliteSessionStore
from acp_sdk.schema import AgentMessageChunk, SessionNotification, TextContent
from tests.agent.test_session_store_inprocess import Talker, connected

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_load_skips_an_undecodable_stored_update_and_replays_the_rest(
    kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def go() -> list[Any]:
        store: SessionStore = (
            MemorySessionStore() if kind == "memory" else SqliteSessionStore(tmp_path / "s.db")
        )
        try:
            async with connected(Talker(), store) as client:
                session = await client.new_session(cwd="/w")
                _ = [u async for u in session.prompt("one")]
            bad = {"sessionUpdate": "agent_message_chunk"}  # no content
            good = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "z"},
            }
            await store.append(session.session_id, [bad, good], "2026-01-01T00:00:00.000000Z")
            seen: list[Any] = []

            def keep(notification: SessionNotification) -> None:
                seen.append(notification.update)

            async with connected(Talker(), store, on_update=keep) as client:
                await asyncio.wait_for(
                    client.load_session(session_id=session.session_id, cwd="/w"), 10
                )
            return seen
        finally:
            await store.aclose()

    with caplog.at_level(logging.WARNING, logger="acp_sdk.agent"):
        seen = asyncio.run(go())
    assert [type(u).__name__ for u in seen] == [
        "UserMessageChunk",
        "ToolCall",
        "Plan",
        "ToolCallProgress",
        "AgentMessageChunk",
        "AgentMessageChunk",
    ]
    last = seen[-1]
    assert isinstance(last, AgentMessageChunk)
    assert isinstance(last.content, TextContent)
    assert last.content.text == "z"
    assert any("skipped a stored update" in r.getMessage() for r in caplog.records)
