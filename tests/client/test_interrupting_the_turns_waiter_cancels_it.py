"""Ctrl-C during `turn.wait()` and a cancelled task awaiting a turn cancel the turn also
when they land in `on_update` (not only while waiting for the next update): the turn
then ends `cancelled`. Before, the interruption left through the callback and the turn
ran on with nobody waiting (the session refusing new prompts until the agent finished).
The agent is `turn_agent.py`."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from acp_sdk import AsyncClient, Client

pytestmark = pytest.mark.timeout(60)

AGENT = [sys.executable, str(Path(__file__).with_name("turn_agent.py"))]
LONG = "slow 200 0.05"  # ten seconds of streaming unless cancelled
PROMPTLY = 8.0


def test_ctrl_c_in_on_update_during_wait_cancels_the_turn() -> None:
    seen: list[Any] = []

    def on_update(update: Any) -> None:
        seen.append(update)
        if len(seen) == 1:
            raise KeyboardInterrupt  # the user pressed Ctrl-C while this ran

    with Client.spawn(AGENT) as client:
        session = client.new_session(cwd="/tmp")
        try:
            response = session.prompt(LONG, on_update=on_update).wait()
        except KeyboardInterrupt:  # (not let through: it would stop the whole test run)
            pytest.fail("the first Ctrl-C left wait() instead of cancelling the turn")
        assert response.stop_reason == "cancelled"
        assert len(seen) < 200
        again = session.prompt("echo again").wait()  # the session is free again
        assert again.stop_reason == "end_turn"


def test_a_second_ctrl_c_in_on_update_stops_waiting() -> None:
    def on_update(update: Any) -> None:
        raise KeyboardInterrupt

    with Client.spawn(AGENT) as client:
        session = client.new_session(cwd="/tmp")
        turn = session.prompt("stream 5", on_update=on_update)
        deadline = time.monotonic() + PROMPTLY
        while not turn.done:  # all five wait for wait(): on_update runs for each
            assert time.monotonic() < deadline, "the turn did not end"
            time.sleep(0.01)
        with pytest.raises(KeyboardInterrupt):
            turn.wait()


def test_cancelling_the_task_awaiting_a_turn_in_on_update_cancels_the_turn() -> None:
    async def go() -> str:
        async with AsyncClient.spawn(AGENT) as client:
            session = await client.new_session(cwd="/tmp")
            first = asyncio.Event()

            async def on_update(update: Any) -> None:
                if not first.is_set():
                    first.set()
                    await asyncio.sleep(30)  # a slow renderer: the task is cancelled here

            turn = session.prompt(LONG, on_update=on_update)
            task = asyncio.get_running_loop().create_task(_await(turn))
            await asyncio.wait_for(first.wait(), PROMPTLY)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            response = await asyncio.wait_for(turn, PROMPTLY)
            return str(response.stop_reason)

    assert asyncio.run(go()) == "cancelled"


async def _await(turn: Any) -> Any:
    return await turn
