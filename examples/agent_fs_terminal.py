"""An agent that works through the client: it reads and writes files and runs commands.

python -m acp_sdk prompt --fs --terminal "count" -- python examples/agent_fs_terminal.py
"""

from __future__ import annotations

import os
import uuid

from acp_sdk import Agent, AgentContext, CapabilityNotNegotiated, run_agent
from acp_sdk.schema import (
    AgentMessageChunk,
    Implementation,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    TextContent,
)


class Worker(Agent):
    agent_info = Implementation(name="example-fs-terminal-agent", version="1.0")

    def __init__(self) -> None:
        self.cwd = "/"

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        self.cwd = params.cwd
        return NewSessionResponse(session_id=f"work-{uuid.uuid4().hex}")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        sid = params.session_id
        notes = os.path.join(self.cwd, "notes.txt")
        try:
            await ctx.write_text_file(session_id=sid, path=notes, content="one\ntwo\nthree\n")
            first_two = await ctx.read_text_file(session_id=sid, path=notes, line=1, limit=2)
            terminal = await ctx.create_terminal(session_id=sid, command="wc", args=["-l", notes])
            await ctx.wait_for_terminal_exit(session_id=sid, terminal_id=terminal.terminal_id)
            output = await ctx.terminal_output(session_id=sid, terminal_id=terminal.terminal_id)
            await ctx.release_terminal(session_id=sid, terminal_id=terminal.terminal_id)
        except CapabilityNotNegotiated as missing:
            text = f"I need the client to offer {missing.capability}."
        else:
            text = f"First lines: {first_two.content.split()}; wc says: {output.output.strip()}"
        await ctx.send_update(sid, AgentMessageChunk(content=TextContent(text=text)))
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    run_agent(Worker())
