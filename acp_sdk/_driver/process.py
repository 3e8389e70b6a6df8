"""The agent subprocess, for both drivers: start it in its own process group, keep the
tail of its stderr, say why it ended, and stop the whole group.

Agents are often wrappers (`npx pkg`, `sh -c ...`), so stopping only the direct child
leaves the real agent running. On POSIX the agent starts in a new session (so Ctrl-C in
the terminal reaches the client, which cancels the turn, instead of killing the agent),
whose process group is stopped as a whole:

    close its stdin -> wait close_timeout -> SIGTERM the group -> wait terminate_timeout
    -> SIGKILL the group -> wait KILL_WAIT -> reap

Each wait ends early once no process of the group is left. A process that left the
group itself (`setsid`) cannot be found this way. On Windows the agent starts in a new
process group; `terminate()` stops the direct child and `taskkill /T /F` the tree.

Waiting is the caller's: `stop_steps()` yields how long to sleep before it checks again,
so the blocking driver sleeps and the asyncio driver awaits, over the same steps.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

from acp_sdk.protocol._errors import ConnectionClosed

KILL_WAIT: Final = 1.0
"""Seconds to wait for the group to vanish after SIGKILL (it cannot refuse)."""
CLOSE_SLACK: Final = 2.0
"""`close()` returns within close_timeout + terminate_timeout + CLOSE_SLACK seconds."""
EXIT_WAIT: Final = 1.0
"""After the agent closed its output: how long to wait for its exit status and the end
of its stderr, so the error can say how it ended."""
MAX_STDERR_LINE: Final = 16 * 1024
"""A longer stderr line is cut to this many bytes plus a marker saying how much was cut."""
STDERR_TAIL: Final = 64 * 1024
"""Bytes of the most recent stderr lines kept for errors (`stderr_tail`)."""

_POSIX: Final = os.name == "posix"


def argv_of(command: Sequence[str]) -> tuple[str, ...]:
    """A command line as a tuple of arguments. A lone string is refused: `str` is a
    `Sequence[str]` to a type checker, and `tuple("my-agent --acp")` would run a
    program called "m" with one argument per character."""
    if isinstance(command, str):
        raise TypeError(f"pass the command as a list of arguments, not a string: {command!r}")
    argv = tuple(command)
    if not argv:
        raise ValueError("the agent command is empty")
    return argv


class StderrTail:
    """Splits an agent's stderr into lines for a sink, bounded in memory.

    A line longer than `MAX_STDERR_LINE` is never held whole: its start is kept and the
    rest counted, then the sink gets the start plus `" … [N bytes cut]"`. The last
    `STDERR_TAIL` bytes of lines are kept for error messages.
    """

    def __init__(self, sink: Callable[[str], Any]) -> None:
        self._sink = sink
        self._partial = bytearray()
        self._cut = 0
        self._tail: deque[str] = deque()
        self._tail_size = 0
        self.ended = False

    def feed(self, chunk: bytes) -> None:
        """Bytes from the pipe; `b""` at end of file."""
        if not chunk:
            if self._partial or self._cut:
                self._line(bytes(self._partial))
            self.ended = True
            return
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            piece = chunk[start:] if newline < 0 else chunk[start:newline]
            room = MAX_STDERR_LINE - len(self._partial)
            if len(piece) > room:
                self._cut += len(piece) - max(room, 0)
                piece = piece[: max(room, 0)]
            self._partial += piece
            if newline < 0:
                return
            self._line(bytes(self._partial))
            start = newline + 1

    def _line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace").rstrip("\r")
        if self._cut:
            line += f" … [{self._cut} bytes cut]"
        self._partial.clear()
        self._cut = 0
        self._tail.append(line)
        self._tail_size += len(line) + 1
        while self._tail_size > STDERR_TAIL and len(self._tail) > 1:
            self._tail_size -= len(self._tail.popleft()) + 1
        # A broken sink must not stop the drain (the pipe would fill and block the agent).
        with contextlib.suppress(Exception):
            self._sink(line)

    @property
    def text(self) -> str:
        """The most recent stderr lines (about `STDERR_TAIL` bytes)."""
        return "\n".join(self._tail)


class AgentProcess:
    """An agent subprocess with piped stdio, in its own process group."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None,
        cwd: str | os.PathLike[str] | None,
        stderr: Callable[[str], Any],
    ) -> None:
        # POSIX: its own session, so Ctrl-C in the terminal reaches us (we send
        # session/cancel), not the agent, and its whole group can be stopped at close.
        # Windows: its own process group, for the same reasons.
        import subprocess  # here, not at the top: `from acp_sdk import Client` skips it

        group_flag: int = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        try:
            self.popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                bufsize=0,
                start_new_session=_POSIX,
                creationflags=0 if _POSIX else group_flag,
            )
        except OSError as error:
            raise start_error(error, argv, cwd) from None
        self.pid = self.popen.pid
        self.stderr = StderrTail(stderr)

    @property
    def stdin(self) -> Any:
        return self.popen.stdin

    @property
    def stdout(self) -> Any:
        return self.popen.stdout

    @property
    def stderr_pipe(self) -> Any:
        return self.popen.stderr

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def exit_reason(self, stray_lines: Sequence[str] = ()) -> ConnectionClosed:
        """Why the connection ended, as far as the process tells (exit code or signal,
        the tail of its stderr, and `stray_lines`: what it wrote on stdout that was not
        JSON-RPC)."""
        code = self.popen.poll()
        exit_code, signal_number = (None, -code) if code is not None and code < 0 else (code, None)
        return ConnectionClosed.agent_exited(
            exit_code=exit_code,
            signal=signal_number,
            stderr_tail=self.stderr.text,
            stdout_tail="\n".join(stray_lines),
        )

    def exit_steps(self, timeout: float = EXIT_WAIT) -> Iterator[float]:
        """Sleeps until the process exited and its stderr ended, at most `timeout`."""
        yield from _poll(lambda: self.popen.poll() is not None and self.stderr.ended, timeout)

    def stop_steps(self, close_timeout: float, terminate_timeout: float) -> Iterator[float]:
        """Sleeps (yielded) between the escalation steps; the caller closed stdin first."""
        yield from _poll(self._group_gone, close_timeout)
        if not self._group_gone():
            self._signal(signal.SIGTERM)
            yield from _poll(self._group_gone, terminate_timeout)
        if not self._group_gone():
            self._signal(getattr(signal, "SIGKILL", signal.SIGTERM))
            yield from _poll(self._group_gone, KILL_WAIT)
        self.popen.poll()  # reap

    def abandon_steps(self, terminate_timeout: float) -> Iterator[float]:
        """Sleeps (yielded) while stopping an agent nothing was attached to (opening the
        client failed after the start): pipes closed, SIGTERM at once, SIGKILL after
        `terminate_timeout`; reaped."""
        self.close_pipes()
        yield from self.stop_steps(0.0, terminate_timeout)

    def _group_gone(self) -> bool:
        if self.popen.poll() is None:
            return False
        if not _POSIX:  # pragma: no cover - Windows: only the direct child is known
            return True
        try:
            os.killpg(self.pid, 0)
        except (ProcessLookupError, PermissionError):
            return True
        return False

    def _signal(self, signum: int) -> None:
        if _POSIX:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signum)
            return
        # pragma: no cover - Windows: the direct child, then the whole tree.
        with contextlib.suppress(OSError):
            if signum == signal.SIGTERM:
                self.popen.terminate()
            else:
                import subprocess

                subprocess.run(
                    ["taskkill", "/T", "/F", "/PID", str(self.pid)],
                    capture_output=True,
                    check=False,
                    timeout=KILL_WAIT,
                )
                self.popen.kill()

    def close_pipes(self, *, stdin: bool = True, stdout: bool = True, stderr: bool = True) -> None:
        chosen = (
            (stdin, self.popen.stdin),
            (stdout, self.popen.stdout),
            (stderr, self.popen.stderr),
        )
        for wanted, stream in chosen:
            if wanted and stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()


