"""Streaming and round-trip benchmark over real subprocess stdio.

    python bench/streaming.py            # needs `pip install -e '.[bench]'` (the incumbent)

1. Notifications per second: a prompt turn in which the agent streams N
   `agent_message_chunk` updates, timed from writing the prompt request to reading its
   response, every update decoded by the client (a typed object for acp_sdk and the
   incumbent, a dict for the floor).
2. Request round trip: the median time of `authenticate` calls (a no-op on every agent),
   after a warm-up.

Pairs (client <- agent, all in `bench/peers/`):

- floor: a raw reader (`os.read` in 64 KiB chunks, `orjson.loads` per line) <- the raw
  asyncio agent `floor_agent.py` (orjson frames written in batches, as fast as it can);
  for round trips, a raw asyncio client (pipes + orjson) <- the same agent.
- acp_sdk `Client` (threads) and `AsyncClient` <- `ours_agent.py` (`acp_sdk.Agent` +
  `run_agent`).
- the incumbent's client (`acp.spawn_agent_process`) <- the interop peer
  `tests/client/agents/incumbent_agent.py` (the incumbent's `Agent` + `run_agent`).

`bench/run.py` runs these interleaved with everything else; this module alone runs
`ROUNDS` interleaved rounds of these two figures.
"""

from __future__ import annotations

import asyncio
import functools
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from acp_sdk import AsyncClient, Client

ROOT = Path(__file__).resolve().parents[1]
PEERS = Path(__file__).resolve().parent / "peers"
FLOOR_AGENT = [sys.executable, str(PEERS / "floor_agent.py")]
OUR_AGENT = [sys.executable, str(PEERS / "ours_agent.py")]
# The incumbent-based agent of the interop tests also serves `stream N` for the benchmark.
THEIR_AGENT = [sys.executable, str(ROOT / "tests/client/agents/incumbent_agent.py")]
N = 50_000
RTT_CALLS = 1_000
RTT_WARMUP = 100
ROUNDS = 3
READ_CHUNK = 1 << 16


# ---------------------------------------------------------------------------- streaming


def floor_stream(agent: list[str] = FLOOR_AGENT, n: int = N) -> float:
    """Raw reader <- `agent` (the raw agent: the physical limit of a Python pair)."""
    process = subprocess.Popen(agent, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None
    assert process.stdout is not None
    stdin, fd = process.stdin, process.stdout.fileno()
    loads = orjson.loads
    pending = b""

    def frames() -> Any:
        nonlocal pending
        while True:
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                return
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                yield loads(line)

    def call(message: dict[str, Any]) -> Any:
        stdin.write(orjson.dumps(message) + b"\n")
        stdin.flush()
        for reply in stream:
            if reply.get("id") == message["id"]:
                return reply
        raise EOFError

    stream = frames()
    call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    new = {"cwd": "/tmp", "mcpServers": []}
    sid = call({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new})
    prompt = {
        "sessionId": sid["result"]["sessionId"],
        "prompt": [{"type": "text", "text": f"stream {n}"}],
    }
    count = 0
    start = time.perf_counter()
    stdin.write(
        orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
        + b"\n"
    )
    stdin.flush()
    for message in stream:
        if message.get("id") == 2:
            break
        count += 1
    elapsed = time.perf_counter() - start
    stdin.close()
    process.wait()
    process.stdout.close()
    assert count == n, count
    return n / elapsed


def ours_sync_stream(agent: list[str] = OUR_AGENT, n: int = N) -> float:
    with Client.spawn(agent) as client:
        session = client.new_session(cwd="/tmp")
        count = 0
        start = time.perf_counter()
        for _ in session.prompt(f"stream {n}"):
            count += 1
        elapsed = time.perf_counter() - start
    assert count == n, count
    return n / elapsed


def ours_async_stream(agent: list[str] = OUR_AGENT, n: int = N) -> float:
    async def go() -> float:
        async with AsyncClient.spawn(agent) as client:
            session = await client.new_session(cwd="/tmp")
            count = 0
            start = time.perf_counter()
            async for _ in session.prompt(f"stream {n}"):
                count += 1
            elapsed = time.perf_counter() - start
        assert count == n, count
        return n / elapsed

    return asyncio.run(go())


def incumbent_stream(n: int = N) -> float:
    import acp

    class Counter:
        count = 0

        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            self.count += 1

    async def go() -> float:
        counter = Counter()
        client: Any = counter
        async with acp.spawn_agent_process(
            client, THEIR_AGENT[0], *THEIR_AGENT[1:], env=dict(os.environ), cwd=str(ROOT)
        ) as (conn, _):
            await conn.initialize(protocol_version=1)
            session = await conn.new_session(cwd="/tmp", mcp_servers=[])
            start = time.perf_counter()
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(f"stream {n}")])
            while counter.count < n:  # in case it dispatches updates after the response
                await asyncio.sleep(0)
            elapsed = time.perf_counter() - start
        assert counter.count == n, counter.count
        return n / elapsed

    return asyncio.run(go())


