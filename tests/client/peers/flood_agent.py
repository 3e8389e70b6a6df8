"""A minimal acp_sdk agent (the agent runtime under test, unlike the raw peers).

    python flood_agent.py [--pidfile PATH]

`session/new` answers "s1"; a prompt streams ~1 KB `agent_message_chunk` updates as fast
as the runtime lets it, forever, until sending fails (the client went away or cancelled).
"""

from __future__ import annotations

import os
import sys

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.schema import (
    AgentMessageChunk,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    TextContent,
)

PADDING = "f" * 1000


class Flood(Agent):
    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id="s1")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        index = 0
        while True:
            chunk = AgentMessageChunk(content=TextContent(text=f"{index:09d} {PADDING}"))
            await ctx.send_update(params.session_id, chunk)
            index += 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--pidfile"]:
        with open(sys.argv[2], "w") as out:
            out.write(f"{os.getpid()} {os.getppid()}\n")
    run_agent(Flood())