def start_error(error: OSError, argv: Sequence[str], cwd: str | os.PathLike[str] | None) -> OSError:
    """The error of a failed start, of the same type, saying whether the working
    directory or the program failed: `subprocess` reports a missing `cwd` as a bare
    "No such file or directory" naming the directory, easily read as the program."""
    where = os.fspath(cwd) if cwd is not None else None
    about_cwd = where is not None and error.filename == where
    if about_cwd:
        problems = {
            errno.ENOENT: "the agent's working directory does not exist",
            errno.ENOTDIR: "the agent's working directory is not a directory",
            errno.EACCES: "the agent's working directory is not accessible",
        }
    else:
        problems = {
            errno.ENOENT: "the agent command was not found",
            errno.EACCES: "the agent command is not executable (permission denied)",
            errno.ENOEXEC: "the agent command is not an executable program (exec format error)",
        }
    what = problems.get(error.errno or 0)
    if not about_cwd and error.errno == errno.ENOENT and _exists(error.filename):
        what = "the agent command's interpreter (its #! line) was not found"
    elif not about_cwd and error.errno == errno.EACCES and _is_folder(error.filename):
        what = "the agent command is a directory"
    elif not about_cwd and argv and not argv[0]:
        what = "the agent command is empty"
    if what is None:
        subject = "the agent's working directory" if about_cwd else "the agent command"
        what = f"{subject}: {error.strerror or error}"
    clearer = type(error)(error.errno, what)
    clearer.filename = where if about_cwd else (error.filename or (argv[0] if argv else None))
    return clearer


