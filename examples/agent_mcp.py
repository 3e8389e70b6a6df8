"""An agent that connects the MCP servers the client passes in session/new, and calls
their tools as ACP tool calls.

A prompt `/tools` lists the tools (and the servers that did not connect); a prompt
`NAME {"json": "arguments"}` calls tool NAME and streams it as a tool call. (A real agent
hands `mcp.tools` to its model and calls what the model picks.)

python -m acp_sdk chat -- python examples/agent_mcp.py   # with a client that sends MCP servers
"""

from __future__ import annotations

import json
import uuid

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.mcp import McpSessions
from acp_sdk.schema import (
    AgentMessageChunk,
    CloseSessionRequest,
    CloseSessionResponse,
    Content,
    McpCapabilities,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    TextContent,
    ToolCall,
    ToolCallProgress,
)


class McpAgent(Agent):
    mcp_capabilities = McpCapabilities(http=True, sse=True)  # stdio is always supported

    def __init__(self) -> None:
        self.mcp = McpSessions(capabilities=self.mcp_capabilities)

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        session_id = uuid.uuid4().hex
        await self.mcp.open(session_id, params.mcp_servers, cwd=params.cwd)
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        sid, mcp = params.session_id, self.mcp[params.session_id]
        text = "".join(b.text for b in params.prompt if isinstance(b, TextContent)).strip()
        if text == "/tools":
            lines = [f"{name} ({mcp.server_of(name).name})" for name in mcp.tools]
            lines += [f"not connected: {f.server.name} ({f.error!r})" for f in mcp.failures]
            await say(ctx, sid, "\n".join(lines))
            return PromptResponse(stop_reason="end_turn")
        name, _, arguments = text.partition(" ")
        call_id = uuid.uuid4().hex
        title = f"{name} ({mcp.server_of(name).name})" if name in mcp.tools else name
        await ctx.send_update(sid, ToolCall(tool_call_id=call_id, title=title, kind="other"))
        try:
            result = await mcp.call_tool(name, json.loads(arguments or "{}"))
        except Exception as error:  # unknown tool, bad JSON, the server went away
            answer, failed = repr(error), True
        else:
            answer = "".join(c.text for c in result.content if c.type == "text")
            failed = result.is_error
        output = [Content(content=TextContent(text=answer))]
        await ctx.send_update(
            sid,
            ToolCallProgress(
                tool_call_id=call_id, status="failed" if failed else "completed", content=output
            ),
        )
        await say(ctx, sid, answer)
        return PromptResponse(stop_reason="end_turn")

    async def close_session(
        self, params: CloseSessionRequest, ctx: AgentContext
    ) -> CloseSessionResponse:
        await self.mcp.close(params.session_id)  # stops the session's servers
        return CloseSessionResponse()


async def say(ctx: AgentContext, session_id: str, text: str) -> None:
    await ctx.send_update(session_id, AgentMessageChunk(content=TextContent(text=text)))


if __name__ == "__main__":
    run_agent(McpAgent())
