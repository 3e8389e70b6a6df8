"""A `tool_call` block always finishes, also when the turn's cancellation interrupts one
of its own sends (the store lagging, the outbox full):

- with a session store, an update whose send was cancelled while it waited for room in
  the write-ahead outbox is not sent, as without a store (a cancelled send never reaches
  the queue). Before, it was queued first and sent anyway, so a cancelled announcement
  reached the client and the call never finished (`__aexit__` does not run for an
  `__aenter__` that raised);
- a final status whose send was cancelled is sent again as `failed`. Before, the call
  was left open."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from acp_sdk import Agent, AgentContext
from acp_sdk.agent import MemorySessionStore
from acp_sdk.agent._keeper import WINDOW
from acp_sdk.schema import CancelNotification, PromptRequest, PromptResponse, ToolCall
from tests.agent.test_session_store_inprocess import connected, say

pytestmark = pytest.mark.timeout(30)


class LaggingStore(MemorySessionStore):
    """A store whose appends wait while `gate` is closed (a slow disk)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.gate.set()

    async def append(self, session_id: str, updates: Sequence[Any], at: str) -> None:
        await self.gate.wait()
        await super().append(session_id, updates, at)


class FillsTheOutbox(Agent):
    """Streams until the outbox is full behind a lagging store, then opens a tool call:
    its announcement is the send that waits for room when the turn is cancelled."""

    def __init__(self, store: LaggingStore, before: int) -> None:
        self.store = store
        self.before = before
        self.waiting = asyncio.Event()

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        session = ctx.session(params.session_id)
        self.store.gate.clear()
        for index in range(self.before):  # the flusher takes the first WINDOW
            await session.send(say(f"{index} "))
        self.waiting.set()
        async with session.tool_call("Never announced", kind="read"):
            pass
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: CancelNotification, ctx: AgentContext) -> None:
        self.store.gate.set()


@pytest.mark.parametrize(
    "before",
    [2 * WINDOW, 2 * WINDOW - 1],
    ids=["the-announcement-waits", "the-final-status-waits"],
)
def test_a_tool_call_whose_turn_is_cancelled_while_the_store_lags_is_not_left_open(
    before: int,
) -> None:
    """Whichever of its sends the cancellation interrupts, the client never sees a tool
    call that does not finish."""

    async def go() -> tuple[list[Any], str]:
        store = LaggingStore()
        agent = FillsTheOutbox(store, before)
        async with connected(agent, store) as client:
            session = await client.new_session(cwd="/w")
            turn = session.prompt("go")
            updates: list[Any] = []

            async def consume() -> None:
                async for update in turn:
                    updates.append(update)

            consumer = asyncio.get_running_loop().create_task(consume())
            await asyncio.wait_for(agent.waiting.wait(), 10)
            await asyncio.sleep(0.1)  # the announcement waits for room in the outbox
            await session.cancel()
            await asyncio.wait_for(consumer, 10)
            return updates, str(turn.stop_reason)

    updates, stop = asyncio.run(go())
    assert stop == "cancelled"
    announced = [u for u in updates if isinstance(u, ToolCall)]
    finished = {
        u.tool_call_id for u in updates if getattr(u, "status", None) in ("completed", "failed")
    }
    assert [u.tool_call_id for u in announced if u.tool_call_id not in finished] == []
