"""The blocking driver: performs the flows' operations by blocking, on threads.

Threads: a reader, a writer (the only thread that ever blocks on the peer's input), a
callback runner, a stderr drain, and a bounded pool for the peer's requests. Waiting is
`threading.Condition` over the engine's lock. What each thread does is a flow
(`flows.py`); this module only says how to wait, read and write.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import inspect
import os
import select
import threading
import time
from collections.abc import Callable, Sequence
from typing import IO, Any, Final, TypeVar

from acp_sdk._driver import flows
from acp_sdk._driver.engine import Callback, Engine, Serve
from acp_sdk._driver.flows import AwaitCall, Flow, Read, Run, Until, Write
from acp_sdk._driver.process import CLOSE_SLACK, AgentProcess
from acp_sdk._driver.turn import time_left
from acp_sdk._driver.vocabulary import Cancellable, Expired, Limits, Outcome
from acp_sdk.protocol._connection import Connection
from acp_sdk.protocol._jsonrpc import RequestId
from acp_sdk.protocol._rows import Row

T = TypeVar("T")
WRITE_POLL: Final = 0.5
"""Seconds the writer waits for room in the pipe before it tries again."""
JOIN_WAIT: Final = 0.5
"""Seconds close() waits for each thread that should already be finishing."""
_PIPE_OF: Final = {"writer": "stdin", "reader": "stdout", "stderr": "stderr"}
"""The agent's pipe each loop uses, which it closes itself if it outlives close()."""


class _Condition:
    """A signal threads wait on: a condition over the engine's lock."""

    __slots__ = ("condition", "waiting")

    def __init__(self, lock: threading.Lock) -> None:
        self.condition = threading.Condition(lock)
        self.waiting = 0  # threads in wait(); read and changed only under the lock

    def notify(self) -> None:
        # The reader notifies once per update; `notify_all` costs several Python calls
        # even when nobody waits. `waiting` counts the threads that started waiting
        # since the last notify (at least those not yet woken): once they are woken,
        # the next updates (before a waiter runs again) cost nothing.
        if self.waiting:
            self.waiting = 0
            self.condition.notify_all()

    def wait(self, timeout: float | None) -> None:
        # Not decremented on the way out: a waiter that timed out leaves a count that
        # only costs one needless notify_all.
        self.waiting += 1
        self.condition.wait(timeout)


class _Queued:
    """A request handler waiting in (or running from) the pool."""

    __slots__ = ("_future",)

    def __init__(self, future: concurrent.futures.Future[None] | None) -> None:
        self._future = future

    def cancel(self) -> bool:
        # True only when it had not started: it never will, so the engine answers.
        return self._future is not None and self._future.cancel()


class StreamTransport:
    """Blocking reads and writes to a peer (an agent process, or two file objects)."""

    def __init__(
        self, read: Callable[[int], bytes], write: Callable[[bytes], Any], close: Callable[[], Any]
    ) -> None:
        self.read = read
        self.write = write
        self.close_write = close
        self.try_write: Callable[[bytes], int] | None = None
        self.process: AgentProcess | None = None
        self.messages = False
        """True for a message-framed transport: each read is one whole message, each
        write one frame (see `acp_sdk.remote`)."""

    @classmethod
    def of_process(cls, process: AgentProcess) -> StreamTransport:
        out_fd = process.stdout.fileno()
        in_fd = process.stdin.fileno()
        # Non-blocking: callers hand frames to the pipe directly when it has room
        # (`try_write`, under the engine's lock: it never blocks); the writer thread
        # waits for room with select() for the rest.
        os.set_blocking(in_fd, False)

        def write(data: bytes) -> None:
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(in_fd, view) :]
                except BlockingIOError:
                    select.select([], [in_fd], [], WRITE_POLL)

        def try_write(data: bytes) -> int:
            try:
                return os.write(in_fd, data)
            except BlockingIOError:
                return 0

        transport = cls(lambda n: os.read(out_fd, n), write, process.stdin.close)
        transport.try_write = try_write
        transport.process = process
        return transport

    @classmethod
    def of_files(cls, reader: IO[bytes], writer: IO[bytes]) -> StreamTransport:
        read1 = getattr(reader, "read1", None)

        def write(data: bytes) -> None:
            writer.write(data)
            writer.flush()

        return cls(read1 if read1 is not None else reader.read, write, writer.close)


def _new_future() -> concurrent.futures.Future[Outcome[Any]]:
    return concurrent.futures.Future()


def refuse_awaitable(result: object, what: str) -> None:
    """The blocking driver cannot await: a coroutine user code returned is closed (never
    awaited, and said so now rather than as a warning later) and refused."""
    if inspect.isawaitable(result):
        close = getattr(result, "close", None)
        if callable(close):
            close()
        raise TypeError(f"{what} needs AsyncClient, not Client")


