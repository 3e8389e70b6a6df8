"""An agent that proposes an edit as a tool call with a diff, and asks permission first.

python -m acp_sdk prompt --yes "fix it" -- python examples/agent_tool_permission.py
"""

from __future__ import annotations

import uuid

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.schema import (
    AgentMessageChunk,
    Diff,
    Implementation,
    NewSessionRequest,
    NewSessionResponse,
    PermissionOption,
    PromptRequest,
    PromptResponse,
    SelectedPermissionOutcome,
    TextContent,
    ToolCall,
    ToolCallProgress,
    ToolCallUpdate,
)


class Editor(Agent):
    agent_info = Implementation(name="example-tool-permission-agent", version="1.0")

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"edit-{uuid.uuid4().hex}")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        sid = params.session_id
        await ctx.send_update(
            sid, ToolCall(tool_call_id="t1", title="Rename a variable", kind="edit")
        )
        answer = await ctx.request_permission(
            session_id=sid,
            tool_call=ToolCallUpdate(tool_call_id="t1", title="Rename a variable"),
            options=[
                PermissionOption(option_id="yes", name="Apply", kind="allow_once"),
                PermissionOption(option_id="no", name="Skip", kind="reject_once"),
            ],
        )
        if not isinstance(answer.outcome, SelectedPermissionOutcome):
            return PromptResponse(stop_reason="cancelled")
        if answer.outcome.option_id != "yes":
            await ctx.send_update(sid, ToolCallProgress(tool_call_id="t1", status="failed"))
            return PromptResponse(stop_reason="end_turn")
        diff = Diff(path="/project/app.py", old_text="x = compute()", new_text="total = compute()")
        await ctx.send_update(
            sid, ToolCallProgress(tool_call_id="t1", status="completed", content=[diff])
        )
        await ctx.send_update(
            sid, AgentMessageChunk(content=TextContent(text="Renamed x to total."))
        )
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    run_agent(Editor())
