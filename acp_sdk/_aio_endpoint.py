"""Drive a `Connection` over asyncio byte streams: how bytes move and how callers wait.

No protocol rule lives here: the connection decides what is allowed, what to answer and
how each call ends; this module reads, writes under one lock (so frame order is state
order), keeps a future per call, and runs handlers as tasks it owns and awaits on close.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from acp_sdk._rows import Method, Notification, Row
from acp_sdk.connection import Connection
from acp_sdk.errors import ACPError, ConnectionClosed
from acp_sdk.events import (
    CallFailed,
    CancelRequested,
    ConnectionClosedEvent,
    ErrorReceived,
    Event,
    FrameRejected,
    NotificationReceived,
    PromptCancelRequested,
    RequestReceived,
    ResponseReceived,
)

P = TypeVar("P")
R = TypeVar("R")
RequestId = int | str
log = logging.getLogger("acp_sdk")

READ_CHUNK = 1 << 16
ANSWER_GRACE = 5.0
"""Seconds handlers may still answer after the peer ended its input."""


class AsyncByteReader(Protocol):
    async def read(self, n: int = -1, /) -> bytes: ...


class AsyncByteWriter(Protocol):
    def write(self, data: bytes, /) -> Any: ...
    async def drain(self) -> None: ...
    def close(self) -> Any: ...


RequestHandler = Callable[[Row, Any, RequestId], Awaitable[Any]]
NotificationHandler = Callable[[Row, Any], Awaitable[None] | None]


class AsyncEndpoint:
    """One connection's reader task, writer lock, pending futures and handler tasks."""

    def __init__(
        self,
        connection: Connection,
        reader: AsyncByteReader,
        writer: AsyncByteWriter,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
    ) -> None:
        self.connection = connection
        self._reader = reader
        self._writer = writer
        self._on_request = on_request
        self._on_notification = on_notification
        self._write_lock = asyncio.Lock()
        self._futures: dict[RequestId, asyncio.Future[Any]] = {}
        self._handlers: dict[RequestId, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reader_task: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()

    def start(self) -> None:
        self._reader_task = asyncio.get_running_loop().create_task(self._read_loop())

    # ------------------------------------------------------------------ outbound

    async def _write(self, data: bytes) -> None:
        if not data:
            return
        try:
            self._writer.write(data)
            await self._writer.drain()
        except (ConnectionError, RuntimeError, OSError) as error:
            log.debug("write failed: %s", error)
            await self._shutdown()

    async def call(
        self,
        row: Method[P, R],
        params: P,
        *,
        timeout: float | None = None,
        check_capability: bool = True,
    ) -> R:
        """Send a request and wait for its answer. Cancelling the waiting task sends
        `$/cancel_request` (prompt cancellation is the caller's: it sends session/cancel)."""
        loop = asyncio.get_running_loop()
        async with self._write_lock:
            request_id, data = self.connection.send_request(
                row, params, check_capability=check_capability
            )
            future: asyncio.Future[Any] = loop.create_future()
            self._futures[request_id] = future
            await self._write(data)
        try:
            if timeout is None:
                result: R = await future
            else:
                result = await asyncio.wait_for(asyncio.shield(future), timeout)
            return result
        except asyncio.TimeoutError:
            self._futures.pop(request_id, None)
            async with self._write_lock:
                error, data = self.connection.time_out(request_id)
                await self._write(data)
            raise error from None
        except asyncio.CancelledError:
            if self._futures.pop(request_id, None) is not None:
                async with self._write_lock:
                    await self._write(self.connection.cancel(request_id))
            raise

    async def notify(
        self, row: Notification[P], params: P, *, check_capability: bool = True
    ) -> None:
        async with self._write_lock:
            await self._write(
                self.connection.send_notification(row, params, check_capability=check_capability)
            )

    # ------------------------------------------------------------------ inbound

    async def _read_loop(self) -> None:
        try:
            while True:
                try:
                    data = await self._reader.read(READ_CHUNK)
                except (ConnectionError, OSError):
                    data = b""
                self.connection.receive_data(data)
                await self._dispatch(self.connection.events())
                replies = self.connection.data_to_send()
                if replies:
                    async with self._write_lock:
                        await self._write(replies)
                if not data:
                    break
            # End of input: the peer may still read. Let handlers already running answer,
            # for a while, before closing.
            running = list(self._handlers.values())
            if running:
                await asyncio.wait(running, timeout=ANSWER_GRACE)
        finally:
            await self._shutdown()

    async def _dispatch(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, ResponseReceived):
                self._resolve(event.request_id, result=event.result)
            elif isinstance(event, (ErrorReceived, CallFailed)):
                self._resolve(event.request_id, error=event.error)
            elif isinstance(event, RequestReceived):
                task = asyncio.get_running_loop().create_task(self._serve(event))
                self._handlers[event.request_id] = task
                self._own(task)
            elif isinstance(event, (CancelRequested, PromptCancelRequested)):
                handler = self._handlers.get(event.request_id)
                if handler is not None:
                    handler.cancel()
            elif isinstance(event, NotificationReceived):
                await self._notify_handler(event)
            elif isinstance(event, FrameRejected):
                log.debug("frame rejected: %s", event.reason)
            elif isinstance(event, ConnectionClosedEvent):
                self._fail_all(ConnectionClosed("the peer closed the connection"))

    async def _notify_handler(self, event: NotificationReceived) -> None:
        try:
            outcome = self._on_notification(event.row, event.params)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:
            log.exception("notification handler for %s failed", event.row.wire)

    def _resolve(
        self, request_id: RequestId, *, result: Any = None, error: ACPError | None = None
    ) -> None:
        future = self._futures.pop(request_id, None)
        if future is None or future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    async def _serve(self, event: RequestReceived) -> None:
        rid = event.request_id
        result: Any = None
        failure: BaseException | None = None
        cancelled = False
        try:
            result = await self._on_request(event.row, event.params, rid)
        except asyncio.CancelledError:
            cancelled = True
        except Exception as raised:
            failure = raised
        finally:
            self._handlers.pop(rid, None)
        async with self._write_lock:
            await self._write(
                self.connection.answer(rid, result, error=failure, cancelled=cancelled)
            )

    def _own(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _fail_all(self, error: ACPError) -> None:
        for future in self._futures.values():
            if not future.done():
                future.set_exception(error)
        self._futures.clear()

    async def _shutdown(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        self.connection.close()
        self._fail_all(ConnectionClosed("the connection is closed"))
        for task in list(self._handlers.values()):
            task.cancel()
        with contextlib.suppress(Exception):
            self._writer.close()

    async def aclose(self) -> None:
        """Stop reading, fail pending calls, cancel and await every task we started."""
        await self._shutdown()
        current = asyncio.current_task()
        tasks = [t for t in (*self._tasks, self._reader_task) if t is not None and t is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
