"""The client under test, run in a child process so the tests can read its peak RSS and
its stderr (warnings, tracebacks) black-box. Prints one JSON object on its last line.

    python probe_client.py slow-consumer sync|async COUNT SIZE [MAX_BUFFERED_UPDATES]
    python probe_client.py stderr-flood sync|async MIB
    python probe_client.py SCENARIO          (see SCENARIOS: for `-W error` runs)
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import resource
import shlex
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_sdk import AsyncClient, Client, ConnectionClosed

RAW_AGENT = [sys.executable, str(Path(__file__).with_name("raw_agent.py"))]
SCENARIO = [sys.executable, "-m", "acp_sdk", "agent"]
WRAPPED = ["sh", "-c", f"{shlex.quote(sys.executable)} -m acp_sdk agent"]


def peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class Order:
    """Counts updates and checks their "<index:07d> " prefixes without keeping them."""

    def __init__(self) -> None:
        self.count = 0
        self.in_order = True

    def see(self, update: Any) -> None:
        text = getattr(getattr(update, "content", None), "text", "")
        if not text.startswith(f"{self.count:07d} "):
            self.in_order = False
        self.count += 1


# ------------------------------------------------------------------ slow consumer


def wait_for_the_producer(progress: str) -> None:
    """Sleep (not consuming) until the agent has written its whole stream, or has been
    held back by the client (its progress stopped moving for 1.5 s): then whatever the
    client buffers is as large as it will get, however fast this machine is."""
    last, still_since = "", time.monotonic()
    deadline = time.monotonic() + 60
    time.sleep(1.0)
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            now = Path(progress).read_text()
            if now == "done":
                return
            if now != last:
                last, still_since = now, time.monotonic()
        if time.monotonic() - still_since > 1.5:
            return
        time.sleep(0.1)


def slow_consumer(facade: str, count: int, size: int, max_buffered: int | None) -> dict[str, Any]:
    progress = f"/tmp/acp-probe-{os.getpid()}.progress"
    argv = [*RAW_AGENT, "--stream", str(count), "--size", str(size), "--progress", progress]
    options: dict[str, Any] = {"close_timeout": 0.5, "terminate_timeout": 0.5}
    if max_buffered is not None:
        options["max_buffered_updates"] = max_buffered
    order = Order()
    result: dict[str, Any] = {}
    if facade == "sync":
        with Client.spawn(argv, **options) as client:
            session = client.new_session(cwd="/tmp")
            result["baseline_kb"] = peak_kb()
            turn = session.prompt("go")
            updates = iter(turn)
            order.see(next(updates))
            wait_for_the_producer(progress)  # the agent keeps streaming meanwhile
            for update in updates:
                order.see(update)
            result["stop"] = turn.stop_reason
    else:

        async def go() -> None:
            async with AsyncClient.spawn(argv, **options) as client:
                session = await client.new_session(cwd="/tmp")
                result["baseline_kb"] = peak_kb()
                turn = session.prompt("go")
                updates = turn.__aiter__()
                order.see(await updates.__anext__())
                await asyncio.to_thread(wait_for_the_producer, progress)
                async for update in updates:
                    order.see(update)
                result["stop"] = turn.stop_reason

        asyncio.run(go())
    result.update(peak_kb=peak_kb(), count=order.count, in_order=order.in_order)
    with contextlib.suppress(OSError):
        os.unlink(progress)
    return result


# ------------------------------------------------------------------ stderr flood


def stderr_flood(facade: str, mib: int) -> dict[str, Any]:
    stats: dict[str, Any] = {"x_lines": 0, "max_len": 0, "unmarked_long": 0, "after": False}

    def sink(line: str) -> None:  # keeps statistics only, never the line
        stats["max_len"] = max(stats["max_len"], len(line))
        if line.startswith("xxxx"):
            stats["x_lines"] += 1
            if len(line) > 4096 and not line.strip("x"):
                stats["unmarked_long"] += 1
        if "after-the-flood" in line:
            stats["after"] = True

    argv = [*RAW_AGENT, "--stderr-line", str(mib)]
    options: dict[str, Any] = {"stderr": sink, "close_timeout": 0.5, "terminate_timeout": 0.5}
    stats["baseline_kb"] = peak_kb()

    def read_tail(client: Any) -> None:
        deadline = time.monotonic() + 10
        while not stats["after"] and time.monotonic() < deadline:
            time.sleep(0.05)
        try:
            tail = client.stderr_tail
        except AttributeError as error:
            stats["tail_error"] = repr(error)
            return
        stats["tail_type"] = type(tail).__name__
        stats["tail_len"] = len(tail)
        stats["tail_has_after"] = "after-the-flood" in tail

    if facade == "sync":
        with Client.spawn(argv, **options) as client:
            session = client.new_session(cwd="/tmp")
            stats["stop"] = session.prompt("go").wait().stop_reason
            read_tail(client)
    else:

        async def go() -> None:
            async with AsyncClient.spawn(argv, **options) as client:
                session = await client.new_session(cwd="/tmp")
                stats["stop"] = (await session.prompt("go")).stop_reason
                await asyncio.get_running_loop().run_in_executor(None, read_tail, client)

        asyncio.run(go())
    stats["peak_kb"] = peak_kb()
    return stats


# ------------------------------------------------------------------ warning scenarios


def async_cancel_turn() -> dict[str, Any]:
    async def go() -> None:
        async with AsyncClient.spawn(SCENARIO) as client:
            session = await client.new_session(cwd="/tmp")
            turn = session.prompt("wait")

            async def consume() -> None:
                async for _ in turn:
                    pass

            task = asyncio.get_running_loop().create_task(consume())
            await asyncio.sleep(0.3)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    asyncio.run(go())
    return {}


def async_close_mid_turn() -> dict[str, Any]:
    outcome: dict[str, Any] = {}

    async def go() -> None:
        client = AsyncClient.spawn(SCENARIO, close_timeout=0.5, terminate_timeout=0.5)
        async with client:
            session = await client.new_session(cwd="/tmp")
            turn = session.prompt("wait")

            async def consume() -> None:
                try:
                    async for _ in turn:
                        pass
                except ConnectionClosed:
                    outcome["closed"] = True

            task = asyncio.get_running_loop().create_task(consume())
            await asyncio.sleep(0.3)
        await asyncio.wait_for(task, 10)

    asyncio.run(go())
    return outcome


def async_wrapped() -> dict[str, Any]:
    async def go() -> None:
        async with AsyncClient.spawn(WRAPPED, close_timeout=0.5, terminate_timeout=0.5) as client:
            await client.new_session(cwd="/tmp")

    asyncio.run(go())
    return {}


def sync_wrapped() -> dict[str, Any]:
    with Client.spawn(WRAPPED, close_timeout=0.5, terminate_timeout=0.5) as client:
        client.new_session(cwd="/tmp")
    return {}


def sync_close_mid_turn() -> dict[str, Any]:
    outcome: dict[str, Any] = {}
    client = Client.spawn(SCENARIO, close_timeout=0.5, terminate_timeout=0.5)
    with client:
        session = client.new_session(cwd="/tmp")
        turn = session.prompt("wait")

        def consume() -> None:
            try:
                for _ in turn:
                    pass
            except ConnectionClosed:
                outcome["closed"] = True

        thread = threading.Thread(target=consume)
        thread.start()
        time.sleep(0.3)
    thread.join(10)
    outcome["joined"] = not thread.is_alive()
    return outcome


SCENARIOS: dict[str, Callable[[], dict[str, Any]]] = {
    "async-cancel-turn": async_cancel_turn,
    "async-close-mid-turn": async_close_mid_turn,
    "async-wrapped": async_wrapped,
    "sync-wrapped": sync_wrapped,
    "sync-close-mid-turn": sync_close_mid_turn,
}


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "slow-consumer":
        extra = int(argv[4]) if len(argv) > 4 else None
        result = slow_consumer(argv[1], int(argv[2]), int(argv[3]), extra)
    elif mode == "stderr-flood":
        result = stderr_flood(argv[1], int(argv[2]))
    else:
        result = SCENARIOS[mode]()
    gc.collect()  # surface ResourceWarnings of anything left unclosed, now
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
