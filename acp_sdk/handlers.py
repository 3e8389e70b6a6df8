"""Client-side handlers for what agents ask of clients, and the capabilities they imply.

Subclass `ClientHandlers` (plain methods, for `Client` and `AsyncClient`) or
`AsyncClientHandlers` (coroutines, for `AsyncClient`) and override what you serve. A client
advertises exactly what its handlers serve: `read_text_file` -> `fs.readTextFile`,
`write_text_file` -> `fs.writeTextFile`, all five terminal methods -> `terminal`,
`create_elicitation` -> `elicitation.form` (and `.url` with `elicitation_url = True`).
Several handler objects combine; for each method the first that serves it wins.

Built in (opt-in): `LocalFileSystem`, `LocalTerminals`, and permission policies
`AllowOnce`, `RejectAll`, `AskPermission`. Without a policy, `session/request_permission`
(the one request every client must answer) is rejected by default, with a warning: see
`HandlerSet`. `HandlerSet.close()` (called when a client closes) closes every handler
that has a `close()`, such as `LocalTerminals`, which kills its commands.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import os
import secrets
import signal
import stat
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from acp_sdk.errors import RequestError
from acp_sdk.schema import (
    CancelledPermissionOutcome,
    ClientCapabilities,
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
    CreateTerminalRequest,
    CreateTerminalResponse,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
    FileSystemCapabilities,
    KillTerminalRequest,
    KillTerminalResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    SessionNotification,
    TerminalExitStatus,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)

__all__ = [
    "DEFAULT_MAX_READ_BYTES",
    "DEFAULT_OUTPUT_LIMIT",
    "AllowOnce",
    "AskPermission",
    "AsyncClientHandlers",
    "ClientHandlers",
    "HandlerSet",
    "LocalFileSystem",
    "LocalTerminals",
    "RejectAll",
    "reject_by_default",
]

TERMINAL_METHODS = (
    "create_terminal",
    "terminal_output",
    "release_terminal",
    "wait_for_terminal_exit",
    "kill_terminal",
)
REQUEST_METHODS = (
    "request_permission",
    "read_text_file",
    "write_text_file",
    *TERMINAL_METHODS,
    "create_elicitation",
)
NOTIFICATION_METHODS = ("session_update", "complete_elicitation")


class ClientHandlers:
    """Base of synchronous client handlers; every method answers -32601 until overridden."""

    elicitation_url: ClassVar[bool] = False

    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        raise RequestError.method_not_found("session/request_permission")

    def read_text_file(self, params: ReadTextFileRequest) -> ReadTextFileResponse:
        raise RequestError.method_not_found("fs/read_text_file")

    def write_text_file(self, params: WriteTextFileRequest) -> WriteTextFileResponse:
        raise RequestError.method_not_found("fs/write_text_file")

    def create_terminal(self, params: CreateTerminalRequest) -> CreateTerminalResponse:
        raise RequestError.method_not_found("terminal/create")

    def terminal_output(self, params: TerminalOutputRequest) -> TerminalOutputResponse:
        raise RequestError.method_not_found("terminal/output")

    def release_terminal(self, params: ReleaseTerminalRequest) -> ReleaseTerminalResponse:
        raise RequestError.method_not_found("terminal/release")

    def wait_for_terminal_exit(
        self, params: WaitForTerminalExitRequest
    ) -> WaitForTerminalExitResponse:
        raise RequestError.method_not_found("terminal/wait_for_exit")

    def kill_terminal(self, params: KillTerminalRequest) -> KillTerminalResponse:
        raise RequestError.method_not_found("terminal/kill")

    def create_elicitation(self, params: CreateElicitationRequest) -> CreateElicitationResponse:
        raise RequestError.method_not_found("elicitation/create")

    def session_update(self, params: SessionNotification) -> None:
        """Every `session/update`, also those outside a prompt turn (optional)."""

    def complete_elicitation(self, params: CompleteElicitationNotification) -> None:
        """A URL-mode elicitation finished (optional)."""


class AsyncClientHandlers:
    """Base of coroutine client handlers, for `AsyncClient`."""

    elicitation_url: ClassVar[bool] = False

    async def request_permission(
        self, params: RequestPermissionRequest
    ) -> RequestPermissionResponse:
        raise RequestError.method_not_found("session/request_permission")

    async def read_text_file(self, params: ReadTextFileRequest) -> ReadTextFileResponse:
        raise RequestError.method_not_found("fs/read_text_file")

    async def write_text_file(self, params: WriteTextFileRequest) -> WriteTextFileResponse:
        raise RequestError.method_not_found("fs/write_text_file")

    async def create_terminal(self, params: CreateTerminalRequest) -> CreateTerminalResponse:
        raise RequestError.method_not_found("terminal/create")

    async def terminal_output(self, params: TerminalOutputRequest) -> TerminalOutputResponse:
        raise RequestError.method_not_found("terminal/output")

    async def release_terminal(self, params: ReleaseTerminalRequest) -> ReleaseTerminalResponse:
        raise RequestError.method_not_found("terminal/release")

    async def wait_for_terminal_exit(
        self, params: WaitForTerminalExitRequest
    ) -> WaitForTerminalExitResponse:
        raise RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(self, params: KillTerminalRequest) -> KillTerminalResponse:
        raise RequestError.method_not_found("terminal/kill")

    async def create_elicitation(
        self, params: CreateElicitationRequest
    ) -> CreateElicitationResponse:
        raise RequestError.method_not_found("elicitation/create")

    async def session_update(self, params: SessionNotification) -> None:
        """Every `session/update`, also those outside a prompt turn (optional)."""

    async def complete_elicitation(self, params: CompleteElicitationNotification) -> None:
        """A URL-mode elicitation finished (optional)."""


AnyHandlers = ClientHandlers | AsyncClientHandlers


def _serves(handler: Any, name: str) -> bool:
    for base in (ClientHandlers, AsyncClientHandlers):
        if isinstance(handler, base):
            return getattr(type(handler), name) is not getattr(base, name)
    return callable(getattr(handler, name, None))


log = logging.getLogger("acp_sdk.client")

_NO_PERMISSION_POLICY = (
    "the agent asked for permission (session/request_permission) and no handler answers "
    "it, so the client rejects it (the offered `reject_once` option, else the `cancelled` "
    "outcome). Pass a policy to the client to decide instead: handlers=AllowOnce(), "
    "handlers=RejectAll() or handlers=AskPermission(callback), from acp_sdk.handlers."
)


def reject_by_default(params: RequestPermissionRequest) -> RequestPermissionResponse:
    """The answer a client gives when nothing decides: reject this once.

    `session/request_permission` is a baseline client method (every client must answer
    it, no capability gates it), so an unanswered request would stall the agent's turn.
    Picks the first offered `reject_once` option. It never picks `reject_always`: that
    records a lasting decision ("reject and remember") which nobody made; with no
    `reject_once` on offer the answer is the `cancelled` outcome, which is always valid
    and which agents must handle (they end the tool call, typically the turn).
    """
    for option in params.options:
        if option.kind == "reject_once":
            return RequestPermissionResponse(
                outcome=SelectedPermissionOutcome(option_id=option.option_id)
            )
    return RequestPermissionResponse(outcome=CancelledPermissionOutcome())


class HandlerSet:
    """Several handler objects as one: for each method, the first that serves it.

    `session/request_permission` is never left unanswered: when no handler serves it,
    `get("request_permission")` returns a default that rejects (`reject_by_default`) and
    logs one warning on the "acp_sdk.client" logger, naming the policies to pass. That is
    the only baseline client request in the spec (`overview.mdx`, "Client / Baseline
    Methods"); every other client method is gated by a capability this set advertises
    only when served (`session/update` and `elicitation/complete` are notifications: they
    need no answer).
    """

    def __init__(self, handlers: AnyHandlers | Sequence[AnyHandlers] | None) -> None:
        if handlers is None:
            items: list[Any] = []
        elif isinstance(handlers, (ClientHandlers, AsyncClientHandlers)):
            items = [handlers]
        else:
            items = list(handlers)
        self._items = items
        self._by_name: dict[str, Callable[[Any], Any]] = {}
        for name in (*REQUEST_METHODS, *NOTIFICATION_METHODS):
            for handler in items:
                if _serves(handler, name):
                    self._by_name[name] = getattr(handler, name)
                    break
        self.elicitation_url = any(getattr(h, "elicitation_url", False) for h in items)
        self._lock = threading.Lock()
        self._warned = False
        self._closed = False

    def get(self, name: str) -> Callable[[Any], Any] | None:
        handler = self._by_name.get(name)
        if handler is None and name == "request_permission":
            return self._default_permission
        return handler

    def _default_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        """A plain function, so both facades can call it (the asyncio one in an executor)."""
        with self._lock:
            warn, self._warned = not self._warned, True
        if warn:
            log.warning("%s", _NO_PERMISSION_POLICY)
        return reject_by_default(params)

    def capabilities(self) -> ClientCapabilities:
        """Advertise exactly what is served (a client never promises what it cannot do)."""
        serves = self._by_name.__contains__
        elicitation = None
        if serves("create_elicitation"):
            elicitation = ElicitationCapabilities(
                form=ElicitationFormCapabilities(),
                url=ElicitationUrlCapabilities() if self.elicitation_url else None,
            )
        return ClientCapabilities(
            fs=FileSystemCapabilities(
                read_text_file=serves("read_text_file"), write_text_file=serves("write_text_file")
            ),
            terminal=all(serves(name) for name in TERMINAL_METHODS),
            elicitation=elicitation,
        )

    def close(self) -> None:
        """Call `close()` on every handler object that has one (`LocalTerminals` kills its
        commands), each object once. Idempotent; a failing `close()` is logged, not
        raised, and the others still run. `close()` must be a plain method: a coroutine
        it returns cannot be awaited here, so it is discarded with a warning."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        seen: set[int] = set()
        for handler in self._items:
            if id(handler) in seen:
                continue
            seen.add(id(handler))
            close = getattr(handler, "close", None)
            if not callable(close):
                continue
            try:
                outcome = close()
            except Exception:
                log.exception("closing the handler %r failed", handler)
                continue
            if inspect.iscoroutine(outcome):
                outcome.close()
                log.warning(
                    "%r.close() is a coroutine; HandlerSet.close() cannot await it", handler
                )


# ---------------------------------------------------------------------------- built-ins


def _refuse(reason: str, **data: Any) -> RequestError:
    """-32602, the offending value(s) and the reason in `data` (the message stays the
    generic "Invalid params", which agents show as is)."""
    return RequestError.invalid_params({**data, "reason": reason})


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(mode: int) -> str | None:
    """Why a file of this mode cannot be read or written as a text file (None: it can)."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in _FILE_KINDS:
        if test(mode):
            return f"is {kind}, not a regular file"
    return "is not a regular file"


def _checked_path(value: str, what: str) -> Path:
    """An absolute path without NUL bytes, else -32602."""
    if "\x00" in value:
        raise _refuse("contains a NUL byte", **{what: value})
    if not os.path.isabs(value):
        raise _refuse("must be an absolute path", **{what: value})
    return Path(value)


def _resolved_inside(root: Path, value: str, what: str) -> Path:
    """`value` with `..` and symlinks resolved, when that lies inside `root`, else -32602."""
    candidate = _checked_path(value, what)
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError, ValueError):  # a symlink loop, an unreadable link
        raise _refuse("cannot be resolved", **{what: value}) from None
    if resolved != root and root not in resolved.parents:
        raise _refuse("is outside the client's root", **{what: value})
    return resolved


DEFAULT_MAX_READ_BYTES = 16 << 20
"""`LocalFileSystem` refuses to read a file larger than this (16 MiB)."""

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class LocalFileSystem(ClientHandlers):
    """Serves `fs/read_text_file` and `fs/write_text_file` from one local directory tree.

    Paths must be absolute (the spec requires it), hold no NUL byte, and lie inside `root`
    once `..` and symlinks are resolved. Anything else is refused with -32602 (Invalid
    params), the path and the reason in the error's `data`; a file that does not exist
    is -32002 (Resource not found).

    Reading: only a regular file is read. A directory, FIFO, socket or device is refused
    with -32602 after an `os.stat`, before it is opened (and the open is non-blocking and
    re-checked, so a swap in between cannot block the client either). A file larger than
    `max_read_bytes` is refused with -32602 (`data` holds the size and the limit), even
    when `line`/`limit` select less: the file is read whole, as an editor buffer is. It
    must be UTF-8. `line` (1-based) and `limit` (a number of lines) select a range; lines
    end at LF, CRLF or CR, as editors count them.

    Writing: atomic. The content goes to a temporary file in the same directory, is
    flushed to disk, then renamed over the target (`os.replace`), so a crash leaves the
    old file or the new one, never half of one. An existing file keeps its permission
    bits; a symlink inside the root is written through (the link stays). A new file gets
    the usual mode (0o666 less the umask). The spec requires creating a missing file;
    missing parent directories (inside the root) are created too, as editors do when
    saving to a new path. Writing over a directory, FIFO or device is refused (-32602).

    Args:
        root: The directory agents may read and write (symlinks are resolved first).
        max_read_bytes: The largest file `read_text_file` returns, in bytes.
    """

    max_read_bytes: int = DEFAULT_MAX_READ_BYTES

    def __init__(self, root: str | os.PathLike[str], *, max_read_bytes: int | None = None) -> None:
        self.root = Path(root).resolve()
        if max_read_bytes is not None:
            if max_read_bytes < 0:
                raise ValueError("max_read_bytes must not be negative")
            self.max_read_bytes = max_read_bytes

    def _inside(self, path: str) -> Path:
        return _resolved_inside(self.root, path, "path")

    def read_text_file(self, params: ReadTextFileRequest) -> ReadTextFileResponse:
        path = self._inside(params.path)
        data = self._read_bytes(params.path, path)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _refuse("is not a UTF-8 text file", path=params.path) from None
        if params.line is not None or params.limit is not None:
            lines = io.StringIO(text, newline="").readlines()
            start = max((params.line or 1) - 1, 0)
            end = start + params.limit if params.limit is not None else len(lines)
            text = "".join(lines[start:end])
        return ReadTextFileResponse(content=text)

    def _read_bytes(self, shown: str, path: Path) -> bytes:
        limit = self.max_read_bytes
        try:
            info = os.stat(path)
        except FileNotFoundError:
            raise RequestError.resource_not_found(shown) from None
        except OSError as error:
            raise _refuse(f"cannot be read: {error.strerror}", path=shown) from None
        why = _not_regular(info.st_mode)
        if why is not None:
            raise _refuse(why, path=shown)
        if info.st_size > limit:
            raise _refuse(
                "is larger than the client reads", path=shown, size=info.st_size, limit=limit
            )
        try:
            fd = os.open(path, os.O_RDONLY | _O_NONBLOCK | _O_NOFOLLOW | _O_CLOEXEC)
        except FileNotFoundError:
            raise RequestError.resource_not_found(shown) from None
        except OSError as error:
            raise _refuse(f"cannot be read: {error.strerror}", path=shown) from None
        try:
            why = _not_regular(os.fstat(fd).st_mode)  # swapped since the stat?
            if why is not None:
                raise _refuse(why, path=shown)
            chunks: list[bytes] = []
            size = 0
            while size <= limit:  # the file may have grown since the stat
                chunk = os.read(fd, min(1 << 20, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except OSError as error:
            raise _refuse(f"cannot be read: {error.strerror}", path=shown) from None
        finally:
            os.close(fd)
        if size > limit:
            raise _refuse("is larger than the client reads", path=shown, size=size, limit=limit)
        return b"".join(chunks)

    def write_text_file(self, params: WriteTextFileRequest) -> WriteTextFileResponse:
        path = self._inside(params.path)
        try:
            data = params.content.encode("utf-8")
        except UnicodeEncodeError:
            raise _refuse("content is not valid Unicode text", path=params.path) from None
        try:
            info: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            info = None
        except OSError as error:
            raise _refuse(f"cannot be written: {error.strerror}", path=params.path) from None
        if info is not None:
            why = _not_regular(info.st_mode)
            if why is not None:
                raise _refuse(why, path=params.path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(path, data, None if info is None else stat.S_IMODE(info.st_mode))
        except OSError as error:
            reason = error.strerror or type(error).__name__
            raise _refuse(f"cannot be written: {reason}", path=params.path) from None
        return WriteTextFileResponse()


def _atomic_write(path: Path, data: bytes, mode: int | None) -> None:
    """Write `data` to a new file beside `path`, sync it, then rename it over `path`."""
    directory = path.parent
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
    while True:
        temporary = directory / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(temporary, flags, 0o666)  # the umask applies, as for a new file
            break
        except FileExistsError:
            continue
    try:
        try:
            if mode is not None and hasattr(os, "fchmod"):  # POSIX (Windows: 3.13+)
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable (POSIX)
        dir_fd = os.open(directory, os.O_RDONLY | _O_CLOEXEC)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


_CONTINUATION = 0x80
_LEAD_LENGTHS = ((0xF0, 0xF8, 4), (0xE0, 0xF0, 3), (0xC0, 0xE0, 2))


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


class AllowOnce(ClientHandlers):
    """Permission policy: pick the first `allow_once` option (else any allow option)."""

    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        for kinds in (("allow_once",), ("allow_once", "allow_always")):
            for option in params.options:
                if option.kind in kinds:
                    return RequestPermissionResponse(
                        outcome=SelectedPermissionOutcome(option_id=option.option_id)
                    )
        return RequestPermissionResponse(outcome=CancelledPermissionOutcome())


class RejectAll(ClientHandlers):
    """Permission policy: pick a reject option; cancel when none is offered."""

    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        for option in params.options:
            if option.kind in ("reject_once", "reject_always"):
                return RequestPermissionResponse(
                    outcome=SelectedPermissionOutcome(option_id=option.option_id)
                )
        return RequestPermissionResponse(outcome=CancelledPermissionOutcome())


class AskPermission(ClientHandlers):
    """Permission policy: ask a callback, which returns an option id or None (cancel)."""

    def __init__(self, ask: Callable[[RequestPermissionRequest], str | None]) -> None:
        self._ask = ask

    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        choice = self._ask(params)
        if choice is None:
            return RequestPermissionResponse(outcome=CancelledPermissionOutcome())
        if choice not in {option.option_id for option in params.options}:
            raise RequestError.internal_error(
                {"reason": "the callback chose an option not offered"}
            )
        return RequestPermissionResponse(outcome=SelectedPermissionOutcome(option_id=choice))
