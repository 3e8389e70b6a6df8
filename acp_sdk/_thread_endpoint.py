"""Drive a `Connection` with threads: the blocking twin of `_aio_endpoint`.

One lock guards the connection and the writer, so the state the connection records and
the order frames leave in always agree; the reader thread feeds bytes under it and
dispatches events outside it. Handlers run in a worker pool, never on the reader thread,
so a handler may call back into the client. No protocol rule lives here.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from acp_sdk._rows import Method, Notification, Row
from acp_sdk.connection import Connection
from acp_sdk.errors import ACPError, ConnectionClosed
from acp_sdk.events import (
    CallFailed,
    CancelRequested,
    ConnectionClosedEvent,
    ErrorReceived,
    Event,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
)

P = TypeVar("P")
R = TypeVar("R")
RequestId = int | str
log = logging.getLogger("acp_sdk")

READ_CHUNK = 1 << 16


class ThreadEndpoint:
    def __init__(
        self,
        connection: Connection,
        read: Callable[[int], bytes],
        write: Callable[[bytes], Any],
        close_writer: Callable[[], Any],
        *,
        on_request: Callable[[Row, Any], Any],
        on_notification: Callable[[Row, Any], Any],
        workers: int = 8,
    ) -> None:
        self.connection = connection
        self._read = read
        self._write_raw = write
        self._close_writer = close_writer
        self._on_request = on_request
        self._on_notification = on_notification
        self._lock = threading.RLock()
        self._futures: dict[RequestId, concurrent.futures.Future[Any]] = {}
        self._handlers: dict[RequestId, concurrent.futures.Future[Any]] = {}
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="acp-handler"
        )
        # Daemon: a grandchild holding the pipe open must not keep the interpreter alive;
        # close() still joins it.
        self._reader = threading.Thread(target=self._read_loop, name="acp-reader", daemon=True)
        self.closed = threading.Event()

    def start(self) -> None:
        self._reader.start()

    # ------------------------------------------------------------------ outbound

    def _write(self, data: bytes) -> None:
        if not data:
            return
        try:
            self._write_raw(data)
        except (OSError, ValueError) as error:
            log.debug("write failed: %s", error)
            self._shutdown()

    def start_call(
        self, row: Method[P, R], params: P, *, check_capability: bool = True
    ) -> tuple[RequestId, concurrent.futures.Future[R]]:
        future: concurrent.futures.Future[R] = concurrent.futures.Future()
        with self._lock:
            request_id, data = self.connection.send_request(
                row, params, check_capability=check_capability
            )
            self._futures[request_id] = future
            self._write(data)
        return request_id, future

    def wait(
        self, request_id: RequestId, future: concurrent.futures.Future[R], timeout: float | None
    ) -> R:
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            with self._lock:
                self._futures.pop(request_id, None)
                error, data = self.connection.time_out(request_id)
                self._write(data)
            raise error from None
        except KeyboardInterrupt:
            self.cancel_call(request_id)
            raise

    def call(self, row: Method[P, R], params: P, *, timeout: float | None = None) -> R:
        request_id, future = self.start_call(row, params)
        return self.wait(request_id, future, timeout)

    def cancel_call(self, request_id: RequestId) -> None:
        """End one of our calls locally and tell the peer (`$/cancel_request`)."""
        with self._lock:
            if self._futures.pop(request_id, None) is not None:
                self._write(self.connection.cancel(request_id))

    def notify(self, row: Notification[P], params: P) -> None:
        with self._lock:
            self._write(self.connection.send_notification(row, params))

    # ------------------------------------------------------------------ inbound

    def _read_loop(self) -> None:
        try:
            while True:
                try:
                    data = self._read(READ_CHUNK)
                except (OSError, ValueError):
                    data = b""
                with self._lock:
                    self.connection.receive_data(data)
                    events = self.connection.events()
                    self._write(self.connection.data_to_send())
                self._dispatch(events)
                if not data:
                    return
        finally:
            self._shutdown()

    def _dispatch(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, ResponseReceived):
                self._resolve(event.request_id, result=event.result)
            elif isinstance(event, (ErrorReceived, CallFailed)):
                self._resolve(event.request_id, error=event.error)
            elif isinstance(event, RequestReceived):
                try:
                    self._handlers[event.request_id] = self._pool.submit(self._serve, event)
                except RuntimeError:  # the pool is shut down: we are closing
                    return
            elif isinstance(event, CancelRequested):
                handler = self._handlers.get(event.request_id)
                if handler is not None and handler.cancel():  # not started yet: never will
                    self._answer(event.request_id, cancelled=True)
            elif isinstance(event, NotificationReceived):
                try:
                    self._on_notification(event.row, event.params)
                except Exception:
                    log.exception("notification handler for %s failed", event.row.wire)
            elif isinstance(event, ConnectionClosedEvent):
                self._fail_all(ConnectionClosed("the peer closed the connection"))

    def _resolve(
        self, request_id: RequestId, *, result: Any = None, error: ACPError | None = None
    ) -> None:
        with self._lock:
            future = self._futures.pop(request_id, None)
        if future is None or future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def _serve(self, event: RequestReceived) -> None:
        try:
            result = self._on_request(event.row, event.params)
        except Exception as raised:
            self._answer(event.request_id, error=raised)
        else:
            self._answer(event.request_id, result)

    def _answer(
        self,
        request_id: RequestId,
        result: Any = None,
        *,
        error: BaseException | None = None,
        cancelled: bool = False,
    ) -> None:
        with self._lock:
            self._handlers.pop(request_id, None)
            self._write(
                self.connection.answer(request_id, result, error=error, cancelled=cancelled)
            )

    def _fail_all(self, error: ACPError) -> None:
        with self._lock:
            futures = list(self._futures.values())
            self._futures.clear()
        for future in futures:
            if not future.done():
                future.set_exception(error)

    def _shutdown(self) -> None:
        with self._lock:
            if self.closed.is_set():
                return
            self.closed.set()
            self.connection.close()
        self._fail_all(ConnectionClosed("the connection is closed"))
        with contextlib.suppress(Exception):
            self._close_writer()

    def close(self, *, join_timeout: float | None = None) -> None:
        """Close the writer, wait for the reader to see end of input, stop the workers."""
        self._shutdown()
        if self._reader.is_alive() and threading.current_thread() is not self._reader:
            self._reader.join(join_timeout)
        self._pool.shutdown(wait=False, cancel_futures=True)
