"""The agent runtime refuses a notice or a compaction update the client did not advertise:
`send_update` raises `CapabilityNotNegotiated` to the agent's code and nothing reaches the
wire; the turn goes on. Advertised, they go out typed. Raw frames in, over `serve_agent`."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from acp_sdk import Agent, AgentContext, CapabilityNotNegotiated
from acp_sdk.agent import MemorySessionStore, serve_agent
from acp_sdk.schema import (
    AgentMessageChunk,
    CompactionSummaryChunk,
    CompactionUpdate,
    NewSessionRequest,
    NewSessionResponse,
    Notice,
    PromptRequest,
    PromptResponse,
    SessionUpdate,
    TextContent,
)
from tests.memory_pipe import MemoryPipe

pytestmark = pytest.mark.timeout(60)
STEP = 10.0

UPDATES: list[SessionUpdate] = [
    Notice(severity="warning", title="Rate limited"),
    CompactionUpdate(compaction_id="c1", status="in_progress"),
    CompactionSummaryChunk(compaction_id="c1", content=TextContent(text="so far")),
    CompactionUpdate(compaction_id="c1", status="completed"),
]


class GatedAgent(Agent):
    def __init__(self) -> None:
        self.refused: list[str] = []

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id="s1")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        for update in UPDATES:
            try:
                await ctx.send_update(params.session_id, update)
            except CapabilityNotNegotiated as error:
                self.refused.append(error.capability)
        await ctx.send_update(params.session_id, AgentMessageChunk(content=TextContent(text="ok")))
        return PromptResponse(stop_reason="end_turn")


def frame(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return orjson.dumps(message) + b"\n"


class StoredAgent(GatedAgent):
    """The same turn, with the session store serving `session/new`."""

    new_session = Agent.new_session


def run_turn(
    client_capabilities: dict[str, Any], store: MemorySessionStore | None = None
) -> tuple[GatedAgent, list[dict[str, Any]]]:
    async def go() -> tuple[GatedAgent, list[dict[str, Any]]]:
        agent = GatedAgent() if store is None else StoredAgent()
        to_agent, from_agent = MemoryPipe(), MemoryPipe()
        server = asyncio.get_running_loop().create_task(
            serve_agent(agent, to_agent, from_agent, store=store)
        )
        init = {"protocolVersion": 1, "clientCapabilities": client_capabilities}
        to_agent.write(frame(0, "initialize", init))
        assert "result" in await asyncio.wait_for(from_agent.line(), STEP)
        to_agent.write(frame(1, "session/new", {"cwd": "/", "mcpServers": []}))
        opened = await asyncio.wait_for(from_agent.line(), STEP)
        prompt = {
            "sessionId": opened["result"]["sessionId"],
            "prompt": [{"type": "text", "text": "go"}],
        }
        to_agent.write(frame(2, "session/prompt", prompt))
        frames = []
        while True:
            message = await asyncio.wait_for(from_agent.line(), STEP)
            frames.append(message)
            if message.get("id") == 2:
                break
        to_agent.close()
        await asyncio.wait_for(server, STEP)
        return agent, frames

    return asyncio.run(go())


def _kinds(frames: list[dict[str, Any]]) -> list[str]:
    return [
        f["params"]["update"]["sessionUpdate"]
        for f in frames
        if f.get("method") == "session/update"
    ]


def test_unadvertised_notices_and_compaction_updates_are_refused_and_not_sent() -> None:
    agent, frames = run_turn({})
    assert agent.refused == [
        "clientCapabilities.session.notices",
        "clientCapabilities.session.compaction",
        "clientCapabilities.session.compaction",
        "clientCapabilities.session.compaction",
    ]
    assert _kinds(frames) == ["agent_message_chunk"]
    assert frames[-1]["result"] == {"stopReason": "end_turn"}


def test_each_capability_lets_its_own_updates_through() -> None:
    agent, frames = run_turn({"session": {"notices": {}}})
    assert agent.refused == ["clientCapabilities.session.compaction"] * 3
    assert _kinds(frames) == ["notice", "agent_message_chunk"]
    agent, frames = run_turn({"session": {"notices": {}, "compaction": {}}})
    assert agent.refused == []
    assert _kinds(frames) == [
        "notice",
        "compaction_update",
        "compaction_summary_chunk",
        "compaction_update",
        "agent_message_chunk",
    ]
    assert frames[0]["params"]["update"] == {
        "sessionUpdate": "notice",
        "severity": "warning",
        "title": "Rate limited",
    }


def test_with_a_session_store_a_refused_update_is_neither_sent_nor_kept() -> None:
    store = MemorySessionStore()
    agent, frames = run_turn({"session": {"notices": {}}}, store)
    assert agent.refused == ["clientCapabilities.session.compaction"] * 3
    assert _kinds(frames) == ["notice", "agent_message_chunk"]
    session_id = frames[0]["params"]["sessionId"]
    kept = asyncio.run(store.read(session_id, 0, 100))
    kinds = [update["sessionUpdate"] for _, update in kept]
    assert kinds == ["user_message_chunk", "notice", "agent_message_chunk"]
