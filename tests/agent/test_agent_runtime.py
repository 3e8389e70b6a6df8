"""The agent runtime over real stdio, driven by raw bytes: junk in, exact answers out."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import orjson
import pytest

pytestmark = pytest.mark.timeout(60)
AGENT = [sys.executable, "-m", "acp_sdk", "agent"]


def exchange(*frames: bytes) -> list[dict[str, Any]]:
    result = subprocess.run(
        AGENT, input=b"".join(frames), capture_output=True, timeout=30, check=True
    )
    return [orjson.loads(line) for line in result.stdout.splitlines()]


def frame(**message: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"


def test_junk_is_answered_and_real_requests_still_served() -> None:
    replies = exchange(
        b"{nope\n",
        b"[]\n",
        frame(
            id=1, method="session/new", params={"cwd": "/", "mcpServers": []}
        ),  # before initialize
        frame(id=0, method="initialize", params={"protocolVersion": 1}),
    )
    by_id: dict[Any, list[dict[str, Any]]] = {}
    for reply in replies:
        by_id.setdefault(reply.get("id"), []).append(reply)
    assert sorted(r["error"]["code"] for r in by_id[None]) == [-32700, -32600]
    assert by_id[1][0]["error"]["code"] == -32600
    assert by_id[0][0]["result"]["protocolVersion"] == 1
    assert by_id[0][0]["result"]["agentInfo"]["name"] == "acp-sdk-scenario-agent"


def test_stdout_carries_only_frames_even_when_stdin_ends_mid_frame() -> None:
    replies = exchange(
        frame(id=0, method="initialize", params={"protocolVersion": 1}), b'{"jsonrpc":"2.0","id":1,'
    )
    by_id = {r["id"]: r for r in replies}
    assert set(by_id) == {0, None}
    assert by_id[None]["error"]["code"] == -32700
    assert by_id[0]["result"]["protocolVersion"] == 1


def test_unsupported_protocol_version_is_answered_with_ours() -> None:
    [reply] = exchange(frame(id=0, method="initialize", params={"protocolVersion": 99}))
    assert reply["result"]["protocolVersion"] == 1


# ------------------------------------------------------------------ end of input mid-turn

STREAMING_AGENT = """
import asyncio
from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.schema import (
    AgentMessageChunk, NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse,
    TextContent,
)

class Streaming(Agent):
    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id="s1")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        while True:  # until the client goes away
            await ctx.send_update("s1", AgentMessageChunk(content=TextContent(text="tick")))
            await asyncio.sleep(0.01)

run_agent(Streaming())
"""


@pytest.mark.parametrize("turn", ["wait", "streaming"])
def test_end_of_input_mid_turn_cancels_it_and_the_agent_exits_0(turn: str) -> None:
    """The client closes the agent's stdin during a turn: the turn ends as cancelled (for a
    half-closed client still reading), nothing is logged as a failure, exit code 0."""
    argv = AGENT if turn == "wait" else [sys.executable, "-c", STREAMING_AGENT]
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        _cancel_mid_turn(process, turn)
    finally:
        process.kill()
        process.wait(5)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _cancel_mid_turn(process: subprocess.Popen[bytes], turn: str) -> None:
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(frame(id=0, method="initialize", params={"protocolVersion": 1}))
    process.stdin.flush()
    assert "result" in orjson.loads(process.stdout.readline())
    process.stdin.write(frame(id=1, method="session/new", params={"cwd": "/", "mcpServers": []}))
    process.stdin.flush()
    session_id = orjson.loads(process.stdout.readline())["result"]["sessionId"]
    process.stdin.write(
        frame(
            id=2,
            method="session/prompt",
            params={"sessionId": session_id, "prompt": [{"type": "text", "text": "wait"}]},
        )
    )
    process.stdin.flush()
    if turn == "streaming":
        assert b"tick" in process.stdout.readline()  # the turn is running
    stdout, stderr = process.communicate(timeout=15)  # closes stdin: end of input, mid-turn
    answers = [orjson.loads(line) for line in stdout.splitlines()]
    [answer] = [a for a in answers if a.get("id") == 2]
    assert answer["result"]["stopReason"] == "cancelled"
    assert process.returncode == 0
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")
