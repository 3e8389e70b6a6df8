"""Show a prompt turn to a person: streamed text, dimmed thoughts, tool calls, plans.

On a terminal it uses ANSI styles and a progress line on stderr while the agent is
quiet; otherwise it writes plain text, so logs and pipes stay clean.

Everything the agent sends is untrusted: unless `raw`, terminal control characters and
escape sequences in it are shown visibly (ESC as `\\x1b`), so an agent cannot retitle the
terminal, move the cursor, overwrite lines or hide text. Newlines and tabs are kept.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from typing import IO, Any

from acp_sdk.protocol._session_state import SessionState
from acp_sdk.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    Content,
    CurrentModeUpdate,
    Diff,
    Plan,
    RequestPermissionRequest,
    SessionInfoUpdate,
    SessionUpdate,
    Terminal,
    TextContent,
    ToolCall,
    ToolCallProgress,
    UnknownSessionUpdate,
    UsageUpdate,
    UserMessageChunk,
)

_PLAN_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}

# C0 controls but tab and newline, DEL, C1 controls (U+0080-U+009F: a lone U+009B is a CSI
# on some terminals), and the bidirectional overrides and isolates (text that reads in a
# different order than it is stored).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def neutralize(text: str) -> str:
    """`text` with terminal control characters shown visibly (ESC -> `\\x1b`, CR ->
    `\\x0d`, ...); newlines and tabs kept, a CRLF line ending becomes a newline."""
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(_visible, text.replace("\r\n", "\n"))


class Renderer:
    def __init__(
        self, out: IO[str] | None = None, *, color: bool | None = None, raw: bool = False
    ) -> None:
        self.out = out or sys.stdout
        self.color = self.out.isatty() if color is None else color
        self.raw = raw  # True: write the agent's text as it came, control characters and all
        self._mid_line = False
        self._tools = SessionState()  # tool calls merged from their updates

    def _clean(self, text: str) -> str:
        return text if self.raw else neutralize(text)

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def _line(self, text: str, style: str | None = None) -> None:
        """One line of (agent) text, neutralized, then styled."""
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        text = self._clean(text)
        self.out.write((self._style(text, style) if style else text) + "\n")
        self.out.flush()

    def note(self, text: str, style: str | None = None) -> None:
        """A line of our own (a recording's prompt, an error), on a line of its own."""
        self._line(text, style)

    def update(self, update: SessionUpdate) -> None:
        if isinstance(update, AgentMessageChunk):
            self._stream(_text_of(update.content), None)
        elif isinstance(update, AgentThoughtChunk):
            text = _text_of(update.content)
            self._stream(text, "2") if self.color else self._line(f"(thinking) {text}")
        elif isinstance(update, UserMessageChunk):
            self._line(f"> {_text_of(update.content)}")
        elif isinstance(update, ToolCall):
            self._tools = self._tools.apply(update)
            self._line(f"* {update.title} [{update.status or 'pending'}]", "36")
            self._contents(update.content)
        elif isinstance(update, ToolCallProgress):
            self._tools = self._tools.apply(update)
            merged = self._tools.tool_calls.get(update.tool_call_id)
            title = (merged.title if merged is not None else None) or update.tool_call_id
            if update.status is not None:
                self._line(f"* {title} [{update.status}]", "36")
            self._contents(update.content or [])
        elif isinstance(update, Plan):
            self._line("Plan:", "1")
            for entry in update.entries:
                self._line(f"  {_PLAN_MARKS.get(entry.status, '[ ]')} {entry.content}")
        elif isinstance(update, CurrentModeUpdate):
            self._line(f"(mode: {update.current_mode_id})", "2")
        elif isinstance(update, SessionInfoUpdate) and isinstance(update.title, str):
            self._line(f"(session: {update.title})", "2")
        elif isinstance(update, UsageUpdate):
            self._line(f"(context: {update.used}/{update.size} tokens)", "2")
        elif isinstance(update, (AvailableCommandsUpdate, UnknownSessionUpdate)):
            pass  # nothing a person needs mid-turn
        else:
            self._line(f"({type(update).__name__})", "2")

    def _stream(self, text: str, style: str | None) -> None:
        text = self._clean(text)
        self.out.write(self._style(text, style) if style else text)
        self.out.flush()
        self._mid_line = not text.endswith("\n")

    def _contents(self, contents: Any) -> None:
        for item in contents:
            if isinstance(item, Diff):
                old = (item.old_text or "").splitlines()
                new = item.new_text.splitlines()
                self._line(f"    diff {item.path}")
                for line in old:
                    self._line(f"    - {line}", "31")
                for line in new:
                    self._line(f"    + {line}", "32")
            elif isinstance(item, Content):
                self._line(f"    {_text_of(item.content)}")
            elif isinstance(item, Terminal):
                self._line(f"    (terminal {item.terminal_id})")

    def permission(self, request: RequestPermissionRequest, choice: str | None) -> None:
        title = request.tool_call.title or request.tool_call.tool_call_id
        names = {option.option_id: option.name for option in request.options}
        answer = names.get(choice, "cancelled") if choice is not None else "cancelled"
        self._line(f"? Permission for {title}: {answer}", "33")

    def stop(self, reason: str, why: str | None = None) -> None:
        """The turn's end: `[stop reason]`, and why when the client caused it."""
        self._line(f"[{reason}]" + (f" ({why})" if why else ""), "2")


def _text_of(block: Any) -> str:
    return block.text if isinstance(block, TextContent) else f"[{type(block).__name__}]"


class Progress:
    """A "working" line on stderr while the agent is quiet (terminals only)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="acp-progress")
        self._shown = False
        self.paused = False

    def __enter__(self) -> Progress:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self.touch()

    def touch(self) -> None:
        self._last = time.monotonic()
        if self._shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self._shown = False

    def _run(self) -> None:
        start = time.monotonic()
        while not self._stop.wait(0.25):
            if not self.paused and time.monotonic() - self._last > 1.0:
                sys.stderr.write(f"\r\x1b[2mworking... {time.monotonic() - start:.0f}s\x1b[0m")
                sys.stderr.flush()
                self._shown = True
