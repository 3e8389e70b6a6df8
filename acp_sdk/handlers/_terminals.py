"""`LocalTerminals`: the `terminal/*` methods over local processes, each in its own
process group, with bounded output (see its docstring)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path

from acp_sdk.handlers._base import ClientHandlers
from acp_sdk.handlers._files import _checked_path, _refuse, _resolved_inside
from acp_sdk.protocol._errors import RequestError
from acp_sdk.schema import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    KillTerminalRequest,
    KillTerminalResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
)

_CONTINUATION = 0x80
_LEAD_LENGTHS = ((0xF0, 0xF8, 4), (0xE0, 0xF0, 3), (0xC0, 0xE0, 2))

log = logging.getLogger("acp_sdk.client")


def _incomplete_tail(data: bytes | bytearray) -> int:
    """How many bytes at the end of `data` start a UTF-8 character not yet complete."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != _CONTINUATION:  # the last character's first byte
            for low, high, length in _LEAD_LENGTHS:
                if low <= byte < high:
                    return back if back < length else 0
            return 0
    return 0


def _drop_to_boundary(data: bytearray, start: int) -> None:
    """Delete `data[:start]` and then any continuation bytes (at most 3) that would
    begin the rest mid-character."""
    end = start
    while end < len(data) and end - start < 3 and data[end] & 0xC0 == _CONTINUATION:
        end += 1
    del data[:end]


