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
