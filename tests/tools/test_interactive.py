"""Ctrl-C and permission questions, as a person meets them: SIGINT, and a real terminal
(a pty that is the CLI's controlling terminal, so Ctrl-C is the byte 0x03)."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import IO

import pytest

from tests._parallel import load_factor

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and ptys"),
]
CLI = [sys.executable, "-m", "acp_sdk"]
AGENT = [sys.executable, "-m", "acp_sdk", "agent"]
PEER = [sys.executable, str(Path(__file__).with_name("peer.py"))]
ROOT = Path(__file__).resolve().parents[2]


class Output:
    """Everything read from one stream, so far; `expect` waits for a piece of it."""

    def __init__(self, read: IO[bytes] | int) -> None:
        self.data = b""
        self.changed = threading.Condition()
        self._read = read
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        while True:
            try:
                if isinstance(self._read, int):
                    chunk = os.read(self._read, 4096)
                else:
                    chunk = self._read.read1(4096)  # type: ignore[attr-defined]
            except OSError:  # EIO: the pty's other side is closed
                chunk = b""
            with self.changed:
                if chunk:
                    self.data += chunk
                self.changed.notify_all()
            if not chunk:
                return

    @property
    def text(self) -> str:
        return self.data.decode(errors="replace")

    def expect(self, piece: str, timeout: float = 20.0, after: int = 0) -> int:
        """Wait for `piece` (after offset `after`); returns the offset just past it."""
        wanted = piece.encode()
        with self.changed:
            ok = self.changed.wait_for(lambda: wanted in self.data[after:], timeout=timeout)
        assert ok, f"{piece!r} not in {self.text!r}"
        return self.data.index(wanted, after) + len(wanted)


def pipes(
    *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], Output, Output]:
    process = subprocess.Popen(
        [*CLI, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    return process, Output(process.stdout), Output(process.stderr)


def _controlling_terminal() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # after setsid (start_new_session)


def terminal(*args: str) -> tuple[subprocess.Popen[bytes], Output, int]:
    """The CLI on a pty: stdin, stdout and stderr are the terminal, Ctrl-C is 0x03."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "dumb"}
    process = subprocess.Popen(
        [*CLI, *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=ROOT,
        env=env,
        start_new_session=True,
        preexec_fn=_controlling_terminal,
    )
    os.close(slave)
    return process, Output(master), master


def finish(process: subprocess.Popen[bytes], *outputs: Output, timeout: float = 15.0) -> int:
    """Wait for the CLI to exit (kill it after `timeout`), then close its streams."""
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    finally:
        for output in outputs:
            output.thread.join(5)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ctrl_c_cancels_the_turn_and_shows_the_stop_reason() -> None:
    process, out, err = pipes("prompt", "go", "--", *PEER, "slow")
    out.expect("started")
    process.send_signal(signal.SIGINT)
    assert finish(process, out, err) == 0
    assert "stopping" in out.text  # the agent got session/cancel
    assert "[cancelled]" in out.text
    assert "cancelled: waiting for the agent to stop" in err.text
    assert "[None]" not in out.text


def test_a_second_ctrl_c_exits_at_once_and_closes_the_agent(tmp_path: Path) -> None:
    log = tmp_path / "pids"
    env = {**os.environ, "ACP_PEER_LOG": str(log)}
    process, out, err = pipes("prompt", "go", "--", *PEER, "stubborn", env=env)
    out.expect("started")
    process.send_signal(signal.SIGINT)
    err.expect("Ctrl-C again to quit")
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    assert finish(process, out, err) == 130
    assert time.monotonic() - started < 2.0 * load_factor()  # the stubborn agent: 60 s
    assert "[None]" not in out.text
    assert "Traceback" not in err.text
    pid = int(log.read_text().split()[0])
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_terminal_asks_permission() -> None:
    process, out, master = terminal("prompt", "permission", "--", *AGENT)
    out.expect("2) Reject (reject_once)")
    out.expect("choose a number")
    os.write(master, b"1\r")
    out.expect("Permission granted.")
    out.expect("[end_turn]")
    assert finish(process) == 0
    os.close(master)


def reading_through_readline(master: int, timeout: float = 20.0) -> None:
    """Wait until readline waits for a key: it takes the terminal out of canonical mode
    just before. A person presses Ctrl-C at a question long after that; a signal taken
    in the microseconds before readline waits is only seen at the next key."""
    deadline = time.monotonic() + timeout
    while termios.tcgetattr(master)[3] & termios.ICANON:
        assert time.monotonic() < deadline, "readline never started reading"
        time.sleep(0.01)


def test_ctrl_c_at_a_permission_question_cancels_and_leaves_one_reader() -> None:
    pytest.importorskip("readline")
    process, out, master = terminal("chat", "--", *AGENT)
    out.expect("> ")
    os.write(master, b"permission\r")
    mark = out.expect("choose a number")
    reading_through_readline(master)
    os.write(master, b"\x03")
    mark = out.expect("Permission for Delete build/: cancelled", after=mark)
    mark = out.expect("[cancelled]", after=mark)
    mark = out.expect("> ", after=mark)
    # The chat prompt, alone on stdin, reads the next line: a second reader would eat it.
    os.write(master, b"echo after the question\r")
    mark = out.expect("after the question", after=mark)
    mark = out.expect("[end_turn]", after=mark)
    out.expect("> ", after=mark)
    os.write(master, b"\x04")  # Ctrl-D exits
    assert finish(process) == 0
    os.close(master)


def test_ctrl_c_in_a_terminal_chat_cancels_only_the_turn() -> None:
    process, out, master = terminal("chat", "--", *PEER, "slow")
    out.expect("> ")
    os.write(master, b"go\r")
    mark = out.expect("started")
    os.write(master, b"\x03")
    mark = out.expect("stopping", after=mark)
    mark = out.expect("[cancelled]", after=mark)
    out.expect("> ", after=mark)
    os.write(master, b"\x04")
    assert finish(process) == 0
    os.close(master)


def test_timeout_during_a_permission_question() -> None:
    process, out, master = terminal("prompt", "--timeout", "1", "permission", "--", *AGENT)
    out.expect("choose a number")
    assert finish(process, out) == 4  # nobody answered: the question is answered cancelled
    assert "timed out" in out.text
    assert "Permission for Delete build/: cancelled" in out.text
    os.close(master)
