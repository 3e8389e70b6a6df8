"""Mistakes with the agent toolkit (`ctx.session(...)`): each marked line must be
reported by both checkers, with exactly the marked error code (mypy) and rule (pyright)."""

from __future__ import annotations

from acp_sdk import Agent, AgentContext
from acp_sdk.agent import diff
from acp_sdk.schema import PromptRequest, PromptResponse


class Careless(Agent):
    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        s = ctx.session(params.session_id)
        await s.say(42)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
        await s.plan([("Test", "done")])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]
        async with s.tool_call("Edit", kind="editing") as call:  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
            call.complete()  # type: ignore[unused-coroutine]  # pyright: ignore[reportUnusedCoroutine]
            await call.update(status="cancelled")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
            await call.update(locations=[("/a.py", "3")])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]
            diff("/a.py", old="x")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
        return PromptResponse(stop_reason="end_turn")
