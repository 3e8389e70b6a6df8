"""A pipelined start against the agent runtime: `initialize` and `session/new` written
together (one write, byte by byte, random chunks) are answered in order, initialize
first; a slow `initialize` holds what follows it; as a real process
(`python -m acp_sdk agent`) and in process."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
from typing import Any

import orjson
import pytest

from acp_sdk import Agent, AgentContext
from acp_sdk.agent import serve_agent
from acp_sdk.schema import (
    InitializeRequest,
    InitializeResponse,
    NewSessionRequest,
    NewSessionResponse,
)
from tests.memory_pipe import MemoryPipe

pytestmark = pytest.mark.timeout(60)
AGENT = [sys.executable, "-m", "acp_sdk", "agent"]


def frame(**message: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"


INITIALIZE = frame(id=0, method="initialize", params={"protocolVersion": 1})
NEW = [frame(id=n, method="session/new", params={"cwd": "/", "mcpServers": []}) for n in (1, 2, 3)]
PIPELINED = INITIALIZE + b"".join(NEW)


def pieces(way: str) -> list[bytes]:
    if way == "one write":
        return [PIPELINED]
    if way == "byte by byte":
        return [PIPELINED[i : i + 1] for i in range(len(PIPELINED))]
    rng = random.Random(way)
    out, i = [], 0
    while i < len(PIPELINED):
        size = rng.randint(1, 40)
        out.append(PIPELINED[i : i + size])
        i += size
    return out


WAYS = ["one write", "byte by byte", *[f"random {n}" for n in range(4)]]


def assert_in_order(answers: list[dict[str, Any]]) -> None:
    assert [a["id"] for a in answers] == [0, 1, 2, 3]
    assert answers[0]["result"]["protocolVersion"] == 1
    ids = [a["result"]["sessionId"] for a in answers[1:]]
    assert len(set(ids)) == 3  # three sessions, none refused


@pytest.mark.parametrize("way", WAYS)
def test_the_scenario_agent_answers_a_pipelined_start_in_order(way: str) -> None:
    process = subprocess.Popen(AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        for piece in pieces(way):
            os.write(process.stdin.fileno(), piece)
        answers = [orjson.loads(process.stdout.readline()) for _ in range(4)]
        process.stdin.close()
        assert process.wait(15) == 0
    finally:
        process.kill()
        process.wait(5)
        process.stdout.close()
    assert_in_order(answers)


def test_a_pipelined_start_then_end_of_input_is_answered_whole() -> None:
    """`printf ... | agent`: the end of input right behind the requests waits too."""
    result = subprocess.run(AGENT, input=PIPELINED, capture_output=True, timeout=30, check=True)
    assert_in_order([orjson.loads(line) for line in result.stdout.splitlines()])


class SlowStart(Agent):
    """An `initialize` that awaits (a model server to warm up, say) before answering."""

    def __init__(self) -> None:
        self.order: list[str] = []

    async def initialize(self, params: InitializeRequest, ctx: AgentContext) -> InitializeResponse:
        await asyncio.sleep(0.05)
        self.order.append("initialize")
        return await super().initialize(params, ctx)

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        self.order.append("session/new")
        return NewSessionResponse(session_id=f"s{len(self.order)}")


@pytest.mark.parametrize("way", ["one write", "byte by byte"])
def test_a_slow_initialize_holds_what_follows_it(way: str) -> None:
    async def go() -> tuple[list[dict[str, Any]], list[str]]:
        agent = SlowStart()
        to_agent, from_agent = MemoryPipe(), MemoryPipe()
        server = asyncio.create_task(serve_agent(agent, to_agent, from_agent))
        for piece in pieces(way):
            to_agent.write(piece)
        answers = [await from_agent.line() for _ in range(4)]
        to_agent.close()
        await asyncio.wait_for(server, 15)
        return answers, agent.order

    answers, order = asyncio.run(go())
    assert_in_order(answers)
    assert order == ["initialize", "session/new", "session/new", "session/new"]
