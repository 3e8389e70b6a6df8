"""Handler bases and `HandlerSet`: which handler serves a request, and the capabilities
the handlers given to a client imply.

Subclass `ClientHandlers` (plain methods, for `Client` and `AsyncClient`) or
`AsyncClientHandlers` (coroutines, for `AsyncClient`) and override what you serve.
"""

from __future__ import annotations

from typing import ClassVar

from acp_sdk.protocol._errors import RequestError
from acp_sdk.schema import (
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
    CreateTerminalRequest,
    CreateTerminalResponse,
    KillTerminalRequest,
    KillTerminalResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)

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
        """`session/request_permission`: pick one of `params.options` for a tool call,
        or answer the `cancelled` outcome."""
        raise RequestError.method_not_found("session/request_permission")

    def read_text_file(self, params: ReadTextFileRequest) -> ReadTextFileResponse:
        """`fs/read_text_file`: a text file's content (optionally from `line`, `limit`
        lines). Overriding it advertises `fs.readTextFile`."""
        raise RequestError.method_not_found("fs/read_text_file")

    def write_text_file(self, params: WriteTextFileRequest) -> WriteTextFileResponse:
        """`fs/write_text_file`: write (create or replace) a text file. Overriding it
        advertises `fs.writeTextFile`."""
        raise RequestError.method_not_found("fs/write_text_file")

    def create_terminal(self, params: CreateTerminalRequest) -> CreateTerminalResponse:
        """`terminal/create`: start a command; answer its terminal id at once.

        Overriding all five terminal methods advertises `terminal`."""
        raise RequestError.method_not_found("terminal/create")

    def terminal_output(self, params: TerminalOutputRequest) -> TerminalOutputResponse:
        """`terminal/output`: the output so far (truncated to the byte limit) and the
        exit status, if it exited."""
        raise RequestError.method_not_found("terminal/output")

    def release_terminal(self, params: ReleaseTerminalRequest) -> ReleaseTerminalResponse:
        """`terminal/release`: kill the command if running and forget the terminal."""
        raise RequestError.method_not_found("terminal/release")

    def wait_for_terminal_exit(
        self, params: WaitForTerminalExitRequest
    ) -> WaitForTerminalExitResponse:
        """`terminal/wait_for_exit`: wait for the command to exit; its exit status."""
        raise RequestError.method_not_found("terminal/wait_for_exit")

    def kill_terminal(self, params: KillTerminalRequest) -> KillTerminalResponse:
        """`terminal/kill`: kill the command, keeping the terminal (and its output)."""
        raise RequestError.method_not_found("terminal/kill")

    def create_elicitation(self, params: CreateElicitationRequest) -> CreateElicitationResponse:
        """`elicitation/create`: ask the user for structured input (form mode; URL
        mode with `elicitation_url = True`)."""
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
        """`session/request_permission`: pick one of `params.options` for a tool call,
        or answer the `cancelled` outcome."""
        raise RequestError.method_not_found("session/request_permission")

    async def read_text_file(self, params: ReadTextFileRequest) -> ReadTextFileResponse:
        """`fs/read_text_file`: a text file's content (optionally from `line`, `limit`
        lines). Overriding it advertises `fs.readTextFile`."""
        raise RequestError.method_not_found("fs/read_text_file")

    async def write_text_file(self, params: WriteTextFileRequest) -> WriteTextFileResponse:
        """`fs/write_text_file`: write (create or replace) a text file. Overriding it
        advertises `fs.writeTextFile`."""
        raise RequestError.method_not_found("fs/write_text_file")

    async def create_terminal(self, params: CreateTerminalRequest) -> CreateTerminalResponse:
        """`terminal/create`: start a command; answer its terminal id at once.

        Overriding all five terminal methods advertises `terminal`."""
        raise RequestError.method_not_found("terminal/create")

    async def terminal_output(self, params: TerminalOutputRequest) -> TerminalOutputResponse:
        """`terminal/output`: the output so far (truncated to the byte limit) and the
        exit status, if it exited."""
        raise RequestError.method_not_found("terminal/output")

    async def release_terminal(self, params: ReleaseTerminalRequest) -> ReleaseTerminalResponse:
        """`terminal/release`: kill the command if running and forget the terminal."""
        raise RequestError.method_not_found("terminal/release")

    async def wait_for_terminal_exit(
        self, params: WaitForTerminalExitRequest
    ) -> WaitForTerminalExitResponse:
        """`terminal/wait_for_exit`: wait for the command to exit; its exit status."""
        raise RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(self, params: KillTerminalRequest) -> KillTerminalResponse:
        """`terminal/kill`: kill the command, keeping the terminal (and its output)."""
        raise RequestError.method_not_found("terminal/kill")

    async def create_elicitation(
        self, params: CreateElicitationRequest
    ) -> CreateElicitationResponse:
        """`elicitation/create`: ask the user for structured input (form mode; URL
        mode with `elicitation_url = True`)."""
        raise RequestError.method_not_found("elicitation/create")

    async def session_update(self, params: SessionNotification) -> None:
        """Every `session/update`, also those outside a prompt turn (optional)."""

    async def complete_elicitation(self, params: CompleteElicitationNotification) -> None:
        """A URL-mode elicitation finished (optional)."""


AnyHandlers = ClientHandlers | AsyncClientHandlers
