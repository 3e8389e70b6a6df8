"""Streaming and round-trip benchmark over real subprocess stdio.

    python bench/streaming.py            # needs `pip install -e '.[dev]'` (incumbent included)

1. Notifications per second: a prompt turn in which the agent streams N
   `agent_message_chunk` updates, timed from sending the prompt to the end of the turn,
   every update decoded into a typed object by the client.
2. Request round trip: median time of an `authenticate` call (a no-op on both agents).

Clients: acp_sdk `Client` (threads) and `AsyncClient`, the incumbent's client, and a
hand-written floor (raw pipes + orjson, no typing, no dispatch). Agents: acp_sdk's scenario
agent, and the incumbent's own agent for the incumbent-to-incumbent baseline. All are
measured in this one run, interleaved round by round.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from acp_sdk.aio_client import AsyncClient  # noqa: E402
from acp_sdk.sync_client import Client  # noqa: E402

OURS = [sys.executable, "-m", "acp_sdk", "agent"]
THEIRS = [sys.executable, "-m", "tests.facades.agents.incumbent_agent"]
N = 20_000
ROUNDS = 3
RTT_CALLS = 2_000


def ours_sync_stream() -> float:
    with Client.spawn(OURS) as client:
        session = client.new_session(cwd="/tmp")
        start = time.perf_counter()
        count = sum(1 for _ in session.prompt(f"stream {N}"))
        elapsed = time.perf_counter() - start
    assert count == N
    return N / elapsed


def ours_async_stream() -> float:
    async def go() -> float:
        async with AsyncClient.spawn(OURS) as client:
            session = await client.new_session(cwd="/tmp")
            start = time.perf_counter()
            count = 0
            async for _ in session.prompt(f"stream {N}"):
                count += 1
            elapsed = time.perf_counter() - start
        assert count == N
        return N / elapsed

    return asyncio.run(go())


def incumbent_stream(agent: list[str]) -> float:
    import acp

    class Counter:
        count = 0

        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            Counter.count += 1

    async def go() -> float:
        client: Any = Counter()
        async with acp.spawn_agent_process(
            client, agent[0], *agent[1:], env=dict(os.environ), cwd=str(ROOT)
        ) as (conn, _):
            await conn.initialize(protocol_version=1)
            session = await conn.new_session(cwd="/tmp", mcp_servers=[])
            start = time.perf_counter()
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(f"stream {N}")])
            elapsed = time.perf_counter() - start
        assert Counter.count == N, Counter.count
        Counter.count = 0
        return N / elapsed

    return asyncio.run(go())


def floor_stream() -> float:
    """Raw pipes and orjson: what any Python client pays at least."""
    process = subprocess.Popen(OURS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    assert process.stdin is not None
    assert process.stdout is not None
    out = process.stdout

    def call(message: dict[str, Any]) -> Any:
        process.stdin.write(orjson.dumps(message) + b"\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        while True:
            reply = orjson.loads(out.readline())
            if reply.get("id") == message["id"]:
                return reply

    call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    sid = call(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": "/tmp", "mcpServers": []},
        }
    )
    prompt = {
        "sessionId": sid["result"]["sessionId"],
        "prompt": [{"type": "text", "text": f"stream {N}"}],
    }
    start = time.perf_counter()
    process.stdin.write(
        orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
        + b"\n"
    )
    process.stdin.flush()
    count = 0
    while True:
        reply = orjson.loads(out.readline())
        if reply.get("id") == 2:
            break
        count += 1
    elapsed = time.perf_counter() - start
    process.stdin.close()
    process.wait()
    out.close()
    assert count == N
    return N / elapsed


def ours_sync_rtt() -> float:
    with Client.spawn(OURS) as client:
        samples = []
        for _ in range(RTT_CALLS):
            start = time.perf_counter_ns()
            client.authenticate(method_id="scenario-login")
            samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def ours_async_rtt() -> float:
    async def go() -> float:
        async with AsyncClient.spawn(OURS) as client:
            samples = []
            for _ in range(RTT_CALLS):
                start = time.perf_counter_ns()
                await client.authenticate(method_id="scenario-login")
                samples.append(time.perf_counter_ns() - start)
        return statistics.median(samples) / 1000

    return asyncio.run(go())


def incumbent_rtt(agent: list[str]) -> float:
    import acp

    async def go() -> float:
        client: Any = object()
        async with acp.spawn_agent_process(
            client, agent[0], *agent[1:], env=dict(os.environ), cwd=str(ROOT)
        ) as (conn, _):
            await conn.initialize(protocol_version=1)
            samples = []
            for _ in range(RTT_CALLS):
                start = time.perf_counter_ns()
                await conn.authenticate(method_id="scenario-login")
                samples.append(time.perf_counter_ns() - start)
        return statistics.median(samples) / 1000

    return asyncio.run(go())


def floor_rtt() -> float:
    process = subprocess.Popen(OURS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    assert process.stdin is not None
    assert process.stdout is not None
    write, readline = process.stdin.write, process.stdout.readline
    write(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n')
    process.stdin.flush()
    readline()
    samples = []
    for index in range(1, RTT_CALLS + 1):
        start = time.perf_counter_ns()
        write(
            orjson.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": index,
                    "method": "authenticate",
                    "params": {"methodId": "scenario-login"},
                }
            )
            + b"\n"
        )
        process.stdin.flush()
        orjson.loads(readline())
        samples.append(time.perf_counter_ns() - start)
    process.stdin.close()
    process.wait()
    process.stdout.close()
    return statistics.median(samples) / 1000


def best(fn: Callable[[], float], results: dict[str, list[float]], key: str) -> None:
    results.setdefault(key, []).append(fn())


def main() -> None:
    os.chdir(ROOT)
    streams: dict[str, list[float]] = {}
    rtts: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        best(floor_stream, streams, "floor (raw pipes + orjson), our agent")
        best(ours_sync_stream, streams, "acp_sdk Client, our agent")
        best(ours_async_stream, streams, "acp_sdk AsyncClient, our agent")
        best(lambda: incumbent_stream(OURS), streams, "incumbent client, our agent")
        best(lambda: incumbent_stream(THEIRS), streams, "incumbent client, incumbent agent")
        best(floor_rtt, rtts, "floor (raw pipes + orjson), our agent")
        best(ours_sync_rtt, rtts, "acp_sdk Client, our agent")
        best(ours_async_rtt, rtts, "acp_sdk AsyncClient, our agent")
        best(lambda: incumbent_rtt(OURS), rtts, "incumbent client, our agent")
        best(lambda: incumbent_rtt(THEIRS), rtts, "incumbent client, incumbent agent")
    print(f"typed session/update notifications per second (N={N}, best of {ROUNDS})")
    for key, values in streams.items():
        print(f"  {key:42} {max(values):>10,.0f}/s")
    print(f"request round trip, median of {RTT_CALLS} (best of {ROUNDS} runs)")
    for key, values in rtts.items():
        print(f"  {key:42} {min(values):>10.1f} us")


if __name__ == "__main__":
    main()
