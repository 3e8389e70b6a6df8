"""The benchmark's agent on acp_sdk's runtime (`acp_sdk.Agent` + `run_agent`), over stdio.

A prompt whose first text block is `stream N` streams N `agent_message_chunk` updates
(text `chunk {i} `, one `ctx.send_update` each), then ends the turn; `authenticate` is a
no-op (the round-trip benchmark's request). With ACP_BENCH_PROFILE=PATH set, the
streaming loop runs under cProfile and the stats are dumped to PATH (bench/profile.py).
With ACP_BENCH_STORE=PATH set, it runs with a session store (`:memory:` for a
`MemorySessionStore`, else a `SqliteSessionStore` at PATH, `durable=True` when
ACP_BENCH_STORE_DURABLE is set; bench/store.py).
"""

from __future__ import annotations

import cProfile
import os

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.agent import MemorySessionStore, SessionStore, SqliteSessionStore
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

PROFILE = os.environ.get("ACP_BENCH_PROFILE")
STORE = os.environ.get("ACP_BENCH_STORE")


class BenchAgent(Agent):
    auth_methods = (AuthMethodAgent(id="bench-login", name="Bench login"),)

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id="bench-1")

    async def authenticate(
        self, params: AuthenticateRequest, ctx: AgentContext
    ) -> AuthenticateResponse:
        return AuthenticateResponse()

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        first = params.prompt[0] if params.prompt else None
        text = first.text if isinstance(first, TextContent) else ""
        if text.startswith("stream "):
            profile = cProfile.Profile() if PROFILE else None
            if profile is not None:
                profile.enable()
            session_id = params.session_id
            for index in range(int(text.split()[1])):
                chunk = AgentMessageChunk(content=TextContent(text=f"chunk {index} "))
                await ctx.send_update(session_id, chunk)
            if profile is not None:
                profile.disable()
                profile.dump_stats(PROFILE)  # type: ignore[arg-type] # set when profile is
        return PromptResponse(stop_reason="end_turn")


def _store() -> SessionStore | None:
    if not STORE:
        return None
    if STORE == ":memory:":
        return MemorySessionStore()
    return SqliteSessionStore(STORE, durable=bool(os.environ.get("ACP_BENCH_STORE_DURABLE")))


if __name__ == "__main__":
    run_agent(BenchAgent(), store=_store())
