"""`python -m acp_sdk record --out FILE.jsonl -- CMD ...`: a transparent stdio relay that
records every frame.

Put it in front of an agent command (an editor's agent settings): it starts the agent and
passes bytes both ways unchanged, as soon as they are read (frames of any size, partial
lines, non-JSON output), passes the agent's stderr through, forwards SIGINT, SIGTERM and
SIGHUP to the agent and exits as the agent did (its exit code, or the same signal).

The recording is JSON lines, lossless: the first line is a header, then one line per frame
(a frame is the bytes up to, not including, a newline) in the order they were read:

    {"acp_sdk_recording": 1, "argv": [...], "started": "2026-...Z"}
    {"t": 0.0012, "from": "client", "text": "{\\"jsonrpc\\":\\"2.0\\",...}"}
    {"t": 0.0410, "from": "agent", "text": "..."}
    {"t": 0.0420, "from": "stderr", "text": "a line the agent wrote to its stderr"}
    {"t": 1.2000, "from": "agent", "text": "bytes after the last newline", "partial": true}
    {"t": 1.2100, "exit": 0}        (or {"t": ..., "signal": 15})

`t` is seconds since the relay started; `from` is who wrote the frame; a frame that is not
valid UTF-8 is stored as `"b64"` (base64) instead of `"text"`. Joining a direction's
frames with newlines (no newline after a `partial` one) gives its bytes back exactly.

Latency: each chunk is written on as soon as it is read and queued for the recording
(one queue operation), before it is split into frames; the recording is written by its
own thread (see docs/cli.md for the bound
measured by bench/record_latency.py).
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, Any, Final

import orjson

CHUNK: Final = 1 << 16
FORMAT_VERSION: Final = 1
FORWARDED: Final = ("SIGINT", "SIGTERM", "SIGHUP")
SWITCH_INTERVAL: Final = 0.0002


def frame_entry(t: float, origin: str, frame: bytes, *, partial: bool = False) -> dict[str, Any]:
    """One recorded frame: its text, or base64 when it is not UTF-8."""
    entry: dict[str, Any] = {"t": round(t, 6), "from": origin}
    try:
        entry["text"] = frame.decode("utf-8")
    except UnicodeDecodeError:
        entry["b64"] = base64.b64encode(frame).decode("ascii")
    if partial:
        entry["partial"] = True
    return entry


def frame_bytes(entry: dict[str, Any]) -> bytes:
    """The exact bytes of a recorded frame (without its newline)."""
    if "b64" in entry:
        return base64.b64decode(entry["b64"])
    text: str = entry.get("text", "")
    return text.encode("utf-8")


class _Recorder:
    """The recording file, written by its own thread: the relay threads only hand it the
    chunks they already passed on (one queue operation per chunk); splitting them into
    frames and writing the JSON lines happens here, off the relay's path."""

    def __init__(self, path: str, argv: Sequence[str]) -> None:
        self.start = time.monotonic()
        self._file: IO[bytes] = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._queue: queue.SimpleQueue[tuple[float, str, bytes] | dict[str, Any] | None] = (
            queue.SimpleQueue()
        )
        self._partial: dict[str, bytearray] = {}
        started = datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")
        self.put({"acp_sdk_recording": FORMAT_VERSION, "argv": list(argv), "started": started})
        self._thread = threading.Thread(target=self._run, name="acp-record-writer", daemon=True)
        self._thread.start()

    def now(self) -> float:
        return time.monotonic() - self.start

    def put(self, entry: dict[str, Any]) -> None:
        self._queue.put(entry)

    def chunk(self, t: float, origin: str, data: bytes) -> None:
        """Bytes read from `origin` at `t`; `b""` at its end of file."""
        self._queue.put((t, origin, data))

    def _lines(self, t: float, origin: str, chunk: bytes) -> list[bytes]:
        partial = self._partial.setdefault(origin, bytearray())
        if not chunk:
            if not partial:
                return []
            line = orjson.dumps(frame_entry(t, origin, bytes(partial), partial=True))
            partial.clear()
            return [line]
        lines: list[bytes] = []
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                partial += chunk[start:]
                return lines
            if partial:
                frame = bytes(partial) + chunk[start:newline]
                partial.clear()
            else:
                frame = chunk[start:newline]
            lines.append(orjson.dumps(frame_entry(t, origin, frame)))
            start = newline + 1

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            # Write what is queued, then flush once: a burst costs one flush, and the file
            # is complete up to the last frame relayed when the agent is killed.
            lines: list[bytes] = []
            while item is not None:
                if isinstance(item, tuple):
                    lines += self._lines(*item)
                else:
                    lines.append(orjson.dumps(item))
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if lines:
                self._file.write(b"\n".join(lines) + b"\n")
            self._file.flush()
            if item is None:
                return

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        self._file.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _pump(source: int, target: int, recorder: _Recorder, origin: str) -> None:
    """Copy `source` to `target` chunk by chunk, each chunk on as soon as it is read."""
    broken = False
    while True:
        try:
            chunk = os.read(source, CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            break
        # Queued for the recording before it is passed on: whatever it causes on the other
        # side is read after this, so the recording keeps cause before effect across the
        # two directions (one queue put, about a microsecond).
        recorder.chunk(recorder.now(), origin, chunk)
        if not broken:
            try:
                _write_all(target, chunk)
            except OSError:  # the reader went away: keep draining (and recording) the source
                broken = True
    recorder.chunk(recorder.now(), origin, b"")


def run(out: str, argv: Sequence[str]) -> int:
    """Relay stdio between our caller and `argv`, recording into `out`; returns the exit
    code (or re-raises the agent's fatal signal on ourselves)."""
    # The writer thread holds the GIL while it formats a burst; a relay thread woken by
    # new bytes waits for it at most this long (the default, 5 ms, shows as latency).
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        recorder = _Recorder(out, argv)
    except OSError as error:
        print(f"error: cannot write the recording {out}: {error.strerror}", file=sys.stderr)
        return 2
    try:
        # Its own session: a Ctrl-C meant for the editor's group reaches the agent once,
        # through us, not twice.
        child = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            start_new_session=os.name == "posix",
        )
    except OSError as error:
        recorder.close()
        from acp_sdk._driver.process import start_failure

        print(f"error: cannot start the agent: {start_failure(error)}", file=sys.stderr)
        return 127 if isinstance(error, FileNotFoundError) else 126
    child_in, child_out, child_err = child.stdin, child.stdout, child.stderr
    assert child_in is not None
    assert child_out is not None
    assert child_err is not None

    def forward(signum: int, _frame: Any) -> None:
        with contextlib.suppress(OSError):
            child.send_signal(signum)

    previous: dict[int, Any] = {}
    for name in FORWARDED:
        number = getattr(signal, name, None)
        if number is not None:
            previous[number] = signal.signal(number, forward)

    def close_child_stdin() -> None:
        with contextlib.suppress(OSError):
            child_in.close()

    def client_to_agent() -> None:
        _pump(sys.stdin.fileno(), child_in.fileno(), recorder, "client")
        close_child_stdin()  # our input ended: so does the agent's

    def agent_stderr() -> None:
        _pump(child_err.fileno(), sys.stderr.fileno(), recorder, "stderr")

    # The stdin reader may block forever (an editor that keeps its end open): a daemon
    # thread, left behind when the agent is gone.
    inbound = threading.Thread(target=client_to_agent, name="acp-record-in", daemon=True)
    errors = threading.Thread(target=agent_stderr, name="acp-record-err", daemon=True)
    inbound.start()
    errors.start()
    try:
        _pump(child_out.fileno(), sys.stdout.fileno(), recorder, "agent")
        errors.join()
        code = child.wait()  # restarted after our signal handler runs (PEP 475)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    ended: dict[str, Any] = {"t": round(recorder.now(), 6)}
    if code < 0:
        ended["signal"] = -code
    else:
        ended["exit"] = code
    recorder.put(ended)
    recorder.close()
    for stream in (child_out, child_err):
        with contextlib.suppress(OSError):
            stream.close()
    if code < 0 and os.name == "posix":
        # Die of the same signal, so the editor sees what it would have seen.
        sys.stdout.flush()
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code if code >= 0 else 128 - code