class _Terminal:
    """One running command, its raw output kept within `limit` bytes (the newest win)."""

    __slots__ = ("limit", "lock", "output", "process", "reader", "truncated")

    def __init__(self, process: subprocess.Popen[bytes], limit: int) -> None:
        self.process = process
        self.limit = limit
        self.output = bytearray()
        self.truncated = False
        self.lock = threading.Lock()
        self.reader: threading.Thread | None = None

    def pump(self) -> None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self.lock:
                self.output += chunk
                if len(self.output) > self.limit:
                    _drop_to_boundary(self.output, len(self.output) - self.limit)
                    self.truncated = True

    def text(self, finished: bool) -> tuple[str, bool]:
        """The output as text, and whether it was truncated. While the command may still
        write, an incomplete last character is held back (its rest is on its way); only
        bytes that are invalid UTF-8 become U+FFFD. The text stays within `limit` bytes
        of UTF-8 even when replacement characters are longer than the bytes they stand
        for, cut again from the beginning at a character boundary if need be."""
        with self.lock:
            raw = bytes(self.output)
            truncated = self.truncated
        if not finished:
            raw = raw[: len(raw) - _incomplete_tail(raw)]
        text = raw.decode("utf-8", errors="replace")
        encoded = text.encode("utf-8")
        if len(encoded) > self.limit:
            cut = bytearray(encoded)
            _drop_to_boundary(cut, len(cut) - self.limit)
            text = cut.decode("utf-8")
            truncated = True
        return text, truncated

    def status(self) -> TerminalExitStatus | None:
        code = self.process.poll()
        if code is None:
            return None
        return TerminalExitStatus(
            exit_code=code if code >= 0 else None, signal=None if code >= 0 else str(-code)
        )

    def kill(self) -> None:
        """Kill the command's whole process group (what it started in the background
        too), even once the command itself has exited."""
        if os.name == "posix":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()

    def dispose(self) -> None:
        """Kill, reap, stop reading, close the pipe."""
        self.kill()
        self.process.wait()
        if self.reader is not None:
            self.reader.join(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()


DEFAULT_OUTPUT_LIMIT = 1 << 20
"""Bytes of output `LocalTerminals` keeps per terminal, at most (1 MiB)."""


class LocalTerminals(ClientHandlers):
    """Runs `terminal/*` commands as real local subprocesses, output capped per terminal.

    Each command runs in a session (process group) of its own; `terminal/kill`,
    `terminal/release` and `close()` kill that whole group, so what the command started
    in the background dies with it. Call `close()` (the clients do, through
    `HandlerSet.close()`) to kill and reap every terminal still open; it is idempotent,
    and afterwards `terminal/create` is refused.

    Output: stdout and stderr together, as raw bytes, of which the newest
    `outputByteLimit` bytes are kept. The agent's limit is clamped to `max_output_limit`
    (it cannot make the client hold unbounded output); without one, `output_limit`
    applies. Truncation drops the oldest bytes and never splits a UTF-8 character
    (spec: terminals.mdx); only truly invalid bytes are shown as U+FFFD.

    Environment: as an editor's terminal, the command inherits the client process's
    environment, plus the agent's `env` variables (which win). Passing `env=` replaces
    that inherited base: the command then sees exactly `env` plus the agent's variables.

    Working directory: the agent's `cwd` must be absolute (the spec requires it) and an
    existing directory; when `root` is given it must lie inside `root` (symlinks resolved)
    and defaults to `root`. Otherwise -32602 (Invalid params), the reason in `data`.
    Without `root` and `cwd`, commands run in the client's working directory.

    Args:
        output_limit: Bytes of output kept when the agent sets no `outputByteLimit`.
        max_output_limit: The most bytes of output kept per terminal, whatever the agent
            asks for.
        root: Confine the commands' working directories to this directory tree.
        env: The base environment of every command (default: the client's own).
    """

    def __init__(
        self,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        *,
        max_output_limit: int = DEFAULT_OUTPUT_LIMIT,
        root: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if output_limit < 0 or max_output_limit < 0:
            raise ValueError("output limits must not be negative")
        self.output_limit = output_limit
        self.max_output_limit = max_output_limit
        self.root = None if root is None else Path(root).resolve()
        self.env = None if env is None else dict(env)
        self._terminals: dict[str, _Terminal] = {}
        self._next = 0
        self._lock = threading.Lock()
        self._closed = False

    def _get(self, terminal_id: str) -> _Terminal:
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.resource_not_found(terminal_id)
        return terminal

    def _cwd(self, cwd: str | None) -> str | None:
        if cwd is None:
            return None if self.root is None else str(self.root)
        if self.root is not None:
            resolved = _resolved_inside(self.root, cwd, "cwd")
        else:
            resolved = _checked_path(cwd, "cwd")
        if not resolved.is_dir():
            raise _refuse("is not an existing directory", cwd=cwd)
        return str(resolved)

    def create_terminal(self, params: CreateTerminalRequest) -> CreateTerminalResponse:
        if self._closed:
            raise RequestError.internal_error({"reason": "the client's terminals are closed"})
        cwd = self._cwd(params.cwd)
        env = dict(os.environ) if self.env is None else dict(self.env)
        env.update({variable.name: variable.value for variable in params.env})
        wanted = params.output_byte_limit
        limit = min(self.output_limit if wanted is None else wanted, self.max_output_limit)
        try:
            process = subprocess.Popen(
                [params.command, *params.args],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except (OSError, ValueError) as error:  # ValueError: a NUL byte, a bad env name
            reason = getattr(error, "strerror", None) or str(error)
            raise _refuse(f"cannot be started: {reason}", command=params.command) from None
        terminal = _Terminal(process=process, limit=limit)
        terminal.reader = threading.Thread(
            target=terminal.pump, daemon=True, name="acp-terminal-output"
        )
        terminal.reader.start()
        terminal_id = ""
        with self._lock:
            closed = self._closed
            if not closed:
                self._next += 1
                terminal_id = f"term_{self._next}"
                self._terminals[terminal_id] = terminal
        if closed:  # closed while starting: this one must not outlive close()
            terminal.dispose()
            raise RequestError.internal_error({"reason": "the client's terminals are closed"})
        return CreateTerminalResponse(terminal_id=terminal_id)

    def terminal_output(self, params: TerminalOutputRequest) -> TerminalOutputResponse:
        terminal = self._get(params.terminal_id)
        status = terminal.status()
        finished = False
        if status is not None and terminal.reader is not None:
            terminal.reader.join(timeout=1)  # the last output, unless a child holds the pipe
            finished = not terminal.reader.is_alive()
        text, truncated = terminal.text(finished)
        return TerminalOutputResponse(output=text, truncated=truncated, exit_status=status)

    def wait_for_terminal_exit(
        self, params: WaitForTerminalExitRequest
    ) -> WaitForTerminalExitResponse:
        terminal = self._get(params.terminal_id)
        terminal.process.wait()
        status = terminal.status()
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    def kill_terminal(self, params: KillTerminalRequest) -> KillTerminalResponse:
        self._get(params.terminal_id).kill()
        return KillTerminalResponse()

    def release_terminal(self, params: ReleaseTerminalRequest) -> ReleaseTerminalResponse:
        terminal = self._get(params.terminal_id)
        with self._lock:
            self._terminals.pop(params.terminal_id, None)
        terminal.dispose()
        return ReleaseTerminalResponse()

    def close(self) -> None:
        """Kill every terminal still open (each whole process group) and reap them."""
        with self._lock:
            self._closed = True
            terminals = list(self._terminals.values())
            self._terminals.clear()
        for terminal in terminals:
            try:
                terminal.dispose()
            except Exception:
                log.exception("killing a terminal failed")
