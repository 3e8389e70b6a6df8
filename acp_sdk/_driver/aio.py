"""The asyncio driver: the engine moved by tasks.

Tasks: a reader (bytes -> engine), a writer (engine queue -> `write` + `drain`; the
only task that ever waits on the peer's input), a callback runner (notification
callbacks, one at a time, in order) and one task per request of the peer. Waiting is a
pulse: a future per waiter, resolved whenever the engine's state changes. Every task is
owned and awaited on close. No protocol or endpoint rule lives here: those are the
connection's and the engine's.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Callable
from typing import Any, Final, Protocol, TypeVar

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
ANSWER_GRACE: Final = 5.0
"""Seconds handlers may still answer after the peer ended its input."""


class AsyncByteReader(Protocol):
    async def read(self, n: int = -1, /) -> bytes: ...


class AsyncByteWriter(Protocol):
    def write(self, data: bytes, /) -> Any: ...
    async def drain(self) -> None: ...
    def close(self) -> Any: ...


class _Pulse:
    """A signal tasks wait on: every `notify()` resolves the futures handed out so far."""

    __slots__ = ("_waiters",)

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] = []

    def notify(self) -> None:
        if self._waiters:
            for waiter in self._waiters:
                if not waiter.done():
                    waiter.set_result(None)
            self._waiters.clear()

    def next(self) -> asyncio.Future[None]:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        return waiter


class _HandlerTask:
    def __init__(self, task: asyncio.Task[None]) -> None:
        self._task = task

    def cancel(self) -> bool:
        self._task.cancel()
        return False  # the task answers from its own cancellation


class AsyncDriver:
    """Runs one engine with asyncio tasks: what `AsyncClient` and the agent runtime use."""

    def __init__(
        self,
        connection: Connection,
        reader: AsyncByteReader,
        writer: AsyncByteWriter,
        *,
        serve: Serve,
        notification_callbacks: Callable[[Row, Any], list[Callback]],
        on_update: Callback | None = None,
        limits: Limits,
        process: AgentProcess | None = None,
        stderr: AsyncByteReader | None = None,
        closers: tuple[Callable[[], Any], ...] = (),
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._stderr = stderr
        self._closers = closers
        self.process = process
        self._serve = serve
        self.engine: Engine[_Pulse] = Engine(
            connection,
            limits=limits,
            new_signal=_Pulse,
            new_waiter=lambda: asyncio.get_running_loop().create_future(),
            start_handler=self._start_handler,
            notification_callbacks=notification_callbacks,
            on_update=on_update,
        )
        self._tasks: set[asyncio.Task[Any]] = set()
        self._io_tasks: list[asyncio.Task[None]] = []
        self._callback_task: asyncio.Task[None] | None = None
        self._closed = False

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._io_tasks = [loop.create_task(self._read_loop()), loop.create_task(self._write_loop())]
        if self._stderr is not None:
            self._io_tasks.append(loop.create_task(self._stderr_loop(self._stderr)))
        self._callback_task = loop.create_task(self._callback_loop())

    # ------------------------------------------------------------------ waiting

    async def _wait(self, ready: Callable[[], bool], pulse: _Pulse, deadline: float | None) -> bool:
        while True:
            with self.engine.lock:
                if ready():
                    return True
                waiter = pulse.next()
            left = time_left(deadline)
            if left == 0:
                return False
            if left is None:
                await waiter
                continue
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(waiter, left)

    async def call(
        self,
        row: Method[Any, R],
        params: Any,
        *,
        timeout: float | None = None,
        check_capability: bool = True,
    ) -> R:
        """Send a request and wait for its result; `timeout` covers queueing, sending and
        waiting. Cancelling the waiting task gives up the call and tells the peer."""
        engine = self.engine
        deadline = deadline_after(timeout)
        if not await self._wait(engine.can_queue, engine.space, deadline):
            raise send_timeout(row, timeout)
        request_id, waiter = engine.begin_call(row, params, check_capability=check_capability)
        assert isinstance(waiter, asyncio.Future)
        try:
            left = time_left(deadline)
            if left is None:
                outcome: Outcome[R] = await waiter
            else:
                outcome = await asyncio.wait_for(asyncio.shield(waiter), left)
        except asyncio.TimeoutError:
            error = engine.end_call(request_id, timed_out=True)
            if error is not None:
                raise error from None
            outcome = waiter.result()
        except asyncio.CancelledError:
            engine.end_call(request_id, timed_out=False)
            raise
        value: R = outcome.unwrap()
        await self.settle()
        return value

    async def notify(
        self,
        row: Notification[Any],
        params: Any,
        *,
        timeout: float | None = None,
        check_capability: bool = True,
    ) -> None:
        """Queue a notification, waiting (up to `timeout`) while the send buffer is full."""
        engine = self.engine
        if not await self._wait(engine.can_queue, engine.space, deadline_after(timeout)):
            raise send_timeout(row, timeout)
        engine.notify(row, params, check_capability=check_capability)

    async def begin_turn(self, row: Method[Any, Any], params: Any) -> tuple[RequestId, Sink]:
        await self._wait(self.engine.can_queue, self.engine.space, None)
        return self.engine.begin_turn(row, params)

    async def next_update(self, sink: Sink) -> tuple[bool, Any]:
        """The turn's next update, waiting for it; (False, None) once the turn ended."""
        if not sink.ready():
            await self._wait(sink.ready, self.engine.delivered, None)
        with self.engine.lock:
            return self.engine.next_update(sink)

    async def settle(self) -> None:
        """Wait until callbacks for notifications received so far have run (not from a
        callback: it would wait on itself)."""
        engine = self.engine
        if engine.settled(engine.callbacks_queued) or asyncio.current_task() is (
            self._callback_task
        ):
            return
        target = engine.callbacks_queued
        await self._wait(lambda: engine.settled(target), engine.delivered, None)

    async def input_ended(self) -> None:
        """Wait until the peer closed its output (or the connection closed)."""
        engine = self.engine
        await self._wait(
            lambda: engine.input_ended or engine.close_reason is not None, engine.may_read, None
        )

    # ------------------------------------------------------------------ tasks

    def _start_handler(self, request_id: RequestId, row: Row, params: Any) -> Cancellable:
        task = asyncio.get_running_loop().create_task(self._run_handler(request_id, row, params))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return _HandlerTask(task)

    async def _run_handler(self, request_id: RequestId, row: Row, params: Any) -> None:
        try:
            result = self._serve(row, params)
            if inspect.isawaitable(result):
                result = await result
        except asyncio.CancelledError:
            self.engine.answer(request_id, cancelled=True)
        except Exception as error:
            self.engine.answer(request_id, error=error)
        else:
            self.engine.answer(request_id, result)

    async def _read_loop(self) -> None:
        engine = self.engine
        try:
            while True:
                await self._wait(engine.reader_may_read, engine.may_read, None)
                try:
                    data = await self._reader.read(READ_CHUNK)
                except (OSError, ValueError):
                    data = b""
                if not data:
                    break
                engine.feed(data)
            reason = ConnectionClosed("the peer closed the connection")
            if self.process is not None:
                for delay in self.process.exit_steps():
                    await asyncio.sleep(delay)
                reason = self.process.exit_reason()
            engine.end_of_input(reason)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug here must not leave callers waiting forever
            log.exception("the reader failed")
            engine.shutdown(ConnectionClosed("the connection failed (see the log)"))

    async def _write_loop(self) -> None:
        engine = self.engine
        try:
            while True:
                await self._wait(engine.writer_has_work, engine.to_write, None)
                with engine.lock:
                    batch = engine.take_batch()
                if batch is None:
                    return
                try:
                    self._writer.write(batch.data)
                    await self._writer.drain()
                except (OSError, RuntimeError, ValueError) as error:
                    log.debug("write failed: %s", error)
                    engine.close_output(flush=False)
                    return
                engine.wrote(batch)
        finally:
            with contextlib.suppress(Exception):
                self._writer.close()

    async def _callback_loop(self) -> None:
        engine = self.engine
        while True:
            await self._wait(engine.callback_ready, engine.delivered, None)
            with engine.lock:
                job = engine.next_callback()
            if job is None:
                return
            function, params = job
            try:
                outcome = function(params)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception:
                log.exception("a notification callback failed")
            finally:
                engine.callback_finished()

    async def _stderr_loop(self, stream: AsyncByteReader) -> None:
        assert self.process is not None
        while True:
            try:
                chunk = await stream.read(READ_CHUNK)
            except (OSError, ValueError):
                chunk = b""
            self.process.stderr.feed(chunk)
            if not chunk:
                return

    # ------------------------------------------------------------------ closing

    async def finish_handlers(self, grace: float = ANSWER_GRACE) -> None:
        """Let handlers still running answer, for at most `grace` seconds."""
        engine = self.engine
        await self._wait(lambda: engine.serving == 0, engine.may_read, deadline_after(grace))

    async def aclose(
        self,
        close_timeout: float = 2.0,
        terminate_timeout: float = 2.0,
        *,
        reason: str = "the connection was closed",
    ) -> None:
        """Fail what is pending, flush and close the peer's input, stop the agent's
        process group (escalating), and await every task, within
        close_timeout + terminate_timeout + CLOSE_SLACK seconds. Idempotent."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        bound = loop.time() + close_timeout + terminate_timeout + CLOSE_SLACK - 0.3
        engine = self.engine
        engine.shutdown(ConnectionClosed(reason))
        engine.close_output(flush=True)
        if self.process is not None:
            for delay in self.process.stop_steps(close_timeout, terminate_timeout):
                await asyncio.sleep(delay)
        # The reader, writer and stderr drain end by themselves once the agent is gone;
        # a grandchild that escaped the group may hold a pipe open: cut it off.
        current = asyncio.current_task()
        io_tasks = [t for t in self._io_tasks if t is not current and not t.done()]
        if io_tasks:
            await asyncio.wait(io_tasks, timeout=max(0.05, min(1.0, bound - loop.time())))
        tasks = [t for t in (*self._io_tasks, *self._tasks, self._callback_task) if t is not None]
        tasks = [t for t in tasks if t is not current]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=max(0.05, bound - loop.time()))
        for close in self._closers:
            with contextlib.suppress(Exception):
                close()
