"""An agent whose sessions survive it: `run_agent(agent, store=SqliteSessionStore(path))`.

It overrides only `prompt`; the runtime records every prompt and update in the file and
answers session/new, load (replay), list, resume, close and delete for it. Each turn it
rebuilds its context from `ctx.history()` and counts turns in its own saved data.

python -m acp_sdk chat -- python examples/agent_persistent.py /tmp/notes.db
"""

from __future__ import annotations

import sys

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.agent import SessionStoreError, SqliteSessionStore
from acp_sdk.schema import (
    AgentMessageChunk,
    PromptRequest,
    PromptResponse,
    SessionInfoUpdate,
    TextContent,
)


class Notes(Agent):
    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        sid = params.session_id
        history = await ctx.history(sid)  # every message so far, this prompt included
        said = [m.text for m in history.messages if m.role == "user"]
        data = await ctx.load_data(sid) or {"turns": 0}
        data["turns"] += 1
        await ctx.save_data(sid, data)
        if data["turns"] == 1:  # the title clients show in their session list
            await ctx.send_update(sid, SessionInfoUpdate(title=said[-1][:40]))
        reply = f"turn {data['turns']}; you said: {' / '.join(said)}"
        await ctx.send_update(sid, AgentMessageChunk(content=TextContent(text=reply)))
        return PromptResponse(stop_reason="end_turn")


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "notes.db"
    try:
        store = SqliteSessionStore(path)
    except SessionStoreError as error:
        sys.exit(f"agent_persistent: {error}")
    run_agent(Notes(), store=store)


if __name__ == "__main__":
    main()
