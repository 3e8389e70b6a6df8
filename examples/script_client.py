"""A one-shot script: start an agent, ask one thing, print the answer.

python examples/script_client.py                       # the bundled scenario agent
python examples/script_client.py my-agent --acp        # any ACP agent command
"""

from __future__ import annotations

import os
import sys

from acp_sdk import Client
from acp_sdk.schema import AgentMessageChunk, TextContent

DEFAULT_AGENT = [sys.executable, "-m", "acp_sdk", "agent"]


def main(argv: list[str]) -> int:
    with Client.spawn(argv or DEFAULT_AGENT) as client:
        session = client.new_session(cwd=os.getcwd())
        turn = session.prompt("echo Hello from a one-shot script")
        for update in turn:
            if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContent):
                print(update.content.text, end="", flush=True)
        print(f"\n(stop reason: {turn.stop_reason})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
