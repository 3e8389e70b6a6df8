"""An editor-plugin-style client that keeps no fold of its own: it renders `session.state`.

python examples/plugin_state.py

With `track_state=True`, `session.state` is a `SessionState`: the session's messages,
tool calls merged from their updates, the plan, the current mode and more, updated
before each update is handed out. A plugin redraws its panel from it instead of
tracking updates itself.
"""

from __future__ import annotations

import asyncio
import os
import sys

from acp_sdk import AsyncClient, SessionState
from acp_sdk.handlers import AllowOnce


def panel(state: SessionState) -> str:
    """What a side panel would show, from the state alone."""
    lines = [f"mode: {state.current_mode_id or '-'}"]
    for message in state.messages:
        lines.append(f"{message.role}: {message.text.strip()}")
    for tool_call_id, tool in state.tool_calls.items():
        lines.append(f"tool {tool_call_id}: {tool.title} [{tool.status or 'pending'}]")
    if state.plan is not None:
        lines += [f"plan: [{entry.status}] {entry.content}" for entry in state.plan]
    return "\n".join(lines)


async def main() -> None:
    agent = [sys.executable, "-m", "acp_sdk", "agent"]
    async with AsyncClient.spawn(agent, handlers=[AllowOnce()], track_state=True) as client:
        session = await client.new_session(cwd=os.getcwd())
        turn = session.prompt("demo")
        async for _update in turn:
            pass  # a plugin would schedule a redraw of panel(session.state) here
        print(panel(session.state))
        print(f"turn text: {turn.text.strip()}")
        print(f"[{turn.stop_reason}]")


if __name__ == "__main__":
    asyncio.run(main())
