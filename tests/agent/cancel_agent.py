"""An agent on acp_sdk's runtime for the cancellation tests; its prompt text says what
the turn does: `quick` returns `end_turn` at once (never awaiting), `wait` streams its
text back as one update and then waits until cancelled. Each `session/new` makes a fresh session."""

from __future__ import annotations

import asyncio
import itertools

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.schema import (
    AgentMessageChunk,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    TextContent,
)


class CancelAgent(Agent):
    def __init__(self) -> None:
        self._ids = itertools.count(1)

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"s{next(self._ids)}")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        [block] = params.prompt
        assert isinstance(block, TextContent)
        if block.text == "wait":
            await ctx.send_update(params.session_id, AgentMessageChunk(content=block))
            await asyncio.Event().wait()  # until cancelled
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    run_agent(CancelAgent())
