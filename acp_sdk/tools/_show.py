"""`python -m acp_sdk show FILE.jsonl`: a recording rendered as the CLI renders a live turn
(the same `Renderer`), each line stamped with the seconds since the recording started;
`--raw` prints the frames themselves."""

from __future__ import annotations

import sys
from typing import IO, Any

from acp_sdk.protocol._codec import decode
from acp_sdk.protocol._errors import DecodeError
from acp_sdk.schema import RequestPermissionRequest, SessionNotification
from acp_sdk.tools._recording import Frame, Recording, id_key, items, obj
from acp_sdk.tools._render import Renderer, neutralize

_ARROWS = {"client": "client -> agent", "agent": "agent -> client", "stderr": "agent stderr"}


class _Stamped:
    """A text stream that starts each line with the time of the frame being shown."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.t = 0.0
        self._at_line_start = True

    def write(self, text: str) -> int:
        for piece in text.splitlines(keepends=True):
            if self._at_line_start:
                self.out.write(f"[{self.t:9.3f}] ")
            self.out.write(piece)
            self._at_line_start = piece.endswith("\n")
        return len(text)

    def flush(self) -> None:
        self.out.flush()

    def isatty(self) -> bool:
        return self.out.isatty()


def show_raw(recording: Recording, out: IO[str]) -> None:
    for frame in recording.frames:
        text = frame.data.decode("utf-8", errors="replace")
        tail = " (no newline: the stream ended)" if frame.partial else ""
        out.write(f"[{frame.t:9.3f}] {_ARROWS.get(frame.origin, frame.origin)}: ")
        out.write(f"{neutralize(text)}{tail}\n")
    ending = _ending(recording)
    if ending:
        out.write(f"[{recording.ended_at or 0:9.3f}] {ending}\n")


def _ending(recording: Recording) -> str:
    if recording.signal is not None:
        return f"the agent was killed by signal {recording.signal}"
    if recording.exit_code is not None:
        return f"the agent exited with code {recording.exit_code}"
    return ""


def show(recording: Recording, out: IO[str] | None = None, *, color: bool | None = None) -> None:
    """Render the recording's turns (updates, permission decisions, stop reasons)."""
    target = out or sys.stdout
    stamped = _Stamped(target)
    renderer = Renderer(stamped, color=color)  # type: ignore[arg-type]  # a write/flush stream
    requests: dict[Any, str] = {}  # client request id -> method
    asked: dict[Any, RequestPermissionRequest] = {}  # agent request id -> the question
    argv: Any = recording.header.get("argv")
    started = str(recording.header.get("started", "?"))
    if isinstance(argv, list):
        command = " ".join(str(arg) for arg in items(argv))
        stamped.write(f"Recording of {neutralize(command)} (started {started})\n")
    for frame in recording.frames:
        stamped.t = frame.t
        if frame.origin == "stderr":
            renderer.note(f"(agent stderr) {frame.data.decode('utf-8', 'replace')}", "2")
        elif frame.message is None:
            text = frame.data.decode("utf-8", "replace")
            renderer.note(f"(not JSON-RPC, from the {frame.origin}) {text}", "31")
        elif frame.origin == "client":
            _client(frame, renderer, requests, asked)
        else:
            _agent(frame, renderer, requests, asked)
    ending = _ending(recording)
    if ending:
        stamped.t = recording.ended_at or stamped.t
        renderer.note(f"({ending})", "2")
    stamped.flush()


def _client(
    frame: Frame,
    renderer: Renderer,
    requests: dict[Any, str],
    asked: dict[Any, RequestPermissionRequest],
) -> None:
    message = obj(frame.message)
    if frame.is_request and frame.method is not None:
        requests[_key(frame.id)] = frame.method
        if frame.method == "session/prompt":
            blocks: Any = obj(message.get("params")).get("prompt")
            texts = [
                str(obj(block).get("text", f"[{obj(block).get('type')}]"))
                for block in items(blocks)
            ]
            renderer.note("> " + " ".join(texts), "1")
    elif frame.is_notification and frame.method == "session/cancel":
        renderer.note("(the client cancels the turn)", "33")
    elif frame.is_response:
        question = asked.pop(_key(frame.id), None)
        if question is not None:
            outcome = obj(obj(message.get("result")).get("outcome"))
            choice: Any = outcome.get("optionId") if outcome.get("outcome") == "selected" else None
            renderer.permission(question, choice if isinstance(choice, str) else None)


def _agent(
    frame: Frame,
    renderer: Renderer,
    requests: dict[Any, str],
    asked: dict[Any, RequestPermissionRequest],
) -> None:
    message = obj(frame.message)
    params = obj(message.get("params"))
    if frame.method == "session/update":
        try:
            notification = decode(params, SessionNotification)
        except DecodeError as error:
            renderer.note(f"(an update that does not decode: {error})", "31")
            return
        renderer.update(notification.update)
    elif frame.method == "session/request_permission" and frame.is_request:
        try:
            asked[_key(frame.id)] = decode(params, RequestPermissionRequest)
        except DecodeError as error:
            renderer.note(f"(a permission request that does not decode: {error})", "31")
    elif frame.is_request:
        renderer.note(f"(the agent calls {frame.method})", "2")
    elif frame.is_response:
        method = requests.pop(_key(frame.id), None)
        failure = obj(message.get("error"))
        result = obj(message.get("result"))
        if "error" in message:
            text = f"{failure.get('message')} ({failure.get('code')})"
            if failure.get("data") is not None:
                text += f": {failure.get('data')}"
            renderer.note(f"! {method or 'a request'} failed: {text}", "31")
        elif method == "initialize":
            info = obj(result.get("agentInfo"))
            name = info.get("title") or info.get("name") or "an agent"
            renderer.note(f"Connected to {name} {info.get('version', '')}".rstrip() + ".")
        elif method in ("session/new", "session/load", "session/resume"):
            renderer.note(f"Session {result.get('sessionId') or '(loaded)'}.")
        elif method == "session/prompt":
            renderer.stop(str(result.get("stopReason")))


_key = id_key
