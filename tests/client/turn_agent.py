"""A raw ACP agent (JSON lines by hand, no acp_sdk) that keeps the prompt-turn rules to the
letter, whatever the timing: it reads every frame in order on one thread, so a
`session/cancel` right behind its `session/prompt` (same read) still ends that turn
`cancelled`. Prompts (first text block):

    wait          nothing until cancelled, then `cancelled`
    deaf          nothing, ever (ignores the cancel too)
    stream N      N agent message chunks "<i> ", then `end_turn`
    slow N SECS   N chunks, SECS apart (a slow agent that keeps streaming), then `end_turn`
    tool          a tool call and its completion, a chunk "done", then `end_turn`
    ask           a session/request_permission; a chunk with the chosen option id (or
                  "cancelled"), then `cancelled` if the turn was cancelled, else `end_turn`

Anything else streams its words back.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

LOCK = threading.Lock()
CANCELLED: dict[str, threading.Event] = {}
ANSWERS: dict[int, tuple[threading.Event, dict[str, Any]]] = {}


def send(message: dict[str, Any]) -> None:
    line = json.dumps({"jsonrpc": "2.0", **message}) + "\n"
    with LOCK:
        sys.stdout.write(line)
        sys.stdout.flush()


def update(session: str, body: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": session, "update": body}})


def chunk(session: str, text: str) -> None:
    update(
        session,
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
    )


def ask(session: str) -> dict[str, Any]:
    """A permission question; waits for the client's answer."""
    rid = 1000 + len(ANSWERS)
    got: dict[str, Any] = {}
    ANSWERS[rid] = (threading.Event(), got)
    options = [
        {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
        {"optionId": "no", "name": "No", "kind": "reject_once"},
    ]
    call = {"toolCallId": "t1", "title": "Ask", "status": "pending"}
    params = {"sessionId": session, "toolCall": call, "options": options}
    send({"id": rid, "method": "session/request_permission", "params": params})
    ANSWERS[rid][0].wait()
    return got


def answer(rid: Any, stop: str) -> None:
    send({"id": rid, "result": {"stopReason": stop}})


def run_prompt(rid: Any, session: str, words: list[str], cancelled: threading.Event) -> None:
    kind = words[0] if words else ""
    if kind == "wait":
        cancelled.wait()
        answer(rid, "cancelled")
    elif kind == "deaf":
        return
    elif kind in ("stream", "slow"):
        count = int(words[1])
        pause = float(words[2]) if kind == "slow" else 0.0
        for index in range(count):
            if cancelled.is_set():
                answer(rid, "cancelled")
                return
            chunk(session, f"{index} ")
            if pause:
                cancelled.wait(pause)
        answer(rid, "end_turn")
    elif kind == "tool":
        call = {"toolCallId": "t1", "title": "Look", "status": "pending"}
        update(session, {"sessionUpdate": "tool_call", **call})
        update(
            session,
            {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"},
        )
        chunk(session, "done")
        answer(rid, "end_turn")
    elif kind == "ask":
        outcome = ask(session).get("result", {}).get("outcome", {})
        chunk(session, str(outcome.get("optionId", outcome.get("outcome"))))
        answer(rid, "cancelled" if cancelled.is_set() else "end_turn")
    else:
        for word in words:
            chunk(session, word + " ")
        answer(rid, "end_turn")


def main() -> None:
    sessions = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, rid, params = message.get("method"), message.get("id"), message.get("params", {})
        if method == "initialize":
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            sessions += 1
            send({"id": rid, "result": {"sessionId": f"s{sessions}"}})
        elif method == "session/prompt":
            session = params["sessionId"]
            text = next((b["text"] for b in params["prompt"] if b.get("type") == "text"), "")
            cancelled = CANCELLED[session] = threading.Event()
            threading.Thread(
                target=run_prompt, args=(rid, session, text.split(), cancelled), daemon=True
            ).start()
        elif method == "session/cancel":
            event = CANCELLED.get(params.get("sessionId", ""))
            if event is not None:
                event.set()
        elif method is None and rid in ANSWERS:
            ANSWERS[rid][1].update(message)
            ANSWERS[rid][0].set()
        elif rid is not None:
            send({"id": rid, "error": {"code": -32601, "message": f"no method {method}"}})


if __name__ == "__main__":
    main()
