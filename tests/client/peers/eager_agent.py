"""A raw agent (no acp_sdk) that asks the client something in the very write that
answers `initialize`: the answer, a `session/request_permission` and a `session/update`,
one write. It answers `session/new` once the client answered the permission request,
with that answer in the response's `_meta` (so a test sees what the client said)."""

from __future__ import annotations

import json
import sys
from typing import Any


def line(message: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", **message}) + "\n"


def main() -> None:
    answer: dict[str, Any] | None = None
    waiting: list[Any] = []  # session/new ids that came before the answer
    for raw in sys.stdin:
        message = json.loads(raw)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            ask = {
                "sessionId": "s0",
                "toolCall": {"toolCallId": "t1", "title": "Delete build/"},
                "options": [
                    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                ],
            }
            update = {
                "sessionId": "s0",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "early"},
                },
            }
            sys.stdout.write(
                line({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
                + line({"id": "ask", "method": "session/request_permission", "params": ask})
                + line({"method": "session/update", "params": update})
            )
            sys.stdout.flush()
        elif rid == "ask" and method is None:
            answer = message
            for waiter in waiting:
                reply(waiter, answer)
        elif method == "session/new":
            if answer is None:
                waiting.append(rid)
            else:
                reply(rid, answer)
        elif rid is not None and method is not None:
            error = {"code": -32601, "message": "Method not found"}
            sys.stdout.write(line({"id": rid, "error": error}))
            sys.stdout.flush()


def reply(rid: Any, answer: dict[str, Any]) -> None:
    result = {"sessionId": "s1", "_meta": {"answer": answer}}
    sys.stdout.write(line({"id": rid, "result": result}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
