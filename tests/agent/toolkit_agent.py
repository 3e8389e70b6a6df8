"""An agent written only with the toolkit (`ctx.session(...)`), for the handle's tests.

Run as a script it serves over stdio; imported, the tests serve it in-process. It reacts
to the first word of the prompt:

| prompt | what it does |
| --- | --- |
| `say TEXT` / `think TEXT` | one message / thought chunk |
| `plan` | a plan from every short form and a `PlanEntry` |
| `complete` | a tool call whose block is left normally |
| `explicit` | a tool call updated, then completed by hand (nothing sent at exit) |
| `raise` | a tool call whose block raises `ValueError` (the prompt fails, -32603) |
| `ask KIND [all]` | a KIND tool call asking permission (`all`: with `reject_always`) |
| `mode ID` | a `current_mode_update` through `s.send` |
| `keyed KIND` | like `ask KIND`, under the permission key `files` |
| `hang` | a tool call, then waits until the turn is cancelled |
"""

from __future__ import annotations

import asyncio

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.agent import DEFAULT_PERMISSION_OPTIONS, diff, terminal
from acp_sdk.schema import (
    CloseSessionRequest,
    CloseSessionResponse,
    CurrentModeUpdate,
    NewSessionRequest,
    NewSessionResponse,
    PermissionOption,
    PlanEntry,
    PromptRequest,
    PromptResponse,
    TextContent,
    ToolKind,
)

KINDS: dict[str, ToolKind] = {"edit": "edit", "delete": "delete", "execute": "execute"}
ALL_OPTIONS = [
    *DEFAULT_PERMISSION_OPTIONS,
    PermissionOption(option_id="reject_always", name="Never", kind="reject_always"),
]


class ToolkitAgent(Agent):
    def __init__(self) -> None:
        self._sessions = 0

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        self._sessions += 1
        return NewSessionResponse(session_id=f"toolkit-{self._sessions}")

    async def close_session(
        self, params: CloseSessionRequest, ctx: AgentContext
    ) -> CloseSessionResponse:
        return CloseSessionResponse()  # the session may be prompted again (it asks again)

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        s = ctx.session(params.session_id)
        block = params.prompt[0]
        text = block.text if isinstance(block, TextContent) else ""
        command, _, rest = text.partition(" ")
        if command == "say":
            await s.say(rest)
        elif command == "think":
            await s.think(rest)
        elif command == "plan":
            await s.plan(
                [
                    "Read the code",
                    ("Write the fix", "in_progress"),
                    ("Run the tests", "completed", "high"),
                    PlanEntry(content="Ship it", priority="low", status="pending"),
                ]
            )
        elif command == "mode":
            await s.send(CurrentModeUpdate(current_mode_id=rest))
        elif command == "keyed":  # two kinds under one permission key
            async with s.tool_call(f"Do {rest}", kind=KINDS[rest], permission_key="files") as call:
                choice = await call.request_permission()
                await s.say(choice.kind if choice else "cancelled")
        elif command == "complete":
            async with s.tool_call("Read config", kind="read", locations=["/p/config.json"]):
                pass
        elif command == "explicit":
            async with s.tool_call("Edit", kind="edit", tool_call_id="mine") as call:
                await call.update(status="in_progress", content=["working", terminal("t-1")])
                await call.complete(diff("/p/a.py", old="x", new="y"), raw_output={"ok": True})
        elif command == "raise":
            async with s.tool_call("Explode", kind="execute"):
                raise ValueError("boom")
        elif command == "ask":
            kind, _, offer = rest.partition(" ")
            async with s.tool_call(f"Do {kind}", kind=KINDS[kind]) as call:
                choice = await call.request_permission(ALL_OPTIONS if offer == "all" else None)
                if choice is None:
                    return PromptResponse(stop_reason="cancelled")
                await s.say(choice.kind)
        elif command == "hang":
            async with s.tool_call("Wait forever", kind="other", status="in_progress"):
                await asyncio.Event().wait()
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    run_agent(ToolkitAgent())
