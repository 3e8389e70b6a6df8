"""An agent on acp_sdk's runtime for the streaming tests: `stream N` sends N updates
(`chunk {i} `) in a row, never waiting, then ends the turn; `authenticate` is a no-op."""

from __future__ import annotations

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.schema import (
    AgentMessageChunk,
    AuthenticateRequest,
    AuthenticateResponse,
    AuthMethodAgent,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    TextContent,
)


class StreamAgent(Agent):
    auth_methods = (AuthMethodAgent(id="login", name="Login"),)

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id="stream-1")

    async def authenticate(
        self, params: AuthenticateRequest, ctx: AgentContext
    ) -> AuthenticateResponse:
        return AuthenticateResponse()

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        first = params.prompt[0]
        text = first.text if isinstance(first, TextContent) else ""
        for index in range(int(text.split()[1])):
            chunk = AgentMessageChunk(content=TextContent(text=f"chunk {index} "))
            await ctx.send_update(params.session_id, chunk)
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    run_agent(StreamAgent())
