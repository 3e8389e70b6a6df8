"""Typical agent code on the toolkit (`ctx.session(...)`), and the agent's test: clean
under both checkers, with the types a reader expects."""

import asyncio
from typing import Literal

from typing_extensions import assert_type

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.agent import (
    DEFAULT_PERMISSION_OPTIONS,
    PlanItem,
    SessionHandle,
    ToolCallHandle,
    diff,
    terminal,
)
from acp_sdk.handlers import AllowOnce, LocalFileSystem, LocalTerminals
from acp_sdk.schema import (
    AvailableCommand,
    AvailableCommandsUpdate,
    Diff,
    NewSessionRequest,
    NewSessionResponse,
    PermissionOption,
    PlanEntry,
    PromptRequest,
    PromptResponse,
    Terminal,
    TextContent,
    ToolCallStatus,
)
from acp_sdk.testing import aconnect_in_process, connect_in_process


class Coder(Agent):
    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id="s1")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        s = ctx.session(params.session_id)
        assert_type(s, SessionHandle)
        await s.think("Planning.")
        await s.say(TextContent(text="Hello"))
        steps: list[PlanItem] = [
            "Read",
            ("Edit", "in_progress"),
            ("Test", "pending", "high"),
            PlanEntry(content="Ship", priority="low", status="pending"),
        ]
        await s.plan(steps)
        await s.send(
            AvailableCommandsUpdate(
                available_commands=[AvailableCommand(name="fix", description="Fix it")]
            )
        )
        created = await ctx.create_terminal(session_id=s.session_id, command="make")
        shown: Terminal = terminal(created.terminal_id)
        async with s.tool_call(
            "Build",
            kind="execute",
            status="in_progress",
            content=[shown],
            locations=["/p", ("/p/m", 1)],
        ) as call:
            assert_type(call, ToolCallHandle)
            choice = await call.request_permission(DEFAULT_PERMISSION_OPTIONS, key="make")
            assert_type(choice, PermissionOption | None)
            if choice is None:
                return PromptResponse(stop_reason="cancelled")
            kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"] = (
                choice.kind
            )
            if kind.startswith("reject"):
                await call.fail("Not allowed.")
            else:
                edit: Diff = diff("/p/a.py", old=None, new="x = 1")
                await call.update(title="Building", raw_output={"code": 0})
                await call.complete("Built.", edit, raw_output={"ok": True})
            status: ToolCallStatus | None = call.status
            done: bool = call.finished
            del status, done
        s.forget_permissions()
        return PromptResponse(stop_reason="end_turn")


def test_coder() -> None:
    handlers = [AllowOnce(), LocalFileSystem("/tmp"), LocalTerminals()]
    with connect_in_process(Coder(), handlers=handlers, track_state=True) as client:
        turn = client.new_session(cwd="/tmp").prompt("build")
        for _update in turn:
            pass
    assert turn.stop_reason == "end_turn"


async def atest_coder() -> None:
    async with aconnect_in_process(Coder(), handlers=[AllowOnce()]) as client:
        session = await client.new_session(cwd="/tmp")
        response = await session.prompt("build")
        assert response.stop_reason == "end_turn"


if __name__ == "__main__":
    asyncio.run(atest_coder())
    run_agent(Coder())
