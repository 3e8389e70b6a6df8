"""Decode a real ACP message, look at it as typed objects, and encode it back.

python examples/roundtrip.py
"""

from __future__ import annotations

import orjson

import acp_sdk
from acp_sdk.schema import AgentMessageChunk, SessionNotification, TextContent, ToolCallProgress

# A `session/update` notification's params, as an agent streams them (prompt-turn.mdx),
# with a field from a newer protocol version that this SDK does not know yet.
WIRE = b"""{
  "sessionId": "sess_abc123def456",
  "update": {
    "sessionUpdate": "agent_message_chunk",
    "content": {"type": "text", "text": "I'll analyze your code for potential issues."},
    "fromTheFuture": {"kept": true}
  }
}"""


def main() -> None:
    notification = acp_sdk.decode(WIRE, SessionNotification)
    update = notification.update
    match update:
        case AgentMessageChunk(content=TextContent(text=text)):
            print(f"agent says: {text}")
        case ToolCallProgress(tool_call_id=tool_call_id, status=status):
            print(f"tool call {tool_call_id} is {status}")
        case _:
            print(f"other update: {type(update).__name__}")
    if isinstance(update, AgentMessageChunk):
        print(f"unknown fields kept: {dict(update.extra)}")
    encoded = acp_sdk.encode(notification)
    assert orjson.loads(encoded) == orjson.loads(WIRE), "the round trip lost something"
    print(f"re-encoded {len(encoded)} bytes, equal to the input: {encoded.decode()}")


if __name__ == "__main__":
    main()
