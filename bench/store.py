"""What a session store costs: streaming with and without one, and replaying a long session.

    python bench/store.py

1. Streaming, same run, interleaved rounds: `AsyncClient` <- `bench/peers/ours_agent.py`
   streaming N `agent_message_chunk` updates, without a store, with a
   `MemorySessionStore`, and with a `SqliteSessionStore` on a fresh file (default
   `synchronous=NORMAL`, and `durable=True`). Each update is kept before it is sent, so
   the figure includes the round trip to the store's worker thread and the commit.
   Reported: updates per second, and the store's cost per update
   (1/rate_with - 1/rate_without, in microseconds).
2. Replay: a `SqliteSessionStore` file holding one session of REPLAY_N updates (the
   prompt and the agent's chunks, written by the agent over stdio), loaded by a new agent
   process: the time from sending `session/load` until its answer, every update decoded
   by the client; and `ctx.history()` of the same session in-process (read + decode +
   fold into a `SessionState`).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from acp_sdk import AsyncClient

PEERS = Path(__file__).resolve().parent / "peers"
OUR_AGENT = [sys.executable, str(PEERS / "ours_agent.py")]
N = 20_000
REPLAY_N = 10_000
ROUNDS = 3


def stream(store: str | None, durable: bool = False, n: int = N) -> float:
    """Updates per second of one `stream n` turn, the agent keeping them in `store`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACP_BENCH_STORE")}
    if store is not None:
        env["ACP_BENCH_STORE"] = store
    if durable:
        env["ACP_BENCH_STORE_DURABLE"] = "1"

    async def go() -> float:
        async with AsyncClient.spawn(OUR_AGENT, env=env) as client:
            session = await client.new_session(cwd="/tmp")
            count = 0
            start = time.perf_counter()
            async for _ in session.prompt(f"stream {n}"):
                count += 1
            elapsed = time.perf_counter() - start
        assert count == n, count
        return n / elapsed

    return asyncio.run(go())


def _fresh(directory: str, name: str) -> str:
    path = os.path.join(directory, name)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return path


def replay(directory: str) -> tuple[float, float]:
    """(seconds to load a REPLAY_N-update session over stdio, seconds for `history()`)."""
    path = _fresh(directory, "replay.db")
    stream(path, n=REPLAY_N)  # the agent keeps the prompt and REPLAY_N chunks
    env = dict(os.environ, ACP_BENCH_STORE=path)
    received = 0

    def count(_: object) -> None:
        nonlocal received
        received += 1

    async def load() -> float:
        async with AsyncClient.spawn(OUR_AGENT, env=env, on_update=count) as client:
            start = time.perf_counter()
            await client.load_session(session_id="bench-1", cwd="/tmp")
            return time.perf_counter() - start

    elapsed = asyncio.run(load())
    assert received == REPLAY_N + 1, received  # the prompt and every chunk

    async def fold() -> float:
        from acp_sdk.agent import SqliteSessionStore
        from acp_sdk.agent._keeper import session_history

        store = SqliteSessionStore(path)
        try:
            start = time.perf_counter()
            state = await session_history(store, "bench-1")
            took = time.perf_counter() - start
        finally:
            await store.aclose()
        assert len(state.messages) == 2, len(state.messages)
        return took

    return elapsed, asyncio.run(fold())


def main() -> None:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as directory:
        pairs: dict[str, Callable[[], float]] = {
            "no store": lambda: stream(None),
            "MemorySessionStore": lambda: stream(":memory:"),
            "SqliteSessionStore": lambda: stream(_fresh(directory, "s.db")),
            "SqliteSessionStore(durable=True)": lambda: stream(
                _fresh(directory, "d.db"), durable=True
            ),
        }
        rates: dict[str, list[float]] = {key: [] for key in pairs}
        for _ in range(ROUNDS):  # interleaved: every variant, every round
            for key, run in pairs.items():
                rates[key].append(run())
        loads, folds = zip(*(replay(directory) for _ in range(ROUNDS)), strict=True)
    base = statistics.median(rates["no store"])
    print(f"streaming, AsyncClient <- acp_sdk agent (N={N}, median of {ROUNDS} rounds)")
    for key, values in rates.items():
        rate = statistics.median(values)
        cost = (1 / rate - 1 / base) * 1e6
        extra = "" if key == "no store" else f"  +{cost:5.1f} us per update"
        print(f"  {key:34} {rate:>9,.0f} updates/s{extra}")
    load, fold = statistics.median(loads), statistics.median(folds)
    print(f"replay of a {REPLAY_N:,}-update session (median of {ROUNDS})")
    print(f"  session/load over stdio   {load * 1000:7.0f} ms  ({REPLAY_N / load:,.0f} updates/s)")
    print(f"  ctx.history() in-process  {fold * 1000:7.0f} ms  ({REPLAY_N / fold:,.0f} updates/s)")
    cores = os.cpu_count()
    print(f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} on {cores} cores")


if __name__ == "__main__":
    main()
