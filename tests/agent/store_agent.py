"""An agent built only on the runtime and a session store, for the store tests.

    python store_agent.py PATH [--unstable] [--page-size N]
    (PATH ":memory:" for a MemorySessionStore)

It overrides only `prompt` (and `cancel`): every session method is the store's. What a
prompt's text asks for:

- `title T`: sends `session_info_update` with title T, then "ok".
- `stream N`: N agent message chunks "tick 0".."tick N-1".
- `forever`: ticks every 10 ms until cancelled ("cancelled" is then written to stderr).
- `history`: says how the store sees the session: "<messages> messages, first: <text>".
- `save V` / `load`: saves V as the session's data / says the saved data.
- anything else: echoed back.
"""

from __future__ import annotations

import asyncio
import sys

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.agent import MemorySessionStore, SessionStore, SqliteSessionStore
from acp_sdk.schema import (
    AgentMessageChunk,
    CancelNotification,
    PromptRequest,
    PromptResponse,
    SessionInfoUpdate,
    TextContent,
)


class StoreAgent(Agent):
    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        text = "".join(b.text for b in params.prompt if isinstance(b, TextContent))
        sid = params.session_id

        async def say(words: str) -> None:
            await ctx.send_update(sid, AgentMessageChunk(content=TextContent(text=words)))

        command, _, rest = text.partition(" ")
        if command == "title":
            await ctx.send_update(sid, SessionInfoUpdate(title=rest))
            await say("ok")
        elif command == "stream":
            for index in range(int(rest)):
                await say(f"tick {index}")
        elif command == "forever":
            index = 0
            while True:
                await say(f"tick {index}")
                index += 1
                await asyncio.sleep(0.01)
        elif command == "history":
            state = await ctx.history(sid)
            first = state.messages[0].text if state.messages else ""
            await say(f"{len(state.messages)} messages, first: {first}")
        elif command == "save":
            await ctx.save_data(sid, {"value": rest})
            await say("saved")
        elif command == "load":
            await say(repr(await ctx.load_data(sid)))
        else:
            await say(text)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: CancelNotification, ctx: AgentContext) -> None:
        print("cancelled", params.session_id, file=sys.stderr, flush=True)


def main() -> None:
    path = sys.argv[1]
    size = int(sys.argv[sys.argv.index("--page-size") + 1]) if "--page-size" in sys.argv else 50
    store: SessionStore = (
        MemorySessionStore(page_size=size)
        if path == ":memory:"
        else SqliteSessionStore(path, page_size=size)
    )
    table = None
    if "--unstable" in sys.argv:
        from acp_sdk import unstable

        table = unstable.TABLE
    run_agent(StoreAgent(), store=store, table=table)


if __name__ == "__main__":
    main()
