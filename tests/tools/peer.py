"""A small scripted, raw JSON-RPC agent for the CLI tests: `python peer.py MODE`.

Raw frames, no SDK: it can misbehave in ways an `Agent` subclass would not. Modes:

    echo        the prompt streams "hello", then end_turn
    escape      the prompt streams text (and a tool call title) full of control sequences
    crash       the prompt makes it write two stderr lines and exit with code 3
    die-early   writes to stderr and exits with code 5 before answering initialize
    slow        the prompt streams "started", waits for session/cancel, then streams
                "stopping" and answers `cancelled`
    stubborn    like slow, but ignores session/cancel and the end of its input
    ask-always  asks permission offering only allow_always / reject_always, then streams
                the outcome it got ("outcome: ...")
    auth        advertises two auth methods; session/new answers -32000 until
                `authenticate` with `api-key`
    chatty      writes "peer says hi" to its stderr and sends an unknown notification

With ACP_PEER_LOG set, it appends its pid to that file when it starts.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "echo"
HOSTILE = "\x1b]0;pwned\x07title \x1b[31mred\x1b[0m\ttab\x9b2J\rCR \u202eevil\nline2\r\nline3"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def update(session_id: str, update: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": session_id, "update": update}})


def say(session_id: str, text: str) -> None:
    update(
        session_id,
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
    )


def main() -> None:
    if os.environ.get("ACP_PEER_LOG"):
        with open(os.environ["ACP_PEER_LOG"], "a") as log:
            log.write(f"{os.getpid()}\n")
    if MODE == "die-early":
        print("peer: cannot read my configuration", file=sys.stderr, flush=True)
        sys.exit(5)
    authenticated = False
    prompt_id: object = None
    for line in sys.stdin:
        message = json.loads(line)
        method, rid = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            methods = []
            if MODE == "auth":
                methods = [
                    {"id": "api-key", "name": "API key"},
                    {"id": "browser", "name": "Browser login"},
                ]
            result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": methods}
            send({"id": rid, "result": result})
            if MODE == "chatty":
                print("peer says hi", file=sys.stderr, flush=True)
                send({"method": "_peer/hello", "params": {}})
        elif method == "authenticate":
            if params.get("methodId") == "api-key":
                authenticated = True
                send({"id": rid, "result": {}})
            else:
                send({"id": rid, "error": {"code": -32602, "message": "unknown method"}})
        elif method == "session/new":
            if MODE == "auth" and not authenticated:
                error = {"code": -32000, "message": "Authentication required"}
                send({"id": rid, "error": error})
            else:
                send({"id": rid, "result": {"sessionId": "s1"}})
        elif method == "session/prompt":
            prompt_id = rid
            if MODE in ("echo", "auth", "chatty"):
                say("s1", "hello")
                send({"id": rid, "result": {"stopReason": "end_turn"}})
            elif MODE == "escape":
                say("s1", HOSTILE)
                tool = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "\x1b[2Jwipe"}
                update("s1", tool)
                send({"id": rid, "result": {"stopReason": "end_turn"}})
            elif MODE == "crash":
                print("peer: warming up", file=sys.stderr)
                print("peer: fatal: the model server is gone", file=sys.stderr, flush=True)
                os._exit(3)
            elif MODE in ("slow", "stubborn"):
                say("s1", "started")
            elif MODE == "ask-always":
                options = [
                    {"optionId": "always-yes", "name": "Always allow", "kind": "allow_always"},
                    {"optionId": "always-no", "name": "Always reject", "kind": "reject_always"},
                ]
                request = {"sessionId": "s1", "toolCall": {"toolCallId": "t1"}, "options": options}
                send({"id": 100, "method": "session/request_permission", "params": request})
        elif method == "session/cancel":
            if MODE == "slow":
                say("s1", "stopping")
                send({"id": prompt_id, "result": {"stopReason": "cancelled"}})
        elif method is None and rid == 100:  # the answer to our permission request
            outcome = (message.get("result") or {}).get("outcome")
            say("s1", f"outcome: {json.dumps(outcome, sort_keys=True)}")
            send({"id": prompt_id, "result": {"stopReason": "end_turn"}})
    if MODE == "stubborn":
        time.sleep(60)


if __name__ == "__main__":
    main()
