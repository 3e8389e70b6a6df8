"""Misbehaving agents for the facade tests: `python -m tests.client.agents.special KIND`.

- `die`: streams one update, then the process exits mid-turn.
- `noisy`: writes 8 MB to stderr during the prompt, then answers normally.
- `print`: calls print() (which must land on stderr) before answering.
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


class Special(Agent):
    def __init__(self, kind: str) -> None:
        self.kind = kind

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id="s1")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        await ctx.send_update(
            params.session_id, AgentMessageChunk(content=TextContent(text="first"))
        )
        if self.kind == "die":
            os._exit(3)
        if self.kind == "noisy":
            line = b"x" * 1023 + b"\n"
            for _ in range(8 * 1024):
                os.write(2, line)
        if self.kind == "print":
            print("this must not reach the client's protocol stream")
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    run_agent(Special(sys.argv[1]))
