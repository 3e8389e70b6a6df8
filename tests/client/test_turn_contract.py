"""The prompt-turn contract, on both facades over stdio, ws:// and http://.

A turn starts when `prompt()` returns; a cancel at any moment after it ends the turn
`cancelled`; a turn nobody iterates still runs and is iterable later; `timeout` and
`idle_timeout` end a turn through `session/cancel`; `turn.text` and `turn.tool_calls`
need no flag; `session.state` is the caller's view. The agent is `turn_agent.py`, a raw
agent that keeps the cancel rule whatever the timing (a cancel in the same read as its
prompt included).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_sdk import AsyncClient, LocalProtocolError, RequestTimeout
from acp_sdk.remote import asgi_app
from acp_sdk.schema import AgentMessageChunk, TextContent
from tests.client.facades import AsyncFacade, Facade, SyncFacade, guarded
from tests.remote.server import running

pytestmark = pytest.mark.timeout(60)

AGENT = [sys.executable, str(Path(__file__).with_name("turn_agent.py"))]
STEP = 15.0  # seconds any one step may take before the test fails as hung
PROMPTLY = 5.0  # a cancelled turn ends within this (the agent answers at once)
MakeDriver = Callable[..., Facade]


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    with running(asgi_app(command=AGENT)) as address:
        yield address


@pytest.fixture(params=["stdio", "ws", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["sync", "async"])
def make(request: pytest.FixtureRequest, transport: str) -> Iterator[MakeDriver]:
    opened: list[Facade] = []
    cls = SyncFacade if request.param == "sync" else AsyncFacade

    def factory(**options: Any) -> Facade:
        driver = cls(AGENT, **options)
        if transport != "stdio":
            remote = request.getfixturevalue("address")
            url = f"{transport}://{remote}/acp"
            driver.client = type(driver.client).connect_url(url, timeout=10, **options)
        guarded(driver.__enter__, STEP, "open")
        opened.append(driver)
        return driver

    yield factory
    for driver in opened:
        guarded(driver.__exit__, STEP, "close")


def cancel(driver: Facade, target: Any) -> None:
    """`target.cancel()` (a session or a turn) on the driver's facade."""
    if isinstance(driver, SyncFacade):
        target.cancel()
    else:
        driver.run(target.cancel)


def drain(driver: Facade, turn: Any, within: float = STEP) -> list[Any]:
    updates, error = guarded(lambda: driver.drain(turn), within, "iterating the turn")
    if error is not None:
        raise error
    return updates


def wait_done(turn: Any, within: float = PROMPTLY) -> None:
    """Wait, without iterating, until the agent ended the turn."""
    deadline = time.monotonic() + within
    while not turn.done:
        assert time.monotonic() < deadline, "the turn did not end"
        time.sleep(0.01)


def texts(updates: list[Any]) -> list[str]:
    return [
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    ]


# ---------------------------------------------------------------------- starting and cancelling


def test_cancel_before_the_first_iteration_ends_the_turn_cancelled(make: MakeDriver) -> None:
    driver = make()
    session = driver.new_session()
    turn = driver.start(session, "wait")
    cancel(driver, session)
    assert drain(driver, turn, PROMPTLY) == []
    assert turn.stop_reason == "cancelled"
    assert turn.timed_out is None


def test_cancel_before_the_agent_sees_the_prompt_ends_the_turn_cancelled(
    make: MakeDriver,
) -> None:
    """The cancel is queued right behind the prompt (same write, usually the same read
    on the agent's side): it still reaches the agent after the prompt."""
    driver = make()
    session = driver.new_session()
    if isinstance(driver, SyncFacade):
        turn = session.prompt("wait")
        turn.cancel()
    else:

        async def go() -> Any:
            turn: Any = session.prompt("wait")
            await turn.cancel()  # no await in between: nothing has left yet
            return turn

        turn = driver.run(go)
    drain(driver, turn, PROMPTLY)
    assert turn.stop_reason == "cancelled"


