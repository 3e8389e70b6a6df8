"""Every prompt gets exactly one answer, whatever the timing of its `session/cancel`:
in the same read as the prompt (the handler task is cancelled before it first runs),
while the handler runs, or after it returned. Frames are fed in one chunk, to a real
stdio agent and to `serve_agent` in-process."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from acp_sdk.agent import serve_agent
from tests.agent.cancel_agent import CancelAgent
from tests.memory_pipe import MemoryPipe

pytestmark = pytest.mark.timeout(60)
AGENT = [sys.executable, str(Path(__file__).with_name("cancel_agent.py"))]
SESSIONS = 40
STEP = 15.0  # seconds any single step may take before it counts as hung


def frame(**message: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"


def prompt(request_id: int, session_id: str, text: str) -> bytes:
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    return frame(id=request_id, method="session/prompt", params=params)


def new_session(request_id: int) -> bytes:
    return frame(id=request_id, method="session/new", params={"cwd": "/", "mcpServers": []})


def cancel(session_id: str) -> bytes:
    return frame(method="session/cancel", params={"sessionId": session_id})


class Agent:
    """A stdio agent process, its replies read by a thread so every wait is bounded."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.replies: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.replies.put(line)
        self.replies.put(b"")

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def reply(self) -> dict[str, Any]:
        line = self.replies.get(timeout=STEP)
        assert line, "the agent closed its output"
        message: dict[str, Any] = orjson.loads(line)
        return message

    def answer(self) -> dict[str, Any]:
        """The next reply that is an answer (updates skipped)."""
        while "id" not in (message := self.reply()):
            pass
        return message

    def finish(self) -> tuple[list[dict[str, Any]], bytes]:
        """End its input; what it still wrote, and its stderr, once it exited."""
        assert self.process.stdin is not None
        assert self.process.stderr is not None
        self.process.stdin.close()
        self.process.wait(STEP)
        rest = []
        while line := self.replies.get(timeout=STEP):
            rest.append(orjson.loads(line))
        return rest, self.process.stderr.read()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(STEP)
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def test_stdio_agent_answers_each_prompt_once_whatever_the_cancel_timing() -> None:
    agent = Agent()
    try:
        agent.send(frame(id=0, method="initialize", params={"protocolVersion": 1}))
        assert "result" in agent.reply()
        agent.send(b"".join(new_session(i) for i in range(1, SESSIONS + 1)))
        sessions = [agent.answer()["result"]["sessionId"] for _ in range(SESSIONS)]
        answers: list[dict[str, Any]] = []

        # Before the handler starts: each prompt and its cancel in one chunk.
        early = sessions[: SESSIONS - 2]
        agent.send(
            b"".join(
                prompt(100 + n, sid, "wait" if n % 2 else "quick") + cancel(sid)
                for n, sid in enumerate(early)
            )
        )
        answers += [agent.answer() for _ in early]
        assert sorted(a["id"] for a in answers) == [100 + n for n in range(len(early))]
        assert {a["result"]["stopReason"] for a in answers} == {"cancelled"}

        # While the handler runs: its first update proves it started.
        running, done = sessions[-2:]
        agent.send(prompt(200, running, "wait"))
        assert agent.reply()["method"] == "session/update"
        agent.send(cancel(running))
        answers.append(agent.answer())
        assert answers[-1] == {"jsonrpc": "2.0", "id": 200, "result": {"stopReason": "cancelled"}}

        # After it returned: the cancel finds nothing to cancel, and no second answer.
        agent.send(prompt(300, done, "quick"))
        answers.append(agent.answer())
        assert answers[-1]["result"] == {"stopReason": "end_turn"}
        agent.send(cancel(done) + new_session(301))
        assert agent.answer()["id"] == 301

        rest, stderr = agent.finish()  # end of input: the agent exits
        assert [m for m in rest if "id" in m] == []
        assert max(Counter(a["id"] for a in answers).values()) == 1
        assert agent.process.returncode == 0
        assert b"Traceback" not in stderr, stderr.decode(errors="replace")
    finally:
        agent.kill()


@pytest.mark.parametrize("text", ["quick", "wait"])
def test_serve_agent_answers_a_prompt_cancelled_in_the_same_read(text: str) -> None:
    async def go() -> list[dict[str, Any]]:
        to_agent, from_agent = MemoryPipe(), MemoryPipe()
        server = asyncio.get_running_loop().create_task(
            serve_agent(CancelAgent(), to_agent, from_agent)
        )
        to_agent.write(frame(id=0, method="initialize", params={"protocolVersion": 1}))
        assert "result" in await from_agent.line()
        to_agent.write(frame(id=1, method="session/new", params={"cwd": "/", "mcpServers": []}))
        session_id = (await from_agent.line())["result"]["sessionId"]
        to_agent.write(prompt(2, session_id, text) + cancel(session_id))
        answer = await from_agent.line()
        to_agent.close()
        await asyncio.wait_for(server, STEP)
        return [answer, *from_agent.rest()]

    answers = asyncio.run(go())
    assert answers == [{"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}}]
