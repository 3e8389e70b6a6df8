"""An agent that proposes an edit as a tool call with a diff, and asks permission first.

python -m acp_sdk prompt --yes "fix it" -- python examples/agent_tool_permission.py
"""

import uuid

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.agent import diff
from acp_sdk.schema import (
    Implementation,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
)


class Editor(Agent):
    agent_info = Implementation(name="example-tool-permission-agent", version="1.0")

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"edit-{uuid.uuid4().hex}")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        s = ctx.session(params.session_id)
        async with s.tool_call("Rename a variable", kind="edit") as call:
            choice = await call.request_permission()  # None: the turn was cancelled
            if choice is None:
                return PromptResponse(stop_reason="cancelled")  # the call ends `failed`
            if choice.kind.startswith("allow"):
                await call.complete(diff("/project/app.py", old="x = 1", new="total = 1"))
                await s.say("Renamed x to total.")
        return PromptResponse(stop_reason="end_turn")  # a rejected call ends `failed`


if __name__ == "__main__":
    run_agent(Editor())
