"""A 10,000-update burst from the agent runtime arrives complete and in order on both
facades over real stdio, interleaved with calls; each facade's consumer takes updates
in batches (one lock round trip per batch), and nothing is lost or reordered."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path

import pytest

from acp_sdk import AsyncClient, Client
from acp_sdk._driver.threads import _Condition
from acp_sdk.schema import AgentMessageChunk, SessionUpdate, TextContent

pytestmark = pytest.mark.timeout(60)
AGENT = [sys.executable, str(Path(__file__).with_name("stream_agent.py"))]
COUNT = 10_000
EXPECTED = [f"chunk {i} " for i in range(COUNT)]


def texts(updates: list[SessionUpdate]) -> list[str]:
    out = []
    for update in updates:
        assert isinstance(update, AgentMessageChunk)
        assert isinstance(update.content, TextContent)
        out.append(update.content.text)
    return out


def run_sync(turns: int) -> list[list[str]]:
    results = []
    with Client.spawn(AGENT) as client:
        session = client.new_session(cwd="/tmp")
        for _ in range(turns):
            turn = session.prompt(f"stream {COUNT}")
            results.append(texts(list(turn)))
            assert turn.stop_reason == "end_turn"
            client.authenticate(method_id="login")  # the connection still answers
    return results


def run_async(turns: int) -> list[list[str]]:
    async def go() -> list[list[str]]:
        results = []
        async with AsyncClient.spawn(AGENT) as client:
            session = await client.new_session(cwd="/tmp")
            for _ in range(turns):
                turn = session.prompt(f"stream {COUNT}")
                results.append(texts([update async for update in turn]))
                assert turn.stop_reason == "end_turn"
                await client.authenticate(method_id="login")
        return results

    return asyncio.run(go())


@pytest.mark.parametrize("run", [run_sync, run_async], ids=["Client", "AsyncClient"])
def test_a_burst_of_ten_thousand_updates_is_lossless_and_ordered(run: object) -> None:
    assert callable(run)
    for received in run(2):
        assert received == EXPECTED


def test_a_condition_wakes_every_waiter_and_later_ones_too() -> None:
    """`_Condition.notify` skips `notify_all` until someone waits again: waiters that
    started before a notify are all woken, and a waiter that starts after it is
    woken by the next one (never left sleeping)."""
    lock = threading.Lock()
    signal = _Condition(lock)
    woken: list[str] = []

    def waiter(name: str) -> None:
        with lock:
            signal.wait(20)  # a timeout would be a failure: the test joins within 10 s
            woken.append(name)

    def notify_when_waiting(count: int) -> None:
        while True:  # until `count` threads are inside wait() (which released the lock)
            with lock:
                if signal.waiting == count:
                    signal.notify()
                    signal.notify()  # finds nobody new: a no-op
                    return
            time.sleep(0.001)

    threads = [threading.Thread(target=waiter, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    notify_when_waiting(2)
    for thread in threads:
        thread.join(10)
    assert sorted(woken) == ["a", "b"]
    late = threading.Thread(target=waiter, args=("c",))
    late.start()
    notify_when_waiting(1)
    late.join(10)
    assert woken == ["a", "b", "c"] or woken == ["b", "a", "c"]
