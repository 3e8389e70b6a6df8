"""The bytes-in half of `Connection` (`Intake`, its base class): frames from bytes or
whole messages, the peer's stray output, and what is held behind an `initialize` not
answered yet. What each message means is the connection's (`Connection._handle`).

- `StrayOutput` keeps the last lines the peer wrote that were not JSON-RPC at all (a
  usage message, a banner: often the only explanation of an agent that exits) and, on a
  client before `initialize` is answered, counts them: past `STRAY_LIMIT_LINES` lines or
  `STRAY_LIMIT_BYTES` bytes the peer is not an ACP agent (`NotAnAgent`).
- `HeldFrames` is what an agent's connection received behind an `initialize` it has not
  answered yet, in order, bounded; the connection processes them once it answers.

A driver stops reading while frames are held (`holding`), so the bound is never near.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable
from typing import Final

from acp_sdk.protocol import _jsonrpc as rpc
from acp_sdk.protocol._errors import ConnectionClosed, ErrorCode, NotAnAgent
from acp_sdk.protocol._framing import FRAME_TOO_LARGE, LineFramer
from acp_sdk.protocol._rows import Side
from acp_sdk.protocol._state import Lifecycle, State, Trigger

__all__ = [
    "END",
    "HELD_FRAMES",
    "STRAY_LIMIT_BYTES",
    "STRAY_LIMIT_LINES",
    "STRAY_LINES",
    "STRAY_LINE_BYTES",
    "HeldFrames",
    "Intake",
    "StrayOutput",
]

_wire = logging.getLogger("acp_sdk.wire")
log = logging.getLogger("acp_sdk.connection")
_WIRE_LOG_BYTES: Final = 4096
"""`acp_sdk.wire` at DEBUG logs every frame received (and the driver every frame sent),
cut to this many bytes."""
_BEFORE_READY: Final = (State.NEW, State.INITIALIZING)

STRAY_LINES: Final = 10
STRAY_LINE_BYTES: Final = 1000
"""The last `STRAY_LINES` lines that were not JSON-RPC are kept, each cut to this."""
STRAY_LIMIT_LINES: Final = 100
STRAY_LIMIT_BYTES: Final = 4 * 1024 * 1024
"""A client gives up on its peer (`NotAnAgent`) when more lines that are not JSON-RPC
than `STRAY_LIMIT_LINES`, or more bytes of them than this, arrive before `initialize` is
answered: a real agent prints a few log lines first, a program that is not one (`yes`,
a long usage text, a binary) more."""
HELD_FRAMES: Final = 4096
"""Frames an agent's connection holds while its `initialize` answer is not sent yet
(what the client pipelined behind it); past this, or past `max_frame_size` bytes held,
a request is refused (-32600) and a notification dropped. A driver stops reading while
the connection holds frames (`Connection.holding`), so it never gets near."""
FIRST_LINE_CHARS: Final = 200
END: Final = object()
"""End of input, held behind the frames that came before it."""


class StrayOutput:
    """The peer's lines that were not JSON-RPC: the last few, and how many came before
    `initialize` was answered (counted on a client only)."""

    __slots__ = ("bytes", "count", "first", "heard", "last")

    def __init__(self) -> None:
        self.last: deque[str] = deque(maxlen=STRAY_LINES)
        self.count = 0
        self.bytes = 0
        self.first = ""
        self.heard = False  # any bytes arrived at all

    def keep(self, frame: bytes, *, counted: bool) -> bool:
        """Keep one stray line; True when, `counted` (a client before `initialize` was
        answered), it took the peer past the limits."""
        text = frame[:STRAY_LINE_BYTES].decode("utf-8", "replace").rstrip("\r")
        self.last.append(text)
        if not counted:
            return False
        if not self.count:
            self.first = text[:FIRST_LINE_CHARS]
        self.count += 1
        self.bytes += len(frame) + 1
        return self.count > STRAY_LIMIT_LINES or self.bytes > STRAY_LIMIT_BYTES

    def not_an_agent(self) -> NotAnAgent:
        return NotAnAgent(
            f"the agent is not speaking ACP: it printed {self.count} lines that are not "
            f"JSON-RPC ({self.bytes} bytes) and no answer to initialize; the first: "
            f"{self.first!r}",
            first_line=self.first,
            lines=self.count,
            stdout_tail=self.tail,
        )

    @property
    def tail(self) -> str:
        return "\n".join(self.last)

    def unanswered(self, peer: str) -> str:
        """What to add to a timed-out `initialize`'s message: what the peer printed."""
        if self.last:
            lines = " | ".join(line[:FIRST_LINE_CHARS] for line in self.last)
            return f"; the {peer} printed, not JSON-RPC: {lines}"
        return "" if self.heard else f"; the {peer} printed nothing"