def test_cancel_while_nobody_iterates_ends_the_turn(make: MakeDriver) -> None:
    driver = make()
    session = driver.new_session()
    turn = driver.start(session, "wait")
    time.sleep(0.2)  # the agent has the prompt; nobody iterates
    cancel(driver, turn)
    wait_done(turn)  # ended without anyone iterating
    drain(driver, turn, PROMPTLY)
    assert turn.stop_reason == "cancelled"


def test_cancel_while_iterating_ends_the_turn(make: MakeDriver) -> None:
    driver = make()
    session = driver.new_session()
    _updates, response = guarded(
        lambda: driver.prompt_and_cancel(session, "wait", 0.2), STEP, "cancel while iterating"
    )
    assert response.stop_reason == "cancelled"


def test_a_turn_never_iterated_finishes_and_is_iterable_later(make: MakeDriver) -> None:
    driver = make()
    session = driver.new_session()
    turn = driver.start(session, "stream 50")
    wait_done(turn, STEP)  # it ran to its end with nobody iterating
    assert turn.received == 50
    assert texts(drain(driver, turn)) == [f"{i} " for i in range(50)]
    assert turn.stop_reason == "end_turn"
    assert drain(driver, turn) == []  # consumed once; ends the same way


def test_a_turn_nobody_iterates_holds_the_agent_back_and_loses_nothing(
    make: MakeDriver, transport: str
) -> None:
    """Past `max_buffered_updates` the client stops reading (over stdio the agent then
    blocks in the pipe); iterating later yields every update, in order."""
    driver = make(max_buffered_updates=16)
    session = driver.new_session()
    turn = driver.start(session, "stream 5000")
    time.sleep(0.5)
    if transport == "stdio":  # remote transports buffer more on the way (TCP, server)
        assert not turn.done
        assert turn.received < 5000
    assert texts(drain(driver, turn)) == [f"{i} " for i in range(5000)]
    assert turn.stop_reason == "end_turn"


def test_a_second_prompt_while_a_turn_runs_is_refused_and_says_what_to_do(
    make: MakeDriver,
) -> None:
    driver = make()
    session = driver.new_session()
    first = driver.start(session, "wait")
    with pytest.raises(LocalProtocolError, match=r"still running.*let it end first"):
        driver.start(session, "echo second")
    cancel(driver, first)
    drain(driver, first, PROMPTLY)
    second = driver.start(session, "echo second")
    assert texts(drain(driver, second)) == ["echo ", "second "]  # none of the first turn
    assert first.stop_reason == "cancelled"


# ---------------------------------------------------------------------- timeouts


def test_an_idle_timeout_ends_a_silent_turn_cancelled(make: MakeDriver) -> None:
    driver = make()
    session = driver.new_session()
    turn = driver.start(session, "wait", idle_timeout=0.3)
    drain(driver, turn)
    assert turn.stop_reason == "cancelled"
    assert turn.timed_out == "idle_timeout"


def test_an_idle_timeout_never_ends_a_slow_agent_that_keeps_streaming(make: MakeDriver) -> None:
    """Five updates 0.25 s apart take longer than the idle timeout, never a gap of it."""
    driver = make()
    session = driver.new_session()
    turn = driver.start(session, "slow 5 0.25", idle_timeout=1.0)
    assert len(drain(driver, turn)) == 5
    assert turn.stop_reason == "end_turn"
    assert turn.timed_out is None


def test_a_timeout_ends_a_silent_turn(make: MakeDriver) -> None:
    driver = make()
    session = driver.new_session()
    turn = driver.start(session, "wait", timeout=0.3)
    drain(driver, turn)
    assert turn.stop_reason == "cancelled"
    assert turn.timed_out == "timeout"


def test_a_timeout_ends_a_turn_that_keeps_streaming(make: MakeDriver) -> None:
    driver = make()
    session = driver.new_session()
    turn = driver.start(session, "slow 200 0.05", timeout=0.5, idle_timeout=5.0)
    updates = drain(driver, turn)
    assert 0 < len(updates) < 200
    assert turn.stop_reason == "cancelled"
    assert turn.timed_out == "timeout"


