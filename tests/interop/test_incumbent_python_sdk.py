"""Interop with the official `agent-client-protocol` package, both ways, over real stdio."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import acp
import pytest

from acp_sdk.schema import AgentMessageChunk, TextContent
from tests.client.facades import FACADES, SCENARIO

pytestmark = pytest.mark.timeout(60)

INCUMBENT_AGENT = [sys.executable, "-m", "tests.client.agents.incumbent_agent"]


@pytest.mark.parametrize("facade", sorted(FACADES))
def test_our_clients_drive_an_incumbent_agent(facade: str) -> None:
    with FACADES[facade](INCUMBENT_AGENT) as driver:
        session = driver.new_session("/tmp")
        assert session.session_id == "incumbent-1"
        updates, response = driver.prompt(session, "hello from acp_sdk")
    assert response.stop_reason == "end_turn"
    assert [
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    ] == ["hello from acp_sdk"]


class _RecordingClient:
    """The incumbent's client interface, recording every session update."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any
    ) -> Any:
        from acp.schema import AllowedOutcome, RequestPermissionResponse

        return RequestPermissionResponse(
            outcome=AllowedOutcome(option_id=options[0].option_id, outcome="selected")
        )


def test_incumbent_client_drives_our_scenario_agent() -> None:
    async def go() -> tuple[str, list[Any]]:
        recorder = _RecordingClient()
        client: Any = recorder  # the incumbent's Client protocol, structurally
        async with acp.spawn_agent_process(client, SCENARIO[0], *SCENARIO[1:]) as (conn, _process):
            init = await conn.initialize(protocol_version=1)
            assert init.agent_info is not None
            assert init.agent_info.name == "acp-sdk-scenario-agent"
            session = await conn.new_session(cwd="/tmp", mcp_servers=[])
            response = await conn.prompt(
                session_id=session.session_id, prompt=[acp.text_block("echo hi there")]
            )
            permission = await conn.prompt(
                session_id=session.session_id, prompt=[acp.text_block("permission")]
            )
            assert permission.stop_reason == "end_turn"
            tool = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("tool")])
            assert tool.stop_reason == "end_turn"
            return response.stop_reason, recorder.updates

    stop_reason, updates = asyncio.run(go())
    assert stop_reason == "end_turn"
    chunks = [
        u.content.text for u in updates if getattr(u, "session_update", "") == "agent_message_chunk"
    ]
    assert "".join(chunks[:2]) == "hi there"
    assert "Permission granted." in chunks
