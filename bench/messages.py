"""The four messages the codec benchmark measures, as wire JSON, with their model types."""

from __future__ import annotations

from typing import Any

import orjson

from acp_sdk import schema

_OLD = "\n".join(f"    line {i}: value = compute({i}) + offset" for i in range(30))
_NEW = _OLD.replace("offset", "offset * 2")

MESSAGES: dict[str, tuple[bytes, Any, str]] = {
    # name: (wire bytes, acp_sdk type, incumbent class name in acp.schema)
    "text chunk": (
        orjson.dumps(
            {
                "sessionId": "sess_abc123def456",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {
                        "type": "text",
                        "text": "I'll analyze your code for potential issues.",
                    },
                },
            }
        ),
        schema.SessionNotification,
        "SessionNotification",
    ),
    "tool_call_update 2KB diff": (
        orjson.dumps(
            {
                "sessionId": "sess_abc123def456",
                "update": {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "call_001",
                    "status": "completed",
                    "content": [
                        {
                            "type": "diff",
                            "path": "/home/user/project/src/main.py",
                            "oldText": _OLD,
                            "newText": _NEW,
                        }
                    ],
                },
            }
        ),
        schema.SessionNotification,
        "SessionNotification",
    ),
    "prompt, 3 blocks": (
        orjson.dumps(
            {
                "sessionId": "sess_abc123def456",
                "prompt": [
                    {"type": "text", "text": "Can you analyze this code for potential issues?"},
                    {
                        "type": "resource",
                        "resource": {
                            "uri": "file:///home/user/project/main.py",
                            "mimeType": "text/x-python",
                            "text": "def f(xs):\n    return xs",
                        },
                    },
                    {
                        "type": "resource_link",
                        "uri": "file:///home/user/doc.pdf",
                        "name": "doc.pdf",
                    },
                ],
            }
        ),
        schema.PromptRequest,
        "PromptRequest",
    ),
    "initialize response": (
        orjson.dumps(
            {
                "protocolVersion": 1,
                "agentCapabilities": {
                    "loadSession": True,
                    "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
                    "mcpCapabilities": {"http": True, "sse": True},
                    "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
                },
                "authMethods": [{"id": "agent-login", "name": "Agent login"}],
                "agentInfo": {"name": "scenario-agent", "version": "0.1.0"},
            }
        ),
        schema.InitializeResponse,
        "InitializeResponse",
    ),
}
