"""An ACP agent whose sessions connect the client's MCP servers (run as a script).

Prompts: `tools` (each tool's server, as JSON), `failures` (the servers that did not
connect, as JSON), `call NAME {json arguments}` (the tool's text result).
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
    McpCapabilities,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    TextContent,
)


class McpAgent(Agent):
    mcp_capabilities = McpCapabilities(http=True)

    def __init__(self) -> None:
        self.mcp = McpSessions(capabilities=self.mcp_capabilities)

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        session_id = uuid.uuid4().hex
        await self.mcp.open(session_id, params.mcp_servers, cwd=params.cwd)
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        [block] = params.prompt
        assert isinstance(block, TextContent)
        command, _, rest = block.text.partition(" ")
        mcp = self.mcp[params.session_id]
        if command == "tools":
            answer = json.dumps({name: mcp.server_of(name).name for name in mcp.tools})
        elif command == "failures":
            answer = json.dumps({f.server.name: type(f.error).__name__ for f in mcp.failures})
        else:
            name, _, arguments = rest.partition(" ")
            result = await mcp.call_tool(name, json.loads(arguments or "{}"))
            answer = "".join(c.text for c in result.content if c.type == "text")
        await ctx.send_update(
            params.session_id, AgentMessageChunk(content=TextContent(text=answer))
        )
        return PromptResponse(stop_reason="end_turn")

    async def close_session(
        self, params: CloseSessionRequest, ctx: AgentContext
    ) -> CloseSessionResponse:
        await self.mcp.close(params.session_id)
        return CloseSessionResponse()


if __name__ == "__main__":
    run_agent(McpAgent())
