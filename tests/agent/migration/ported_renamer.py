"""docs/migrating.md: the same agent, written with acp_sdk's agent toolkit."""

import uuid

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.agent import diff
from acp_sdk.schema import NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse


class Renamer(Agent):
    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id=uuid.uuid4().hex)

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        s = ctx.session(params.session_id)
        await s.think("The user wants a rename.")
        await s.plan(["Find x", ("Rename x", "in_progress")])
        async with s.tool_call("Rename x", kind="edit", locations=["/project/app.py"]) as call:
            choice = await call.request_permission()  # allow always: remembered per session
            if choice is None:
                return PromptResponse(stop_reason="cancelled")
            if choice.kind.startswith("reject"):
                return PromptResponse(stop_reason="end_turn")
            await call.complete(diff("/project/app.py", old="x = 1", new="total = 1"))
        await s.say("Renamed x to total.")
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    run_agent(Renamer())