class HeldFrames:
    """Frames received behind an unanswered `initialize`, in order: `(line, frame)`,
    `line` False for a whole message (`receive_message`); `END` for end of input."""

    __slots__ = ("frames", "max_bytes", "size")

    def __init__(self, max_bytes: int) -> None:
        self.frames: deque[tuple[bool, object]] = deque()
        self.max_bytes = max_bytes
        self.size = 0

    def add(self, line: bool, frame: object) -> bool:
        """Hold one frame; False when it is past the bound (the caller refuses it)."""
        frames = self.frames
        if frame is END:
            if not frames or frames[-1][1] is not END:  # end of input is reported once
                frames.append((line, frame))
            return True
        size = len(frame) if type(frame) is bytes else 0
        if len(frames) >= HELD_FRAMES or self.size + size > self.max_bytes:
            return False
        frames.append((line, frame))
        self.size += size
        return True

    def refusal(self) -> str:
        return (
            f"more than {HELD_FRAMES} frames or {self.max_bytes} bytes arrived before "
            "initialize was answered"
        )

    def rest(self, frames: deque[tuple[bool, object]]) -> None:
        """Hold `frames` (what was left when a second `initialize` was released)."""
        self.frames.extend(frames)
        self.size = sum(len(f) for _, f in frames if type(f) is bytes)


