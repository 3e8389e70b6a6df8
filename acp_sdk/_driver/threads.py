"""The blocking driver: the engine moved by threads.

Threads: a reader (bytes -> engine), a writer (engine queue -> bytes; the only thread
that ever blocks on the peer's input), a callback runner (notification callbacks, one at
a time, in order) and a bounded pool for the peer's requests. Waiting is
`threading.Condition` on the engine's lock. No protocol or endpoint rule lives here:
those are the connection's and the engine's.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import IO, Any, Final, TypeVar

from acp_sdk._driver.engine import (
    Callback,
    Cancellable,
    Engine,
    Limits,
    Outcome,
    Serve,
    Sink,
    deadline_after,
    send_timeout,
    time_left,
)
from acp_sdk._driver.process import CLOSE_SLACK, AgentProcess
from acp_sdk._rows import Method, Notification, Row
from acp_sdk.connection import Connection
from acp_sdk.errors import ConnectionClosed

R = TypeVar("R")
RequestId = int | str
log = logging.getLogger("acp_sdk.driver")

READ_CHUNK: Final = 1 << 16
JOIN_WAIT: Final = 0.5
"""Seconds close() waits for each thread that should already be finishing."""


class _Condition:
    """A signal threads wait on: a condition over the engine's lock."""

    def __init__(self, lock: threading.Lock) -> None:
        self.condition = threading.Condition(lock)

    def notify(self) -> None:
        self.condition.notify_all()


class _Queued:
    """A request handler waiting in (or running from) the pool."""

    def __init__(self, future: concurrent.futures.Future[None] | None) -> None:
        self._future = future

    def cancel(self) -> bool:
        # True only when it had not started: it never will, so the engine answers.
        return self._future is not None and self._future.cancel()


class StreamTransport:
    """Bytes to and from a peer over two file objects (or descriptors)."""

    def __init__(
        self, read: Callable[[int], bytes], write: Callable[[bytes], Any], close: Callable[[], Any]
    ) -> None:
        self.read = read
        self.write = write
        self.close_write = close
        self.process: AgentProcess | None = None

    @classmethod
    def of_process(cls, process: AgentProcess) -> StreamTransport:
        out_fd = process.stdout.fileno()
        in_fd = process.stdin.fileno()

        def write(data: bytes) -> None:
            view = memoryview(data)
            while view:
                view = view[os.write(in_fd, view) :]

        transport = cls(lambda n: os.read(out_fd, n), write, process.stdin.close)
        transport.process = process
        return transport

    @classmethod
    def of_files(cls, reader: IO[bytes], writer: IO[bytes]) -> StreamTransport:
        read1 = getattr(reader, "read1", None)

        def write(data: bytes) -> None:
            writer.write(data)
            writer.flush()

        return cls(read1 if read1 is not None else reader.read, write, writer.close)


