"""A hostile agent: answers correctly, but floods the client with junk between frames.

Junk: invalid JSON, scalars, batches, responses for ids nobody asked for, a 2 MB line
without a newline in one burst, unknown notifications, and a duplicate answer.
"""

from __future__ import annotations

import json
import sys

JUNK = [
    b"{not json\n",
    b"42\n",
    b'[{"jsonrpc":"2.0","method":"session/update"}]\n',
    b'{"jsonrpc":"2.0","id":999,"result":{}}\n',
    b'{"jsonrpc":"2.0","method":"_vendor/unknown","params":{}}\n',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":5}}\n',
    b"\xff\xfe garbage bytes\n",
    b"x" * 2_000_000 + b"\n",
]


def send(message: dict[str, object]) -> None:
    out = sys.stdout.buffer
    for junk in JUNK:
        out.write(junk)
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def main() -> None:
    for line in sys.stdin.buffer:
        request = json.loads(line)
        rid, method = request.get("id"), request.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 1}})
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "h1"}})
        elif method == "session/prompt":
            update = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "survived"},
            }
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": "h1", "update": update},
                }
            )
            answer = {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}}
            send(answer)
            send(answer)  # a duplicate answer must change nothing
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})


if __name__ == "__main__":
    main()
