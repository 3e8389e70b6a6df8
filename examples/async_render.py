"""An asyncio client that renders a turn as it streams, as an editor plugin would.

python examples/async_render.py
"""

from __future__ import annotations

import asyncio
import os
import sys

from acp_sdk import AsyncClient
from acp_sdk.handlers import AllowOnce
from acp_sdk.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Diff,
    Plan,
    SessionUpdate,
    TextContent,
    ToolCall,
    ToolCallProgress,
)


def render(update: SessionUpdate) -> str:
    """One line (or fragment) of UI per update; an editor would update widgets instead."""
    match update:
        case AgentMessageChunk(content=TextContent(text=text)):
            return text
        case AgentThoughtChunk(content=TextContent(text=text)):
            return f"\n  (thinking: {text})\n"
        case Plan(entries=entries):
            return "\n" + "\n".join(f"  - [{e.status}] {e.content}" for e in entries) + "\n"
        case ToolCall(title=title, status=status):
            return f"\n  tool: {title} ({status or 'pending'})\n"
        case ToolCallProgress(tool_call_id=tool_id, status=status, content=content):
            diffs = [item.path for item in content or [] if isinstance(item, Diff)]
            shown = f" diff {', '.join(diffs)}" if diffs else ""
            return f"  tool {tool_id}: {status or 'update'}{shown}\n"
        case _:
            return ""


async def main() -> None:
    agent = [sys.executable, "-m", "acp_sdk", "agent"]
    async with AsyncClient.spawn(agent, handlers=[AllowOnce()]) as client:
        session = await client.new_session(cwd=os.getcwd())
        turn = session.prompt("demo")
        async for update in turn:
            print(render(update), end="", flush=True)
        print(f"\n[{turn.stop_reason}]")


if __name__ == "__main__":
    asyncio.run(main())
