"""The asyncio client: `AsyncClient`, its sessions and prompt turns.

    async with AsyncClient.spawn(["my-agent", "--acp"]) as client:
        session = await client.new_session(cwd=".")
        async for update in session.prompt("Explain this repository"):
            print(update)

Every task the client starts (the reader, handler calls, prompt calls, the stderr drain)
is owned by it and cancelled and awaited on close.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
from collections.abc import AsyncIterator, Callable, Generator, Mapping, Sequence
from types import TracebackType
from typing import Any, Final, Generic, TypeVar

from acp_sdk._aio_endpoint import AsyncByteReader, AsyncByteWriter, AsyncEndpoint
from acp_sdk._client_common import (
    UpdateRouter,
    agent_capabilities,
    agent_info,
    default_initialize,
    log_agent_stderr,
    prompt_blocks,
)
from acp_sdk._generated.aio_client_calls import AsyncClientCalls
from acp_sdk._rows import Method, MethodTable, Notification, Row, Side
from acp_sdk.connection import Connection
from acp_sdk.errors import ConnectionClosed, RequestError
from acp_sdk.handlers import AnyHandlers, HandlerSet
from acp_sdk.methods import INITIALIZE, SESSION_PROMPT
from acp_sdk.schema import (
    AgentCapabilities,
    ContentBlock,
    Implementation,
    InitializeResponse,
    PromptRequest,
    PromptResponse,
    SessionNotification,
    SessionUpdate,
    StopReason,
)

__all__ = ["AsyncClient", "AsyncSession", "AsyncTurn"]

P = TypeVar("P")
R = TypeVar("R")
log = logging.getLogger("acp_sdk.client")
STREAM_LIMIT: Final = 1 << 30
_END: Final[Any] = object()


class AsyncTurn:
    """One prompt turn: iterate the session updates; it ends with the prompt response.

    `async for update in turn` yields every update in arrival order, all of those that
    arrived before the response included. `await turn` runs it to the end (calling
    `on_update` per update, if given) and returns the `PromptResponse`. Cancelling the task
    that iterates or awaits sends `session/cancel`.
    """

    def __init__(
        self,
        client: AsyncClient,
        params: PromptRequest,
        on_update: Callable[[SessionUpdate], Any] | None = None,
    ) -> None:
        self._client = client
        self.params = params
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._on_update = on_update
        self._call: asyncio.Task[PromptResponse] | None = None
        self.response: PromptResponse | None = None
        self.received = 0
        """Updates routed to this turn so far (counted as they arrive)."""

    @property
    def session_id(self) -> str:
        return self.params.session_id

    @property
    def stop_reason(self) -> StopReason | None:
        return self.response.stop_reason if self.response is not None else None

    def _start(self) -> None:
        if self._call is not None:
            return
        self._client._router.open(self.session_id, self._deliver)
        self._call = self._client._own(self._run())

    def _deliver(self, update: SessionUpdate) -> None:
        self.received += 1
        self._queue.put_nowait(update)

    async def _run(self) -> PromptResponse:
        try:
            return await self._client._endpoint_or_raise().call(SESSION_PROMPT, self.params)
        finally:
            self._client._router.close(self.session_id, self._deliver)
            self._queue.put_nowait(_END)

    def __aiter__(self) -> AsyncIterator[SessionUpdate]:
        return self

    async def __anext__(self) -> SessionUpdate:
        self._start()
        try:
            item = await self._queue.get()
        except asyncio.CancelledError:
            await asyncio.shield(self.cancel())
            raise
        if item is _END:
            assert self._call is not None
            self.response = await self._call  # raises the call's error, if any
            raise StopAsyncIteration
        update: SessionUpdate = item
        return update

    async def cancel(self) -> None:
        """Ask the agent to stop (`session/cancel`); the turn still ends with its answer."""
        with contextlib.suppress(ConnectionClosed):
            await self._client.cancel(session_id=self.session_id)

    async def _finish(self) -> PromptResponse:
        async for update in self:
            if self._on_update is not None:
                outcome = self._on_update(update)
                if inspect.isawaitable(outcome):
                    await outcome
        assert self.response is not None
        return self.response

    def __await__(self) -> Generator[Any, None, PromptResponse]:
        return self._finish().__await__()


class AsyncSession(Generic[R]):
    """A session handle: its id, the response that opened it (`NewSessionResponse`,
    `LoadSessionResponse` or `ResumeSessionResponse`), and prompt turns in it."""

    def __init__(self, client: AsyncClient, session_id: str, response: R) -> None:
        self.client = client
        self.session_id = session_id
        self.response = response

    def prompt(
        self,
        prompt: str | ContentBlock | Sequence[ContentBlock],
        *,
        on_update: Callable[[SessionUpdate], Any] | None = None,
    ) -> AsyncTurn:
        """Start a turn with text or content blocks (`async for` it, or `await` it)."""
        request = PromptRequest(session_id=self.session_id, prompt=prompt_blocks(prompt))
        return AsyncTurn(self.client, request, on_update)

    async def cancel(self) -> None:
        await self.client.cancel(session_id=self.session_id)


class AsyncClient(AsyncClientCalls):
    """An ACP client on asyncio. Use `AsyncClient.spawn(argv)` or `AsyncClient.connect(...)`.

    Args:
        handlers: What the client serves to the agent (see `acp_sdk.handlers`); the
            capabilities advertised at initialize are derived from them.
        on_update: Called with each `session/update` outside a prompt turn.
        client_info: Sent at initialize (default: this SDK's name and version).
        initialize: False to skip the automatic handshake (call `initialize()` yourself).
        table: Method table (the stable protocol by default; extension rows welcome).
        request_timeout: Default seconds for requests other than prompts (None: wait).
    """

    def __init__(
        self,
        *,
        handlers: AnyHandlers | Sequence[AnyHandlers] | None = None,
        on_update: Callable[[SessionNotification], Any] | None = None,
        client_info: Implementation | None = None,
        initialize: bool = True,
        table: MethodTable | None = None,
        request_timeout: float | None = None,
        _open: Callable[[], Any] | None = None,
    ) -> None:
        self._handlers = HandlerSet(handlers)
        self._router = UpdateRouter(on_update)
        self._client_info = client_info
        self._auto_initialize = initialize
        self._table = table
        self._timeout = request_timeout
        self._open_streams = _open
        self._endpoint: AsyncEndpoint | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._process: asyncio.subprocess.Process | None = None
        self._close_grace = (2.0, 2.0)
        self._callbacks: asyncio.Queue[tuple[Callable[[Any], Any], Any]] = asyncio.Queue()
        self._callback_task: asyncio.Task[None] | None = None
        self.initialize_response: InitializeResponse | None = None

    # ------------------------------------------------------------------ construction

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Callable[[str], Any] | None = None,
        close_timeout: float = 2.0,
        terminate_timeout: float = 2.0,
        **options: Any,
    ) -> AsyncClient:
        """A client for an agent subprocess (started on `async with`).

        The environment is inherited unless `env` is given. The agent's stderr is always
        drained, line by line, to `stderr` (default: the `acp_sdk.agent.stderr` logger).
        Closing closes the agent's stdin, waits `close_timeout`, terminates, waits
        `terminate_timeout`, then kills, and always reaps the process.
        """
        client = cls(**options)

        async def open_process() -> tuple[Any, Any]:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                limit=STREAM_LIMIT,
                start_new_session=True,  # Ctrl-C reaches us, not the agent (see Client.spawn)
            )
            client._process = process
            client._close_grace = (close_timeout, terminate_timeout)
            client._own(_drain_lines(process.stderr, stderr or log_agent_stderr))
            return process.stdout, process.stdin

        client._open_streams = open_process
        return client

    @classmethod
    def connect(
        cls, reader: AsyncByteReader, writer: AsyncByteWriter, **options: Any
    ) -> AsyncClient:
        """A client over any pair of asyncio byte streams (read/write+drain/close)."""

        async def given() -> tuple[Any, Any]:
            return reader, writer

        return cls(**options, _open=given)

    async def __aenter__(self) -> AsyncClient:
        if self._open_streams is None:
            raise RuntimeError("use AsyncClient.spawn(...) or AsyncClient.connect(...)")
        reader, writer = await self._open_streams()
        connection = Connection(Side.CLIENT, table=self._table)
        self._endpoint = AsyncEndpoint(
            connection, reader, writer, on_request=self._serve, on_notification=self._notified
        )
        self._endpoint.start()
        self._callback_task = self._own(self._run_callbacks())
        if self._auto_initialize:
            try:
                await self._request(
                    INITIALIZE, default_initialize(self._handlers, self._client_info)
                )
            except BaseException:
                await self.aclose()
                raise
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection, stop the agent process, and await every task started."""
        if self._endpoint is not None:
            await self._endpoint._shutdown()
        if self._process is not None:
            await _stop_process(self._process, *self._close_grace)
            # Let the reader and the stderr drain see end of input, so the pipes close
            # cleanly; a grandchild holding them open is cut off after a second.
            readers = (*self._tasks, self._endpoint and self._endpoint._reader_task)
            pending = [t for t in readers if t and t is not self._callback_task]
            if pending:
                await asyncio.wait(pending, timeout=1.0)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._endpoint is not None:
            await self._endpoint.aclose()

    def _own(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _endpoint_or_raise(self) -> AsyncEndpoint:
        if self._endpoint is None:
            raise ConnectionClosed("the client is not open: use `async with`")
        return self._endpoint

    # ------------------------------------------------------------------ state

    @property
    def agent_capabilities(self) -> AgentCapabilities:
        """What the agent advertised at initialize (all defaults before that)."""
        return agent_capabilities(self._endpoint.connection if self._endpoint else None)

    @property
    def agent_info(self) -> Implementation | None:
        return agent_info(self._endpoint.connection if self._endpoint else None)

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        return self._process

    # ------------------------------------------------------------------ calls

    async def request(self, row: Method[P, R], params: P, *, timeout: float | None = None) -> R:
        """Call any method row (core or extension) and wait for its typed result."""
        result = await self._endpoint_or_raise().call(row, params, timeout=timeout)
        await self._settle()
        return result

    async def notify(self, row: Notification[P], params: P) -> None:
        await self._endpoint_or_raise().notify(row, params)

    async def _request(self, row: Method[P, R], params: P) -> R:
        result = await self._endpoint_or_raise().call(row, params, timeout=self._timeout)
        await self._settle()
        if row is INITIALIZE:
            self.initialize_response = result  # type: ignore[assignment] # R is InitializeResponse here
        return result

    async def _notify(self, row: Notification[P], params: P) -> None:
        await self._endpoint_or_raise().notify(row, params)

    async def _open_session(self, row: Method[Any, R], params: Any) -> AsyncSession[R]:
        response = await self._request(row, params)
        session_id = getattr(response, "session_id", None) or params.session_id
        return AsyncSession(self, session_id, response)

    async def _start_turn(self, row: Method[Any, Any], params: Any) -> AsyncTurn:
        return AsyncTurn(self, params)

    def session(self, session_id: str) -> AsyncSession[None]:
        """A handle on an existing session, without a request."""
        return AsyncSession(self, session_id, None)

    # ------------------------------------------------------------------ inbound

    async def _serve(self, row: Row, params: Any, request_id: int | str) -> Any:
        handler = self._handlers.get(row.handler_name)
        if handler is None:
            raise RequestError.method_not_found(row.wire)
        if inspect.iscoroutinefunction(handler):
            return await handler(params)
        # A plain handler may block (a terminal wait): keep it off the event loop.
        return await asyncio.get_running_loop().run_in_executor(None, handler, params)

    async def _notified(self, row: Row, params: Any) -> None:
        # Runs in the reader task: route to a turn here (ordering), run user code in the
        # callback task, so a callback may await calls to the agent.
        on_update = self._router.on_update
        if row.wire == "session/update" and not self._router.route(params) and on_update:
            self._callbacks.put_nowait((on_update, params))
        handler = self._handlers.get(row.handler_name)
        if handler is not None:
            self._callbacks.put_nowait((handler, params))

    async def _settle(self) -> None:
        """Wait until callbacks for notifications that came before an answer have run, so
        a call returns after them (unless called from a callback: it would wait on itself)."""
        if self._callbacks.empty() or asyncio.current_task() is self._callback_task:
            return
        barrier: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._callbacks.put_nowait((barrier.set_result, None))
        await barrier

    async def _run_callbacks(self) -> None:
        """Notification callbacks, one at a time, in arrival order."""
        while True:
            function, params = await self._callbacks.get()
            try:
                outcome = function(params)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception:
                log.exception("a notification callback failed")


async def _drain_lines(stream: asyncio.StreamReader | None, sink: Callable[[str], Any]) -> None:
    if stream is None:
        return
    while True:
        try:
            line = await stream.readline()
        except (ValueError, asyncio.LimitOverrunError):
            line = await stream.read(1 << 16)
        if not line:
            return
        with contextlib.suppress(Exception):
            sink(line.decode("utf-8", errors="replace").rstrip("\n"))


async def _stop_process(
    process: asyncio.subprocess.Process, close_timeout: float, terminate_timeout: float
) -> None:
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            process.stdin.close()
    for action, timeout in (
        (None, close_timeout),
        (process.terminate, terminate_timeout),
        (process.kill, None),
    ):
        if process.returncode is not None:
            return
        if action is not None:
            with contextlib.suppress(ProcessLookupError):
                action()
        try:
            await asyncio.wait_for(process.wait(), timeout)
            return
        except asyncio.TimeoutError:
            continue
