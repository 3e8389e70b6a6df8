"""The asyncio client: `AsyncClient`, its sessions and prompt turns.

    async with AsyncClient.spawn(["my-agent", "--acp"]) as client:
        session = await client.new_session(cwd="/abs/project")
        async for update in session.prompt("Explain this repository"):
            print(update)

Every task the client starts (the reader, the writer, handler calls, the callback
runner, the stderr drain) is owned by it and awaited on close.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import subprocess
from collections.abc import AsyncIterator, Callable, Generator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from acp_sdk._driver import flows
from acp_sdk._driver.aio import AsyncByteReader, AsyncByteWriter, AsyncDriver, open_agent_pipes
from acp_sdk._driver.feed import PipeFeed
from acp_sdk._driver.vocabulary import Limits
from acp_sdk.client._common import (
    BaseClient,
    SessionHandle,
    TurnHandle,
    prompt_request,
)
from acp_sdk.client._common import session_id_of as _session_id_of
from acp_sdk.protocol._errors import ACPError, ConnectionClosed
from acp_sdk.protocol._generated.aio_client_calls import AsyncClientCalls
from acp_sdk.protocol._rows import Method, Notification, Row

__all__ = ["AsyncClient", "AsyncSession", "AsyncTurn"]

P = TypeVar("P")
R = TypeVar("R")
_DEFAULTS = Limits()

if TYPE_CHECKING:  # models, rows and handlers load on first use (see _common)
    from typing_extensions import Self, Unpack

    from acp_sdk.client._options import ClientOptions
    from acp_sdk.handlers import AnyHandlers
    from acp_sdk.schema import (
        ContentBlock,
        LoadSessionResponse,  # noqa: F401 - named (quoted) in the class's bases
        NewSessionResponse,  # noqa: F401 - named (quoted) in the class's bases
        PromptRequest,
        PromptResponse,
        ResumeSessionResponse,  # noqa: F401 - named (quoted) in the class's bases
        SessionUpdate,
    )


class AsyncTurn(TurnHandle["AsyncClient"]):
    """One prompt turn, already started: iterate the session updates; it ends with the
    prompt response.

    The prompt was queued on the running event loop before `session.prompt()` returned
    (it leaves when the loop next runs the writer), and the turn runs whether or not
    anyone iterates it: its updates wait (up to `max_buffered_updates`, then the client
    stops reading from the agent) and `async for update in turn` later yields every one
    in arrival order. `await turn` runs it to the end (calling `on_update` per update,
    if given) and returns the `PromptResponse`; awaiting or iterating a finished turn
    again returns at once, replaying nothing.

    Cancelling the task that iterates or awaits sends `session/cancel`; the turn goes on
    until the agent answers, so `await turn` afterwards returns its `cancelled`
    response, and a new `prompt()` in the session raises `LocalProtocolError` until then.
    """

    def __init__(
        self,
        client: AsyncClient,
        params: PromptRequest,
        on_update: Callable[[Any], Any] | None = None,
        *,
        timeout: float | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "AsyncSession.prompt() sends the prompt at once, on the running event "
                "loop: call it from a coroutine on the client's loop"
            ) from None
        super().__init__(client, params, on_update, timeout=timeout, idle_timeout=idle_timeout)

    def __aiter__(self) -> AsyncIterator[SessionUpdate]:
        return self

    async def __anext__(self) -> SessionUpdate:
        if not self._pending:
            driver = self._client._driver_or_raise()
            sink = self._sink
            try:
                self._pending.extend(await driver.run(flows.next_updates(driver.engine, sink)))
            except asyncio.CancelledError:
                await asyncio.shield(self.cancel())
                raise
            if not self._pending:
                self._ended(sink.outcome)
                raise StopAsyncIteration
        update: SessionUpdate = self._pending.popleft()
        return self._saw(update)

    async def cancel(self) -> None:
        """Ask the agent to stop (`session/cancel`), whether or not the turn was iterated
        yet; the turn still ends with its answer, `cancelled`. Does nothing once the turn
        ended."""
        if self.done:
            return
        with contextlib.suppress(ACPError):
            await self._client.cancel(session_id=self.session_id)

    async def _finish(self) -> PromptResponse:
        async for update in self:
            if self._on_update is not None:
                outcome = self._on_update(update)
                if inspect.isawaitable(outcome):
                    try:
                        await outcome
                    except asyncio.CancelledError:
                        # The task awaiting the turn was cancelled (here, in on_update,
                        # rather than waiting for the next update): the same rule.
                        await asyncio.shield(self.cancel())
                        raise
        assert self.response is not None
        return self.response

    def __await__(self) -> Generator[Any, None, PromptResponse]:
        return self._finish().__await__()


class AsyncSession(SessionHandle["AsyncClient", R]):
    """A session handle (see `SessionHandle`) that starts prompt turns."""

    def prompt(
        self,
        prompt: str | ContentBlock | Sequence[ContentBlock],
        *,
        on_update: Callable[[SessionUpdate], Any] | None = None,
        timeout: float | None = None,
        idle_timeout: float | None = None,
    ) -> AsyncTurn:
        """Start a turn with text or content blocks (`async for` it, or `await` it). The
        prompt is queued on the running event loop before this returns (called without
        a running loop: `RuntimeError`).

        One turn runs per session at a time: while the previous turn runs (also after
        its `cancel()`, until the agent answers `cancelled`), this raises
        `LocalProtocolError`; let it end first (`await turn`).

        Args:
            on_update: Called (and awaited, when it returns an awaitable) per update by
                `await turn`.
            timeout: Seconds for the whole turn.
            idle_timeout: Seconds the agent may stay silent: each of its updates in the
                session, and each request it makes in it, starts them again; it does
                not run while we answer such a request or are not reading.

        When a limit passes, the client sends `session/cancel`; the agent then has 5
        seconds to end the turn (it ends `cancelled`, with `turn.timed_out` saying
        which limit), else the turn raises `RequestTimeout` (a `TimeoutError`).
        """
        request = prompt_request(self.session_id, prompt)
        return AsyncTurn(
            self.client, request, on_update, timeout=timeout, idle_timeout=idle_timeout
        )

    async def cancel(self) -> None:
        """Send `session/cancel` for this session: the running turn ends with `cancelled`
        (also when it was not iterated yet, or the agent has not read the prompt yet)."""
        await self.client.cancel(session_id=self.session_id)


class AsyncClient(
    BaseClient["AnyHandlers"],
    AsyncClientCalls[
        AsyncSession["NewSessionResponse"],
        AsyncSession["LoadSessionResponse"],
        AsyncSession["ResumeSessionResponse"],
        AsyncTurn,
    ],
):
    """An ACP client on asyncio. Use `AsyncClient.spawn(argv)` or `AsyncClient.connect(...)`;
    the options are `BaseClient`'s. Plain (not `async`) handlers run in a pool of
    `workers` threads, off the event loop."""

    _driver: AsyncDriver | None
    _pool: concurrent.futures.ThreadPoolExecutor | None = None

    # ------------------------------------------------------------------ construction

    @classmethod
    def connect(
        cls,
        reader: AsyncByteReader,
        writer: AsyncByteWriter,
        **options: Unpack[ClientOptions[AnyHandlers]],
    ) -> Self:
        """A client over any pair of asyncio byte streams (read/write+drain/close)."""
        client = cls(**options)
        client._streams = (reader, writer)
        return client

    async def open(self) -> Self:
        """Start the agent (or attach to the streams) and initialize. Idempotent."""
        if self._driver is not None:
            return self
        try:
            await self._start()
        except BaseException:
            for delay in self._abandon_steps():
                await asyncio.sleep(delay)
            raise
        if self._auto_initialize:
            from acp_sdk.methods import INITIALIZE

            try:
                await self._request(INITIALIZE, self._initialize_request())
            except BaseException:
                await self.aclose()
                raise
        return self

    async def _start(self) -> None:
        """Start the agent (or attach to the streams) and the driver."""
        stderr: AsyncByteReader | None = None
        closers: tuple[Callable[[], Any], ...] = ()
        messages = False
        reader: AsyncByteReader | PipeFeed
        if self._spawn is not None:
            self._process = self._spawn.start()
            reader, writer, stderr, closers = await open_agent_pipes(self._process)
        elif self._streams is not None:
            reader, writer = self._streams
        elif self._remote is not None:
            from acp_sdk.remote._client import AsyncStreams, _open_bounded

            transport = self._remote.transport()
            await _open_bounded(transport, self._remote.timeout)
            reader = writer = AsyncStreams(transport)
            messages = True
        else:
            raise RuntimeError("use AsyncClient.spawn(...) or AsyncClient.connect(...)")
        try:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                self._workers, thread_name_prefix="acp-handler"
            )
            self._driver = AsyncDriver(
                self._new_connection(),
                reader,
                writer,
                serve=self._serve,
                notification_callbacks=self._notification_callbacks,
                on_update=self._on_update,
                limits=self._limits,
                process=self._process,
                stderr=stderr,
                closers=closers,
                messages=messages,
            )
            self._attach(self._driver.engine)
            self._driver.start()
        except BaseException:
            for close in closers:  # the pipes' transports, before the agent is stopped
                with contextlib.suppress(Exception):
                    close()
            raise

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Fail what is pending, stop the agent's process group, await every task.

        Returns within close_timeout + terminate_timeout + 2 seconds; idempotent.
        """
        if self._driver is not None:
            await self._driver.aclose(*self._close_grace(), reason="the client was closed")
        # Handlers may block while closing (terminals wait for their processes to stop):
        # keep that off the event loop.
        await asyncio.get_running_loop().run_in_executor(None, self._handlers.close)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def _driver_or_raise(self) -> AsyncDriver:
        if self._driver is None:
            raise ConnectionClosed("the client is not open: use `async with`")
        return self._driver

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The agent's `Popen` once started by `spawn` (None for `connect`, or before `open`)."""
        return self._process.popen if self._process is not None else None

    # ------------------------------------------------------------------ calls

    async def request(self, row: Method[P, R], params: P, *, timeout: float | None = None) -> R:
        """Call any method row (core or extension) and wait for its typed result.

        `timeout` covers queueing, sending and waiting (`RequestTimeout`, a TimeoutError).
        """
        driver = self._driver_or_raise()
        return self._answered(row, params, await driver.call(row, params, timeout))

    async def notify(
        self, row: Notification[P], params: P, *, timeout: float | None = None
    ) -> None:
        """Send a notification; waits (up to `timeout`) while the agent is not reading."""
        driver = self._driver_or_raise()
        await driver.notify(row, params, timeout)

    async def _request(self, row: Method[P, R], params: P) -> R:
        row = self._on_table(row)
        return self._record(row, await self.request(row, params, timeout=self._timeout_of(row)))

    async def _notify(self, row: Notification[P], params: P) -> None:
        await self.notify(row, params, timeout=self._timeout)

    async def _open_session(self, row: Method[Any, R], params: Any) -> AsyncSession[R]:
        self._before_open(row, params)
        response = await self._request(row, params)
        return AsyncSession(self, _session_id_of(response, params), response)

    async def _start_turn(self, row: Method[Any, Any], params: Any) -> AsyncTurn:
        return AsyncTurn(self, params)

    def session(self, session_id: str) -> AsyncSession[None]:
        """A handle on an existing session, without a request."""
        return AsyncSession(self, session_id, None)

    async def _serve(self, row: Row, params: Any) -> Any:
        handler = self._handler_for(row)
        if inspect.iscoroutinefunction(handler):
            return await handler(params)
        # A plain handler may block (a terminal wait): keep it off the event loop. It may
        # also hand back an awaitable (AskPermission with a coroutine callback).
        result = await asyncio.get_running_loop().run_in_executor(self._pool, handler, params)
        return await result if inspect.isawaitable(result) else result
