"""Client-side handlers for what agents ask of clients, and the capabilities they imply.

Subclass `ClientHandlers` (plain methods, for `Client` and `AsyncClient`) or
`AsyncClientHandlers` (coroutines, for `AsyncClient`) and override what you serve. A client
advertises exactly what its handlers serve: `read_text_file` -> `fs.readTextFile`,
`write_text_file` -> `fs.writeTextFile`, all five terminal methods -> `terminal`,
`create_elicitation` -> `elicitation.form` (and `.url` with `elicitation_url = True`).
Several handler objects combine; for each method the first that serves it wins.

Built in (opt-in): `LocalFileSystem`, `LocalTerminals`, and permission policies
`AllowOnce`, `RejectAll`, `AskPermission`.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Sequence
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
    "AllowOnce",
    "AskPermission",
    "AsyncClientHandlers",
    "ClientHandlers",
    "HandlerSet",
    "LocalFileSystem",
    "LocalTerminals",
    "RejectAll",
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


class HandlerSet:
    """Several handler objects as one: for each method, the first that serves it."""

    def __init__(self, handlers: AnyHandlers | Sequence[AnyHandlers] | None) -> None:
        if handlers is None:
            items: list[Any] = []
        elif isinstance(handlers, (ClientHandlers, AsyncClientHandlers)):
            items = [handlers]
        else:
            items = list(handlers)
        self._by_name: dict[str, Callable[[Any], Any]] = {}
        for name in (*REQUEST_METHODS, *NOTIFICATION_METHODS):
            for handler in items:
                if _serves(handler, name):
                    self._by_name[name] = getattr(handler, name)
                    break
        self.elicitation_url = any(getattr(h, "elicitation_url", False) for h in items)

    def get(self, name: str) -> Callable[[Any], Any] | None:
        return self._by_name.get(name)

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


# ---------------------------------------------------------------------------- built-ins


class LocalFileSystem(ClientHandlers):
    """Serves `fs/*` from a local directory; refuses paths outside it.

    Args:
        root: The directory agents may read and write (symlinks are resolved first).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()

    def _inside(self, path: str) -> Path:
        candidate = Path(path)
        if not candidate.is_absolute():
            raise RequestError.invalid_params({"path": "must be absolute"})
        resolved = candidate.resolve()
        if resolved != self.root and self.root not in resolved.parents:
            raise RequestError.invalid_params({"path": "outside the client's root"})
        return resolved

    def read_text_file(self, params: ReadTextFileRequest) -> ReadTextFileResponse:
        path = self._inside(params.path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RequestError.resource_not_found(params.path) from None
        except (OSError, UnicodeDecodeError):
            raise RequestError.invalid_params({"path": "not a readable text file"}) from None
        if params.line is not None or params.limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((params.line or 1) - 1, 0)
            end = start + params.limit if params.limit is not None else len(lines)
            text = "".join(lines[start:end])
        return ReadTextFileResponse(content=text)

    def write_text_file(self, params: WriteTextFileRequest) -> WriteTextFileResponse:
        path = self._inside(params.path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(params.content, encoding="utf-8")
        except OSError:
            raise RequestError.invalid_params({"path": "not writable"}) from None
        return WriteTextFileResponse()


class _Terminal:
    """One running command, its output kept within `limit` bytes (the newest bytes win)."""

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
        for chunk in iter(lambda: os.read(fd, 65536), b""):
            with self.lock:
                self.output += chunk
                if len(self.output) > self.limit:
                    del self.output[: len(self.output) - self.limit]
                    # never start in the middle of a UTF-8 character
                    while self.output and (self.output[0] & 0xC0) == 0x80:
                        del self.output[0]
                    self.truncated = True

    def status(self) -> TerminalExitStatus | None:
        code = self.process.poll()
        if code is None:
            return None
        return TerminalExitStatus(
            exit_code=code if code >= 0 else None, signal=None if code >= 0 else str(-code)
        )


class LocalTerminals(ClientHandlers):
    """Runs `terminal/*` commands as real local subprocesses, output capped per terminal.

    Args:
        output_limit: Bytes of output kept when the agent sets no `outputByteLimit`.
    """

    def __init__(self, output_limit: int = 1 << 20) -> None:
        self.output_limit = output_limit
        self._terminals: dict[str, _Terminal] = {}
        self._next = 0
        self._lock = threading.Lock()

    def _get(self, terminal_id: str) -> _Terminal:
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.resource_not_found(terminal_id)
        return terminal

    def create_terminal(self, params: CreateTerminalRequest) -> CreateTerminalResponse:
        env = dict(os.environ)
        env.update({variable.name: variable.value for variable in params.env})
        try:
            process = subprocess.Popen(
                [params.command, *params.args],
                cwd=params.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        except OSError:
            raise RequestError.invalid_params({"command": "cannot be started"}) from None
        limit = (
            params.output_byte_limit if params.output_byte_limit is not None else self.output_limit
        )
        terminal = _Terminal(process=process, limit=limit)
        terminal.reader = threading.Thread(
            target=terminal.pump, daemon=True, name="acp-terminal-output"
        )
        terminal.reader.start()
        with self._lock:
            self._next += 1
            terminal_id = f"term_{self._next}"
            self._terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    def terminal_output(self, params: TerminalOutputRequest) -> TerminalOutputResponse:
        terminal = self._get(params.terminal_id)
        status = terminal.status()
        if status is not None and terminal.reader is not None:
            terminal.reader.join(timeout=5)
        with terminal.lock:
            text = terminal.output.decode("utf-8", errors="replace")
            return TerminalOutputResponse(
                output=text, truncated=terminal.truncated, exit_status=status
            )

    def wait_for_terminal_exit(
        self, params: WaitForTerminalExitRequest
    ) -> WaitForTerminalExitResponse:
        terminal = self._get(params.terminal_id)
        terminal.process.wait()
        status = terminal.status()
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    def kill_terminal(self, params: KillTerminalRequest) -> KillTerminalResponse:
        terminal = self._get(params.terminal_id)
        if terminal.process.poll() is None:
            terminal.process.kill()
        return KillTerminalResponse()

    def release_terminal(self, params: ReleaseTerminalRequest) -> ReleaseTerminalResponse:
        terminal = self._get(params.terminal_id)
        if terminal.process.poll() is None:
            terminal.process.kill()
        terminal.process.wait()
        if terminal.reader is not None:
            terminal.reader.join(timeout=5)
        if terminal.process.stdout is not None:
            terminal.process.stdout.close()
        with self._lock:
            self._terminals.pop(params.terminal_id, None)
        return ReleaseTerminalResponse()


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