class ThreadDriver:
    """Runs one engine's flows on threads; what the blocking `Client` is built on."""

    def __init__(
        self,
        connection: Connection,
        transport: StreamTransport,
        *,
        serve: Serve,
        notification_callbacks: Callable[[Row, Any], Sequence[Callback]],
        on_update: Callback | None,
        limits: Limits,
        workers: int,
    ) -> None:
        self.transport = transport
        self.process = transport.process
        self._serve = serve
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="acp-handler"
        )
        lock = threading.Lock()
        self.engine: Engine[_Condition] = Engine(
            connection,
            limits=limits,
            new_signal=lambda: _Condition(lock),
            new_waiter=_new_future,
            start_handler=self._start_handler,
            notification_callbacks=notification_callbacks,
            on_update=on_update,
            lock=lock,
        )
        self.engine.try_write = transport.try_write
        self.engine.on_callback_runner = self._on_callback_runner
        engine = self.engine
        self._callback_thread: threading.Thread | None = None
        loops: list[tuple[str, Flow[None]]] = [
            ("reader", flows.read_loop(engine, self.process, transport.messages)),
            ("writer", flows.write_loop(engine)),
            ("callbacks", flows.callback_loop(engine)),
            ("clock", flows.clock_loop(engine)),
        ]
        if self.process is not None:
            loops.append(("stderr", flows.stderr_loop(self.process)))
        # Daemons: a grandchild holding a pipe open must not keep the interpreter alive;
        # close() still joins them, within its bound.
        self._threads = [
            threading.Thread(target=self._loop, args=(name, flow), name=f"acp-{name}", daemon=True)
            for name, flow in loops
        ]
        self._callback_thread = self._threads[2]
        self._closed = False

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def _loop(self, name: str, flow: Flow[None]) -> None:
        try:
            self.run(flow)
        finally:
            pipe = _PIPE_OF.get(name)
            if self._closed and pipe is not None and self.process is not None:
                # close() left this loop's pipe open, the loop being still alive when its
                # wait ended (a busy machine); closed here, not left to the garbage
                # collector (a ResourceWarning). Closing twice is harmless.
                self.process.close_pipes(**{p: p == pipe for p in _PIPE_OF.values()})

    # ------------------------------------------------------------------ the trampoline

    def run(self, flow: Flow[T]) -> T:
        """Run a flow to its end, blocking for each operation it yields."""
        steps = flows.Steps(flow)
        while (op := steps.next()) is not None:
            try:
                steps.value = self._perform(op)
            except BaseException as raised:  # an interruption or an expired deadline
                steps.error = raised
        return steps.result

    def _perform(self, op: flows.Op) -> Any:
        """Every operation a flow yields, performed by blocking: the one dispatch."""
        match op:
            case Until():
                return self._until(op)
            case AwaitCall(waiter=future, deadline=deadline):
                try:
                    return future.result(time_left(deadline))  # type: ignore[call-arg] # a concurrent future
                except concurrent.futures.TimeoutError:
                    raise Expired from None
            case Read():
                return self._read(op)
            case Write(data=b""):
                with contextlib.suppress(Exception):
                    self.transport.close_write()
                return True
            case Write(data=data):
                try:
                    self.transport.write(data)
                except (OSError, ValueError):
                    return False
                return True
            case Run(function=function, argument=argument):
                result = function(*argument)
                refuse_awaitable(result, "a coroutine callback")
                return result
            case _:
                raise TypeError(f"unknown operation {op!r}")

    def _until(self, op: Until) -> bool:
        signal: _Condition = op.signal  # type: ignore[assignment] # our engine's signals
        with self.engine.lock:
            while not op.ready():
                left = time_left(op.deadline)
                if left == 0:
                    break
                signal.wait(left)
            else:
                return True
        time.sleep(0)  # a passed deadline still lets other threads (the writer) run once
        with self.engine.lock:
            return op.ready()

    def _on_callback_runner(self) -> bool:
        return threading.current_thread() is self._callback_thread

    def _read(self, op: Read) -> bytes:
        try:
            if op.stderr:
                assert self.process is not None
                return os.read(self.process.stderr_pipe.fileno(), flows.READ_CHUNK)
            return self.transport.read(flows.READ_CHUNK)
        except (OSError, ValueError):
            return b""

    def _start_handler(self, request_id: RequestId, row: Row, params: Any) -> Cancellable:
        flow = flows.handle(self.engine, self._serve, request_id, row, params)
        try:
            return _Queued(self._pool.submit(self.run, flow))
        except RuntimeError:  # the pool is shut down: we are closing
            return _Queued(None)

    # ------------------------------------------------------------------ closing

    def close(self, close_timeout: float, terminate_timeout: float, reason: str) -> None:
        """Run the close flow, then join every thread, within
        close_timeout + terminate_timeout + CLOSE_SLACK seconds. Idempotent."""
        if self._closed:
            return
        self._closed = True
        bound = time.monotonic() + close_timeout + terminate_timeout + CLOSE_SLACK - 0.2
        self.run(flows.close(self.engine, self.process, close_timeout, terminate_timeout, reason))
        current = threading.current_thread()
        for thread in self._threads:
            if thread is not current and thread.is_alive():
                thread.join(max(0.0, min(JOIN_WAIT, bound - time.monotonic())))
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self.process is not None:
            # Each pipe once the thread using it is done (close() may run on the callback
            # thread itself); a thread still blocked on a pipe keeps it (an escaped
            # grandchild holds the other end).
            reader, writer = self._threads[0], self._threads[1]
            stderr = self._threads[4] if len(self._threads) > 4 else None
            self.process.close_pipes(
                stdin=not writer.is_alive(),
                stdout=not reader.is_alive(),
                stderr=stderr is None or not stderr.is_alive(),
            )