# ---------------------------------------------------------------------------- round trips


def _median_us(samples: list[int]) -> float:
    return statistics.median(samples[RTT_WARMUP:]) / 1000


def floor_rtt(calls: int = RTT_CALLS) -> float:
    """Raw asyncio client (pipes + orjson) <- raw asyncio agent."""

    async def go() -> float:
        process = await asyncio.create_subprocess_exec(
            *FLOOR_AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, limit=1 << 20
        )
        assert process.stdin is not None
        assert process.stdout is not None
        writer, reader = process.stdin, process.stdout
        dumps, loads = orjson.dumps, orjson.loads
        writer.write(
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
        )
        await writer.drain()
        await reader.readline()
        samples = []
        for index in range(1, RTT_WARMUP + calls + 1):
            start = time.perf_counter_ns()
            writer.write(
                dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": index,
                        "method": "authenticate",
                        "params": {"methodId": "bench-login"},
                    },
                    option=orjson.OPT_APPEND_NEWLINE,
                )
            )
            await writer.drain()
            reply = loads(await reader.readline())
            samples.append(time.perf_counter_ns() - start)
            assert reply["id"] == index
        writer.close()
        await process.wait()
        return _median_us(samples)

    return asyncio.run(go())


def ours_sync_rtt(calls: int = RTT_CALLS) -> float:
    with Client.spawn(OUR_AGENT) as client:
        samples = []
        for _ in range(RTT_WARMUP + calls):
            start = time.perf_counter_ns()
            client.authenticate(method_id="bench-login")
            samples.append(time.perf_counter_ns() - start)
    return _median_us(samples)


def ours_async_rtt(calls: int = RTT_CALLS) -> float:
    async def go() -> float:
        async with AsyncClient.spawn(OUR_AGENT) as client:
            samples = []
            for _ in range(RTT_WARMUP + calls):
                start = time.perf_counter_ns()
                await client.authenticate(method_id="bench-login")
                samples.append(time.perf_counter_ns() - start)
        return _median_us(samples)

    return asyncio.run(go())


def incumbent_rtt(calls: int = RTT_CALLS) -> float:
    import acp

    async def go() -> float:
        client: Any = object()
        async with acp.spawn_agent_process(
            client, THEIR_AGENT[0], *THEIR_AGENT[1:], env=dict(os.environ), cwd=str(ROOT)
        ) as (conn, _):
            await conn.initialize(protocol_version=1)
            samples = []
            for _ in range(RTT_WARMUP + calls):
                start = time.perf_counter_ns()
                await conn.authenticate(method_id="bench-login")
                samples.append(time.perf_counter_ns() - start)
        return _median_us(samples)

    return asyncio.run(go())


STREAMS: dict[str, Callable[[], float]] = {
    "floor: raw reader <- raw agent": floor_stream,
    "acp_sdk Client <- acp_sdk agent": ours_sync_stream,
    "acp_sdk AsyncClient <- acp_sdk agent": ours_async_stream,
    "incumbent client <- incumbent agent": incumbent_stream,
}
# Which side limits: each of our halves against the other side's floor.
STREAM_HALVES: dict[str, Callable[[], float]] = {
    "raw reader <- acp_sdk agent": functools.partial(floor_stream, OUR_AGENT),
    "acp_sdk Client <- raw agent": functools.partial(ours_sync_stream, FLOOR_AGENT),
    "acp_sdk AsyncClient <- raw agent": functools.partial(ours_async_stream, FLOOR_AGENT),
}
ROUND_TRIPS: dict[str, Callable[[], float]] = {
    "floor: raw asyncio client <- raw agent": floor_rtt,
    "acp_sdk AsyncClient <- acp_sdk agent": ours_async_rtt,
    "acp_sdk Client <- acp_sdk agent": ours_sync_rtt,
    "incumbent client <- incumbent agent": incumbent_rtt,
}


def main() -> None:
    streams: dict[str, list[float]] = {key: [] for key in {**STREAMS, **STREAM_HALVES}}
    rtts: dict[str, list[float]] = {key: [] for key in ROUND_TRIPS}
    for _ in range(ROUNDS):  # interleaved: every pair, every round
        for key, stream in {**STREAMS, **STREAM_HALVES}.items():
            streams[key].append(stream())
        for key, rtt in ROUND_TRIPS.items():
            rtts[key].append(rtt())
    floor = statistics.median(next(iter(streams.values())))
    print(f"session/update notifications per second (N={N}, median of {ROUNDS} runs)")
    for key, values in streams.items():
        median = statistics.median(values)
        print(f"  {key:42} {median:>10,.0f}/s  {median / floor:6.0%} of floor")
    floor = statistics.median(next(iter(rtts.values())))
    print(f"request round trip (median of {RTT_CALLS} calls; median of {ROUNDS} runs)")
    for key, values in rtts.items():
        median = statistics.median(values)
        print(f"  {key:42} {median:>10.1f} us  {median / floor:5.2f}x floor")


if __name__ == "__main__":
    main()
