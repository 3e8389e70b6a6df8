"""A small spec-following ACP agent written on the raw wire (stdlib only), for the checker's
tests: each broken agent beside it subclasses it and breaks exactly one rule.

It answers initialize (version 1), session/new, session/list, session/set_mode,
session/close and session/prompt; a prompt starting with "wait" runs until session/cancel or
$/cancel_request, any other prompt streams two message chunks and ends `end_turn`.
"""

from __future__ import annotations

import json
import sys
import threading
import uuid
from typing import Any

MODES = [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]


class RawAgent:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sessions: dict[str, str] = {}  # id -> cwd
        self.waits: dict[Any, threading.Event] = {}  # prompt request id -> cancel
        self.turn_of: dict[str, Any] = {}  # session id -> running prompt id
        self.threads: list[threading.Thread] = []

    # -------------------------------------------------------------- wire

    def send(self, msg: dict[str, Any]) -> None:
        with self.lock:
            sys.stdout.write(json.dumps(msg) + "\n")
            sys.stdout.flush()

    def respond(self, rid: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def error(self, rid: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

    def update(self, sid: str, update: dict[str, Any]) -> None:
        params = {"sessionId": sid, "update": update}
        self.send({"jsonrpc": "2.0", "method": "session/update", "params": params})

    def chunk(self, sid: str, text: str) -> None:
        content = {"type": "text", "text": text}
        self.update(sid, {"sessionUpdate": "agent_message_chunk", "content": content})

    # -------------------------------------------------------------- loop

    def run(self) -> None:
        self.startup()
        for line in sys.stdin:
            if line.strip():
                self.handle_line(line)
        self.shutdown()

    def startup(self) -> None:
        pass

    def shutdown(self) -> None:
        for event in list(self.waits.values()):
            event.set()
        for thread in self.threads:
            thread.join(5)

    def on_malformed(self, line: str) -> None:
        self.error(None, -32700, "Parse error")

    def on_unknown(self, rid: Any, method: str) -> None:
        self.error(rid, -32601, f"Method not found: {method}")

    def handle_line(self, line: str) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            self.on_malformed(line)
            return
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            self.error(None, -32600, "Invalid Request")
            return
        rid = msg.get("id")
        if "method" not in msg:
            return  # the client's answer to one of our requests
        method = msg["method"]
        if not isinstance(method, str):
            self.error(rid if isinstance(rid, (int, str)) else None, -32600, "Invalid Request")
            return
        params = msg.get("params") or {}
        if "id" not in msg:
            self.notification(method, params)
            return
        handler = getattr(self, "do_" + method.replace("/", "_"), None)
        if handler is None:
            self.on_unknown(rid, method)
        else:
            handler(rid, params)

    def notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "session/cancel":
            self.cancel(self.turn_of.get(str(params.get("sessionId"))))
        elif method == "$/cancel_request":
            self.cancel(params.get("requestId"))

    def cancel(self, rid: Any) -> None:
        event = self.waits.get(rid)
        if event is not None:
            event.set()

    # -------------------------------------------------------------- methods

    def do_initialize(self, rid: Any, params: dict[str, Any]) -> None:
        caps = {"loadSession": False, "sessionCapabilities": {"list": {}, "close": {}}}
        info = {"name": type(self).__name__, "version": "0.1"}
        result = {"protocolVersion": 1, "agentCapabilities": caps, "agentInfo": info}
        self.respond(rid, result | {"authMethods": []})

    def do_session_new(self, rid: Any, params: dict[str, Any]) -> None:
        sid = "s-" + uuid.uuid4().hex[:12]
        self.sessions[sid] = params.get("cwd", "")
        modes = {"currentModeId": "ask", "availableModes": MODES}
        self.respond(rid, {"sessionId": sid, "modes": modes})

    def do_session_list(self, rid: Any, params: dict[str, Any]) -> None:
        if params.get("cursor") is not None:
            self.error(rid, -32602, "unknown cursor")
            return
        cwd = params.get("cwd")
        listed = [
            {"sessionId": sid, "cwd": where}
            for sid, where in self.sessions.items()
            if cwd is None or where == cwd
        ]
        self.respond(rid, {"sessions": listed})

    def do_session_set_mode(self, rid: Any, params: dict[str, Any]) -> None:
        if params.get("modeId") not in {m["id"] for m in MODES}:
            self.error(rid, -32602, "unknown mode")
            return
        self.respond(rid, {})

    def do_session_close(self, rid: Any, params: dict[str, Any]) -> None:
        self.cancel(self.turn_of.get(str(params.get("sessionId"))))  # as session/cancel would
        self.respond(rid, {})

    def do_session_prompt(self, rid: Any, params: dict[str, Any]) -> None:
        thread = threading.Thread(target=self.turn, args=(rid, params), daemon=True)
        self.threads.append(thread)
        thread.start()

    def turn(self, rid: Any, params: dict[str, Any]) -> None:
        sid = params["sessionId"]
        blocks = params.get("prompt") or [{}]
        text = str(blocks[0].get("text", ""))
        self.turn_of[sid] = rid
        if text.startswith("wait"):
            self.respond(rid, {"stopReason": self.wait(rid, sid)})
            return
        self.answer(rid, sid)

    def wait(self, rid: Any, sid: str) -> str:
        """A long turn: until cancelled; returns its stop reason."""
        event = self.waits[rid] = threading.Event()
        event.wait(60)
        return "cancelled"

    def answer(self, rid: Any, sid: str) -> None:
        """A plain turn: its updates, then its answer."""
        self.chunk(sid, "hello")
        self.chunk(sid, "!")
        self.respond(rid, {"stopReason": "end_turn"})


if __name__ == "__main__":
    RawAgent().run()
