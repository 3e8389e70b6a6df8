"""The agent behind `serve` in tests/remote/test_haproxy.py.

`python haproxy_agent.py STORE PIDDIR`: sessions in the SQLite file STORE (shared by every
agent process of every server, so a session started behind one server loads behind
another); writes its pid into PIDDIR (the test kills what is left). Every update names the
server that started it (`$ACP_TEST_BACKEND`). Prompts:

- `stream N`: N updates, then the answer;
- `until PATH`: an update every 50 ms until PATH exists, then the answer.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from acp_sdk import Agent, AgentContext, run_agent
from acp_sdk.agent import SqliteSessionStore
from acp_sdk.schema import AgentMessageChunk, PromptRequest, PromptResponse, TextContent

BACKEND = os.environ.get("ACP_TEST_BACKEND", "?")
TICK = 0.05
LONGEST = 60.0  # an `until` turn ends on its own after this, so no agent outlives the test


class Tagged(Agent):
    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        sid = params.session_id
        words = "".join(b.text for b in params.prompt if isinstance(b, TextContent)).split()

        async def say(index: int) -> None:
            text = f"{BACKEND} {index}\n"
            await ctx.send_update(sid, AgentMessageChunk(content=TextContent(text=text)))

        if words[:1] == ["stream"]:
            for index in range(int(words[1])):
                await say(index)
        elif words[:1] == ["until"]:
            stop = Path(words[1])
            index = 0
            while not stop.exists() and index * TICK < LONGEST:
                await say(index)
                index += 1
                await asyncio.sleep(TICK)
            await say(index)
        return PromptResponse(stop_reason="end_turn")


def main() -> None:
    store, pids = sys.argv[1], Path(sys.argv[2])
    (pids / str(os.getpid())).touch()
    run_agent(Tagged(), store=SqliteSessionStore(store))


if __name__ == "__main__":
    main()
