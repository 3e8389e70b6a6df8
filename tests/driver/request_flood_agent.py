"""A raw agent (no acp_sdk) that floods its client with requests and never reads again.

    python request_flood_agent.py COUNT PROGRESS_PATH

It answers `initialize`, then writes COUNT `session/request_permission` requests in a
row and never reads its stdin again, so the client's answers pile up unread. Every
100 requests it writes how many it has written to PROGRESS_PATH ("done" at the end).
"""

from __future__ import annotations

import json
import sys


def frame(message: dict[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")).encode() + b"\n"


def main() -> None:
    count, progress = int(sys.argv[1]), sys.argv[2]
    request = json.loads(sys.stdin.buffer.readline())
    out = sys.stdout.buffer
    out.write(
        frame({"id": request["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    )
    out.flush()
    params = {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1"},
        "options": [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}],
    }
    for index in range(count):
        out.write(frame({"id": index, "method": "session/request_permission", "params": params}))
        if index % 100 == 99:
            out.flush()  # blocks once the client stops reading: the count stays put
            with open(progress, "w") as note:
                note.write(str(index + 1))
    out.flush()
    with open(progress, "w") as note:
        note.write("done")
    sys.stdin.buffer.read()  # until the client closes our input


if __name__ == "__main__":
    main()