def test_a_timeout_the_agent_ignores_raises_after_the_grace(
    make: MakeDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp_sdk._driver import turn as turn_rules

    monkeypatch.setattr(turn_rules, "CANCEL_GRACE", 0.3)
    driver = make()
    session = driver.new_session()
    turn = driver.start(session, "deaf", idle_timeout=0.3)
    with pytest.raises(RequestTimeout, match=r"idle timeout 0\.3 s"):
        drain(driver, turn)
    assert turn.timed_out == "idle_timeout"


def test_a_timeout_fires_while_nobody_iterates(make: MakeDriver) -> None:
    driver = make()
    session = driver.new_session()
    turn = driver.start(session, "wait", timeout=0.3)
    wait_done(turn)  # the clock is the engine's, not the iterator's
    drain(driver, turn)
    assert turn.stop_reason == "cancelled"


# ---------------------------------------------------------------------- what a turn says


def test_turn_text_and_tool_calls_need_no_flag(make: MakeDriver) -> None:
    driver = make()
    session = driver.new_session()
    turn = driver.start(session, "hello there world")
    drain(driver, turn)
    assert turn.text == "hello there world "
    assert not turn.truncated
    tool = driver.start(session, "tool")
    drain(driver, tool)
    assert tool.text == "done"
    assert tool.tool_calls["t1"].status == "completed"
    assert tool.tool_calls["t1"].title == "Look"


def test_turn_text_stops_at_max_turn_text_and_says_so(make: MakeDriver) -> None:
    driver = make(max_turn_text=7)
    session = driver.new_session()
    turn = driver.start(session, "stream 10")
    assert len(drain(driver, turn)) == 10  # every update is still handed out
    assert turn.text == "0 1 2 3"
    assert turn.truncated


def test_session_state_holds_exactly_the_updates_handed_out(make: MakeDriver) -> None:
    driver = make(track_state=True)
    session = driver.new_session()
    turn = driver.start(session, "stream 20")
    wait_done(turn, STEP)  # all 20 arrived before the first is handed out
    assert session.state.text == ""
    seen: list[str] = []
    handed: list[str] = []

    def each(update: Any) -> None:
        handed.append(update.content.text)
        seen.append(session.state.text)

    if isinstance(driver, SyncFacade):
        for update in turn:
            each(update)
    else:

        async def go() -> None:
            async for update in turn:
                each(update)

        driver.run(go)
    assert seen == ["".join(handed[: i + 1]) for i in range(20)]


# ---------------------------------------------------------------------- AsyncClient only


def test_async_prompt_needs_a_running_loop() -> None:
    driver = AsyncFacade(AGENT)
    with driver:
        session = driver.new_session()
        with pytest.raises(RuntimeError, match="running event loop"):
            session.prompt("echo x")


def test_async_cancelled_consumer_then_prompt_again_behaves_as_documented(
    transport: str, request: pytest.FixtureRequest
) -> None:
    """Cancelling the task that iterates sends session/cancel; until the agent answers,
    a new prompt is refused; `await turn` returns the `cancelled` response; then the
    next prompt runs."""
    driver = AsyncFacade(AGENT)
    if transport != "stdio":
        url = f"{transport}://{request.getfixturevalue('address')}/acp"
        driver.client = AsyncClient.connect_url(url, timeout=10)

    async def go() -> tuple[str, str]:
        session = await driver.client.new_session(cwd="/tmp")
        turn = session.prompt("wait")

        async def consume() -> None:
            async for _ in turn:
                pass

        task = asyncio.get_running_loop().create_task(consume())
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        if not turn.done:
            with pytest.raises(LocalProtocolError, match="still running"):
                session.prompt("echo again")
        response = await asyncio.wait_for(turn, PROMPTLY)
        again = await asyncio.wait_for(session.prompt("echo again"), PROMPTLY)
        return str(response.stop_reason), str(again.stop_reason)

    with driver:
        assert driver.run(go) == ("cancelled", "end_turn")
