"""Python 3.10 has no `Task.cancelling()`, so the asyncio driver runs user code in a
child task to tell our cancellation from one the code lets escape. CI runs 3.11+, so
these tests switch that path on by hand and run the behaviours that depend on it on
the asyncio facade: a callback raising CancelledError does not stop later calls, a
callback may call the client, and a cancelled turn's tool call block finishes first."""

from __future__ import annotations

import asyncio

import pytest

from acp_sdk._driver import aio

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def without_task_cancelling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aio, "TELLS_CANCELLATIONS_APART", False)


def test_user_code_raising_cancelled_error_is_a_failure_of_that_code() -> None:
    async def user_code() -> None:
        raise asyncio.CancelledError

    async def go() -> None:
        with pytest.raises(RuntimeError, match="user code raised CancelledError"):
            await aio._await_user(user_code())

    asyncio.run(go())


def test_our_cancellation_waits_for_the_user_code_to_clean_up() -> None:
    cleaned: list[str] = []

    async def user_code() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0.01)  # an await during clean-up still runs
            cleaned.append("done")

    async def go() -> None:
        task = asyncio.ensure_future(aio._await_user(user_code()))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert cleaned == ["done"]

    asyncio.run(go())


def test_a_value_comes_back() -> None:
    async def user_code() -> int:
        await asyncio.sleep(0)
        return 7

    assert asyncio.run(aio._await_user(user_code())) == 7


# The behaviours end to end, with the 3.10 path switched on in this process (the client's
# callbacks, and the in-process agent of `way`): the same tests the suite runs, their
# fixtures imported with them; the blocking facade's variants are unaffected.
from tests.agent.test_session_handle import (  # noqa: E402
    test_a_cancelled_turn_fails_its_open_tool_call_before_answering as test_cancelled_block,
)
from tests.agent.test_session_handle import way  # noqa: E402, F401
from tests.client.test_backpressure_callbacks_and_dying_peers import (  # noqa: E402
    harness,  # noqa: F401
)
from tests.client.test_backpressure_callbacks_and_dying_peers import (  # noqa: E402
    test_a_callback_raising_a_base_exception_does_not_stop_later_calls as test_base_exception,
)
from tests.client.test_backpressure_callbacks_and_dying_peers import (  # noqa: E402
    test_an_update_callback_may_call_the_client_under_backpressure as test_callback_calls,
)

__all__ = ["test_base_exception", "test_callback_calls", "test_cancelled_block"]
