"""`idle_timeout` bounds the agent's silence, never the client's own: while a request the
agent made in the turn (a permission question waiting for a person) is being handled,
or while the client itself is not reading (another turn nobody iterates fills
`max_buffered_updates`), the turn is not idle. Both facades, over stdio, against
`turn_agent.py`."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_sdk.handlers import AskPermission
from tests.client.facades import AsyncFacade, Facade, SyncFacade, guarded

pytestmark = pytest.mark.timeout(60)

AGENT = [sys.executable, str(Path(__file__).with_name("turn_agent.py"))]
STEP = 20.0
MakeDriver = Callable[..., Facade]


@pytest.fixture(params=["sync", "async"])
def make(request: pytest.FixtureRequest) -> Iterator[MakeDriver]:
    opened: list[Facade] = []
    cls = SyncFacade if request.param == "sync" else AsyncFacade

    def factory(**options: Any) -> Facade:
        driver = cls(AGENT, **options)
        guarded(driver.__enter__, STEP, "open")
        opened.append(driver)
        return driver

    yield factory
    for driver in opened:
        guarded(driver.__exit__, STEP, "close")


def drain(driver: Facade, turn: Any) -> list[Any]:
    updates, error = guarded(lambda: driver.drain(turn), STEP, "iterating the turn")
    if error is not None:
        raise error
    return updates


def test_a_permission_question_a_person_answers_slowly_is_not_idleness(
    make: MakeDriver,
) -> None:
    """The handler takes several idle timeouts to answer; the turn is not cancelled."""
    asked = threading.Event()

    def person(_request: Any) -> str:
        asked.set()
        time.sleep(2.0)  # a person thinking: 4 idle timeouts
        return "yes"

    driver = make(handlers=AskPermission(person))
    session = driver.new_session()
    turn = driver.start(session, "ask", idle_timeout=0.5)
    drain(driver, turn)
    assert asked.is_set()
    assert turn.timed_out is None
    assert turn.stop_reason == "end_turn"
    assert turn.text == "yes"


def test_a_turn_held_back_by_another_turn_nobody_iterates_is_not_idle(
    make: MakeDriver,
) -> None:
    """Session A's un-iterated turn stops the client's reading; session B's agent keeps
    streaming into the pipe meanwhile, so B's silence is the client's, not the agent's."""
    driver = make(max_buffered_updates=4)
    first, second = driver.new_session(), driver.new_session()
    held = driver.start(first, "stream 3000")  # far more than one read: reading stops
    time.sleep(0.3)
    turn = driver.start(second, "slow 3 0.05", idle_timeout=0.5)
    time.sleep(2.0)  # 4 idle timeouts with the client not reading
    assert not turn.done
    assert len(drain(driver, held)) == 3000
    assert len(drain(driver, turn)) == 3
    assert turn.timed_out is None
    assert turn.stop_reason == "end_turn"