class ThreadDriver:
    """Runs one engine with threads; what the blocking `Client` is built on."""

    def __init__(
        self,
        connection: Connection,
        transport: StreamTransport,
        *,
        serve: Serve,
        notification_callbacks: Callable[[Row, Any], list[Callback]],
        on_update: Callback | None,
        limits: Limits,
        workers: int,
    ) -> None:
        self.transport = transport
        self._serve = serve
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="acp-handler"
        )
        lock = threading.Lock()
        self.engine: Engine[_Condition] = Engine(
            connection,
            limits=limits,
            new_signal=lambda: _Condition(lock),
            new_waiter=concurrent.futures.Future,
            start_handler=self._start_handler,
            notification_callbacks=notification_callbacks,
            on_update=on_update,
            lock=lock,
        )
        self._callback_ident: int | None = None
        # Daemons: a grandchild holding a pipe open must not keep the interpreter alive;
        # close() still joins them, within its bound.
        self._threads = [
            threading.Thread(target=target, name=f"acp-{name}", daemon=True)
            for name, target in (
                ("reader", self._read_loop),
                ("writer", self._write_loop),
                ("callbacks", self._callback_loop),
            )
        ]
        if transport.process is not None:
            self._threads.append(
                threading.Thread(target=self._stderr_loop, name="acp-stderr", daemon=True)
            )
        self._closed = False

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    # ------------------------------------------------------------------ waiting

    def _wait(self, ready: Callable[[], bool], signal: _Condition, deadline: float | None) -> bool:
        with self.engine.lock:
            while not ready():
                left = time_left(deadline)
                if left == 0:
                    return False
                signal.condition.wait(left)
            return True

    def call(
        self,
        row: Method[Any, R],
        params: Any,
        *,
        timeout: float | None = None,
        check_capability: bool = True,
    ) -> R:
        """Send a request and wait for its result; `timeout` covers queueing, sending and
        waiting. Ctrl-C gives up the call and tells the peer (`$/cancel_request`)."""
        engine = self.engine
        deadline = deadline_after(timeout)
        if not self._wait(engine.can_queue, engine.space, deadline):
            raise send_timeout(row, timeout)
        request_id, waiter = engine.begin_call(row, params, check_capability=check_capability)
        assert isinstance(waiter, concurrent.futures.Future)
        try:
            outcome: Outcome[R] = waiter.result(time_left(deadline))
        except TimeoutError:
            error = engine.end_call(request_id, timed_out=True)
            if error is not None:
                raise error from None
            outcome = waiter.result(0)
        except KeyboardInterrupt:
            engine.end_call(request_id, timed_out=False)
            raise
        value: R = outcome.unwrap()
        self.settle()
        return value

    def notify(
        self,
        row: Notification[Any],
        params: Any,
        *,
        timeout: float | None = None,
        check_capability: bool = True,
    ) -> None:
        """Queue a notification, waiting (up to `timeout`) while the send buffer is full."""
        if not self._wait(self.engine.can_queue, self.engine.space, deadline_after(timeout)):
            raise send_timeout(row, timeout)
        self.engine.notify(row, params, check_capability=check_capability)

    def begin_turn(self, row: Method[Any, Any], params: Any) -> tuple[RequestId, Sink]:
        self._wait(self.engine.can_queue, self.engine.space, None)
        return self.engine.begin_turn(row, params)

    def next_update(self, sink: Sink) -> tuple[bool, Any]:
        """The turn's next update, waiting for it; (False, None) once the turn ended."""
        self._wait(sink.ready, self.engine.delivered, None)
        with self.engine.lock:
            return self.engine.next_update(sink)

    def settle(self) -> None:
        """Wait until callbacks for notifications received so far have run, so a call
        returns after them (not from a callback: it would wait on itself)."""
        if threading.get_ident() == self._callback_ident:
            return
        engine = self.engine
        with engine.lock:
            target = engine.callbacks_queued
        self._wait(lambda: engine.settled(target), engine.delivered, None)

    # ------------------------------------------------------------------ threads

    def _start_handler(self, request_id: RequestId, row: Row, params: Any) -> Cancellable:
        try:
            return _Queued(self._pool.submit(self._run_handler, request_id, row, params))
        except RuntimeError:  # the pool is shut down: we are closing
            return _Queued(None)

    def _run_handler(self, request_id: RequestId, row: Row, params: Any) -> None:
        try:
            result = self._serve(row, params)
        except Exception as error:
            self.engine.answer(request_id, error=error)
        else:
            self.engine.answer(request_id, result)

    def _read_loop(self) -> None:
        engine = self.engine
        try:
            while True:
                self._wait(engine.reader_may_read, engine.may_read, None)
                try:
                    data = self.transport.read(READ_CHUNK)
                except (OSError, ValueError):
                    data = b""
                if not data:
                    break
                engine.feed(data)
            reason = ConnectionClosed("the peer closed the connection")
            process = self.transport.process
            if process is not None:
                for delay in process.exit_steps():
                    time.sleep(delay)
                reason = process.exit_reason()
            engine.end_of_input(reason)
        except Exception:  # a bug here must not leave callers waiting forever
            log.exception("the reader failed")
            engine.shutdown(ConnectionClosed("the connection failed (see the log)"))

    def _write_loop(self) -> None:
        engine = self.engine
        try:
            while True:
                self._wait(engine.writer_has_work, engine.to_write, None)
                with engine.lock:
                    batch = engine.take_batch()
                if batch is None:
                    return
                try:
                    self.transport.write(batch.data)
                except (OSError, ValueError) as error:
                    log.debug("write failed: %s", error)
                    engine.close_output(flush=False)
                    return
                engine.wrote(batch)
        finally:
            with contextlib.suppress(Exception):
                self.transport.close_write()

    def _callback_loop(self) -> None:
        engine = self.engine
        self._callback_ident = threading.get_ident()
        while True:
            self._wait(engine.callback_ready, engine.delivered, None)
            with engine.lock:
                job = engine.next_callback()
            if job is None:
                return
            function, params = job
            try:
                function(params)
            except Exception:
                log.exception("a notification callback failed")
            finally:
                engine.callback_finished()

    def _stderr_loop(self) -> None:
        process = self.transport.process
        assert process is not None
        fd = process.stderr_pipe.fileno()
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except (OSError, ValueError):
                chunk = b""
            process.stderr.feed(chunk)
            if not chunk:
                return

    # ------------------------------------------------------------------ closing

    def close(self, close_timeout: float, terminate_timeout: float) -> None:
        """Fail what is pending, flush and close the peer's input, stop the agent's
        process group (escalating), and join every thread, within
        close_timeout + terminate_timeout + CLOSE_SLACK seconds. Idempotent."""
        if self._closed:
            return
        self._closed = True
        started = time.monotonic()
        engine = self.engine
        engine.shutdown(ConnectionClosed("the client was closed"))
        engine.close_output(flush=True)
        process = self.transport.process
        if process is not None:
            for delay in process.stop_steps(close_timeout, terminate_timeout):
                time.sleep(delay)
        bound = started + close_timeout + terminate_timeout + CLOSE_SLACK - 0.2
        current = threading.current_thread()
        for thread in self._threads:
            if thread is not current and thread.is_alive():
                thread.join(max(0.0, min(JOIN_WAIT, bound - time.monotonic())))
        self._pool.shutdown(wait=False, cancel_futures=True)
        if process is not None and not any(t.is_alive() for t in self._threads[:2]):
            process.close_pipes()
