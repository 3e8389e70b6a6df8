"""A `session/cancel` read in the same chunk as its prompt cancels it: the agent's handler
task was cancelled before its first step, so its flow never ran and the prompt was never
answered (found by `replay --against`, which sends a recorded cancel right behind its
prompt)."""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

import orjson
import pytest

pytestmark = pytest.mark.timeout(60)
AGENT = [sys.executable, "-m", "acp_sdk", "agent"]


def test_a_cancel_right_behind_its_prompt_is_answered_cancelled() -> None:
    agent = subprocess.Popen(AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None
    assert agent.stdout is not None
    stdout = agent.stdout
    answers: list[dict[str, Any]] = []
    arrived = threading.Condition()

    def read() -> None:
        for line in stdout:
            with arrived:
                answers.append(orjson.loads(line))
                arrived.notify_all()

    def answer(request_id: int) -> dict[str, Any]:
        with arrived:
            assert arrived.wait_for(
                lambda: any(a.get("id") == request_id for a in answers), timeout=30
            ), answers
            return next(a for a in answers if a.get("id") == request_id)

    def send(*messages: dict[str, Any]) -> None:
        assert agent.stdin is not None
        agent.stdin.write(b"".join(orjson.dumps(m) + b"\n" for m in messages))  # one write
        agent.stdin.flush()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        answer(0)
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": "/tmp", "mcpServers": []},
            }
        )
        session = answer(1)["result"]["sessionId"]
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]}
        send(
            {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt},
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}},
        )
        assert answer(2)["result"]["stopReason"] == "cancelled"
    finally:
        agent.stdin.close()
        agent.wait(30)
        reader.join(30)
        stdout.close()