class Intake:
    """The receiving half of `Connection`: bytes or whole messages in, each message
    handed to `_handle` in order, except what is held behind an unanswered `initialize`
    (released by `_release` once it is answered) and the lines that show the peer is no
    ACP agent. `Connection` provides `_handle`, `_reject`, `_close` and the lifecycle."""

    our_role: Side
    _lifecycle: Lifecycle

    def __init__(self, max_frame_size: int) -> None:
        self._framer = LineFramer(max_frame_size)
        # What the peer wrote that was not JSON-RPC at all (a usage message, a banner):
        # often the only explanation of an agent that then exits, or is not one.
        self._stray = StrayOutput()
        # While an initialize we received is unanswered, what follows it waits here.
        self._held: HeldFrames | None = None
        self._diverted = False  # frames are held (above), or dropped (gave up on the peer)

    def _handle(self, message: rpc.Inbound) -> None:
        raise NotImplementedError

    def _reject(self, request_id: rpc.RequestId | None, code: int, reason: str) -> None:
        raise NotImplementedError

    def _close(self, trigger: Trigger, error: ConnectionClosed) -> None:
        raise NotImplementedError

    def receive_data(self, data: bytes) -> None:
        """Feed bytes from the peer; `b""` means end of input."""
        if self._lifecycle.state is State.CLOSED:
            return
        self._take_lines(self._framer.feed(data))
        if data:
            self._stray.heard = True
        elif self._held is not None:
            self._hold(True, END)
        else:
            self._close(Trigger.END_OF_INPUT, ConnectionClosed("the peer closed the connection"))

    def _take_lines(self, frames: Iterable[bytes | object]) -> None:
        log_frames = _wire.isEnabledFor(logging.DEBUG)
        for frame in frames:
            if self._diverted:  # held behind an unanswered initialize, or given up
                self._hold(True, frame)
            elif type(frame) is bytes:
                if log_frames:
                    _wire.debug("<- %s", frame[:_WIRE_LOG_BYTES].decode("utf-8", "replace"))
                message = rpc.classify(frame)
                if (
                    type(message) is not rpc.Invalid
                    or message.id is not None
                    or not self._is_stray(message)
                    or not self._keep_stray(frame)  # True: not an ACP agent, closed
                ):
                    self._handle(message)
            elif frame is END:
                self._close(
                    Trigger.END_OF_INPUT, ConnectionClosed("the peer closed the connection")
                )
            else:
                assert frame is FRAME_TOO_LARGE
                limit = self._framer.max_frame_size
                self._reject(None, ErrorCode.INVALID_REQUEST, f"frame over {limit} bytes")

    @staticmethod
    def _is_stray(message: rpc.Invalid) -> bool:
        """Not a JSON-RPC message at all (not JSON, or not an object): stray output."""
        return message.code == ErrorCode.PARSE_ERROR or message.reason == rpc.NOT_AN_OBJECT

    def _keep_stray(self, frame: bytes) -> bool:
        """Keep a stray line (it is answered as usual); True when it made a client give
        up on its peer: not an ACP agent. The connection closes, failing `initialize`."""
        counted = self.our_role is Side.CLIENT and self._lifecycle.state in _BEFORE_READY
        if not self._stray.keep(frame, counted=counted):
            return False
        self._close(Trigger.NOT_AN_AGENT, self._stray.not_an_agent())
        self._diverted = True  # the rest of this read is dropped
        return True

    @property
    def stray_lines(self) -> tuple[str, ...]:
        """The last frames received that were not JSON-RPC messages (not JSON, or not an
        object), oldest first: at most 10, each cut to 1000 bytes."""
        return tuple(self._stray.last)

    def receive_message(self, message: bytes) -> None:
        """Feed one whole message from a message-framed transport (a WebSocket text
        frame, an HTTP body, a server-sent event): no newline framing, so a message may
        hold newlines; the same size limit and checks as a line. End of input is still
        `receive_data(b"")`."""
        if self._lifecycle.state is State.CLOSED:
            return
        if self._diverted:
            self._hold(False, message)
            return
        self._take_message(message)

    def _take_message(self, message: bytes) -> None:
        if len(message) > self._framer.max_frame_size:
            limit = self._framer.max_frame_size
            self._reject(None, ErrorCode.INVALID_REQUEST, f"frame over {limit} bytes")
            return
        if _wire.isEnabledFor(logging.DEBUG):
            _wire.debug("<- %s", message[:_WIRE_LOG_BYTES].decode("utf-8", "replace"))
        self._handle(rpc.classify(message))

    # ------------------------------------------------------------------ held input

    @property
    def holding(self) -> bool:
        """True while frames received after an `initialize` this side has not answered
        yet are held, unprocessed: they are processed, in order, once it is answered
        (so a request pipelined behind `initialize` meets a READY connection). A driver
        should stop reading meanwhile (ours do): at most `HELD_FRAMES` frames and
        `max_frame_size` bytes are held; past that a request is refused (-32600)."""
        return self._held is not None

    def _hold(self, line: bool, frame: object) -> None:
        held = self._held
        if held is None or held.add(line, frame):  # None: diverted for good (gave up)
            return
        message = rpc.classify(frame) if type(frame) is bytes else None
        if isinstance(message, rpc.Request):
            self._reject(message.id, ErrorCode.INVALID_REQUEST, held.refusal())
        else:
            log.debug("dropped a frame received before initialize was answered: too many")

    def _start_holding(self) -> None:
        self._held = HeldFrames(self._framer.max_frame_size)
        self._diverted = True

    def _release(self) -> None:
        """`initialize` was answered: process what was held behind it, in order. A second
        `initialize` among it (after a failed first one) holds the rest again."""
        if self._held is None:
            return
        frames = self._held.frames
        self._held = None
        self._diverted = False
        while frames:
            line, frame = frames.popleft()
            if line:
                self._take_lines((frame,))
            else:
                assert type(frame) is bytes
                self._take_message(frame)
            if self._held is not None:  # held again: the rest waits behind this one
                self._held.rest(frames)
                return
