from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.schema import (
    AgentMessageChunk,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
)


class Echo(Agent):
    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id="s1")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        for block in params.prompt:
            await ctx.send_update(params.session_id, AgentMessageChunk(content=block))
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    run_agent(Echo())