def start_failure(error: OSError, cwd: str | os.PathLike[str] | None = None) -> str:
    """A failed start (`start_error`) in the words of `start_problem`, for one line:
    `my-agent not found`, `the directory /x does not exist`."""
    name = str(error.filename) if error.filename is not None else "the agent command"
    if cwd is not None and error.filename == os.fspath(cwd):
        return {
            errno.ENOENT: f"the directory {name} does not exist",
            errno.ENOTDIR: f"{name} is not a directory",
            errno.EACCES: f"the directory {name} is not accessible",
        }.get(error.errno or 0, f"the directory {name}: {error.strerror or error}")
    if error.errno == errno.ENOENT and _exists(error.filename):
        return f"{name}: its interpreter (the #! line) was not found"
    if error.errno == errno.EACCES and _is_folder(error.filename):
        return f"{name} is a directory"
    if not name:
        return "the agent command is empty"
    return {
        errno.ENOENT: f"{name} not found",
        errno.EACCES: f"{name} is not executable",
        errno.ENOEXEC: f"{name} is not an executable program",
    }.get(error.errno or 0, f"{name}: {error.strerror or error}")


def _is_folder(program: object) -> bool:
    """Exec said EACCES for a directory (`./`, a folder on the PATH named like it)."""
    import shutil

    if not isinstance(program, str) or not program:
        return False
    found = program if os.path.dirname(program) else shutil.which(program, mode=os.F_OK)
    return found is not None and os.path.isdir(found)


def _exists(program: object) -> bool:
    """A program that exists although exec said ENOENT: a script whose #! names a
    missing interpreter."""
    if not isinstance(program, str) or not program:
        return False
    if os.path.dirname(program):
        return os.path.isfile(program)
    import shutil

    return shutil.which(program) is not None


def start_problem(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> str | None:
    """Why `argv` cannot be started, found without starting it (the program looked up
    as `subprocess` would: on the PATH of `env`, or relative to `cwd`); None if it
    looks startable. For checking a command before it is needed (`serve`, `check`)."""
    if cwd is not None:
        where = os.fspath(cwd)
        if not os.path.exists(where):
            return f"the directory {where} does not exist"
        if not os.path.isdir(where):
            return f"{where} is not a directory"
    program = argv[0] if argv else ""
    if not program:
        return "the agent command is empty"
    if os.path.dirname(program):
        candidates = [os.path.join(os.fspath(cwd), program) if cwd is not None else program]
    else:
        candidates = [os.path.join(folder, program) for folder in os.get_exec_path(env)]
    problem = f"{program} not found"
    for candidate in candidates:
        if os.path.isdir(candidate):
            problem = f"{program} is a directory"
        elif os.path.exists(candidate):
            if os.access(candidate, os.X_OK):
                return None
            problem = f"{program} is not executable"
    return problem


def _poll(done: Callable[[], bool], timeout: float) -> Iterator[float]:
    """Yield sleeps (5 ms growing to 50 ms) until `done()` or `timeout` seconds passed."""
    deadline = time.monotonic() + timeout
    step = 0.005
    while not done():
        left = deadline - time.monotonic()
        if left <= 0:
            return
        yield min(step, left)
        step = min(step * 2, 0.05)


def log_agent_stderr(line: str) -> None:
    """Where an agent's stderr goes by default: a logger, line by line."""
    logging.getLogger("acp_sdk.agent.stderr").info("%s", line)
