"""An echo agent built on the official `agent-client-protocol` package (interop peer).

Not type-checked: the incumbent's `Agent` declares every method abstract, so a minimal
agent cannot pass `mypy --strict` without stubbing all of them (our reason to exist).
"""

# mypy: ignore-errors

from __future__ import annotations

import asyncio
from typing import Any

from acp import (
    Agent,
    AuthenticateResponse,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    text_block,
    update_agent_message,
)


class EchoAgent(Agent):
    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        return InitializeResponse(protocol_version=protocol_version)

    async def new_session(self, cwd: str, **kwargs: Any) -> Any:
        return NewSessionResponse(session_id="incumbent-1")

    async def authenticate(self, method_id: str, **kwargs: Any) -> Any:
        return AuthenticateResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        text = getattr(prompt[0], "text", "") if prompt else ""
        if text.startswith("stream "):  # the benchmark's scenario: N chunks
            for index in range(int(text.split()[1])):
                update = update_agent_message(text_block(f"chunk {index} "))
                await self._conn.session_update(session_id=session_id, update=update)
            return PromptResponse(stop_reason="end_turn")
        for block in prompt:
            update = update_agent_message(text_block(getattr(block, "text", "")))
            await self._conn.session_update(session_id=session_id, update=update)
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(run_agent(EchoAgent()))
