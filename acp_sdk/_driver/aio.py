"""The asyncio driver: performs the flows' operations by awaiting, in tasks.

Tasks: a reader, a writer (`write` + `drain`; the only task that ever waits on the
peer's input), a callback runner, a stderr drain, and one task per request of the peer.
Waiting is a pulse: a future per waiter, resolved whenever the engine's state changes.
Every task is owned and awaited on close. What each task does is a flow (`flows.py`);
this module only says how to wait, read and write.

Over a pipe (`PipeFeed`: the agent's stdout, an agent's own stdin) the bytes skip the
reader task: the transport's callback feeds the engine, and the reader task only waits
for the end of input. The handlers that feed starts begin at once there, on Python
3.12+ (an eager task: it runs until it first waits, with `current_task()` its own);
before 3.12 they start on the next loop iteration, as over any other reader.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import sys
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from acp_sdk._driver import flows
from acp_sdk._driver.engine import Callback, Engine, Serve
from acp_sdk._driver.feed import PipeFeed
from acp_sdk._driver.flows import AwaitCall, Flow, Read, Run, Until, Write
from acp_sdk._driver.process import CLOSE_SLACK, AgentProcess
from acp_sdk._driver.turn import time_left
from acp_sdk._driver.vocabulary import Cancellable, Expired, Limits, Outcome
from acp_sdk.protocol._connection import Connection
from acp_sdk.protocol._errors import ConnectionClosed
from acp_sdk.protocol._jsonrpc import RequestId
from acp_sdk.protocol._rows import Method, Notification, Row

T = TypeVar("T")
log = logging.getLogger("acp_sdk.driver")
EAGER_START: bool = sys.version_info >= (3, 12)
"""Handlers started by a pipe's feed run at once (`Task(eager_start=True)`, 3.12+)."""


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
        waiters = self._waiters
        if len(waiters) >= 64:
            # Waits that timed out leave their futures here until the next notify; a
            # signal rarely notified (the turns' clock) must not collect them forever.
            waiters[:] = [w for w in waiters if not w.done()]
        waiters.append(waiter)
        return waiter


class _HandlerTask:
    """A handler's task, or (started after the feed that received its request) the
    place it will be."""

    __slots__ = ("cancelled", "task")

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self.cancelled = False

    def cancel(self) -> bool:
        if self.task is None:
            # Not started yet: it never will be, so the engine answers for it (as for
            # queued pool work).
            self.cancelled = True
            return True
        self.task.cancel()
        return False  # the task answers from its own cancellation


class AsyncDriver:
    """Runs one engine's flows in asyncio tasks: what `AsyncClient` and the agent
    runtime are built on."""

    def __init__(
        self,
        connection: Connection,
        reader: AsyncByteReader | PipeFeed,
        writer: AsyncByteWriter,
        *,
        serve: Serve,
        notification_callbacks: Callable[[Row, Any], Sequence[Callback]],
        on_update: Callback | None = None,
        limits: Limits,
        process: AgentProcess | None = None,
        stderr: AsyncByteReader | None = None,
        closers: tuple[Callable[[], Any], ...] = (),
        messages: bool = False,
    ) -> None:
        self._messages = messages  # each read is one whole message (acp_sdk.remote)
        self._reader = reader
        self._pipe = reader if isinstance(reader, PipeFeed) else None
        self._feeding = False  # in the pipe's feed: handlers start after it (eagerly)
        self._to_start: list[tuple[_HandlerTask, RequestId, Flow[None]]] = []
        self._resumer: asyncio.Task[None] | None = None
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
        transport = getattr(writer, "transport", None)
        self._transport: Any = transport
        if transport is not None and hasattr(transport, "get_write_buffer_size"):
            self.engine.try_write = self._try_write
            self.engine.cork = self._cork
        self.engine.on_callback_runner = self._on_callback_runner
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loops: list[asyncio.Task[None]] = []
        self._callback_task: asyncio.Task[None] | None = None
        self._closed = False

    def start(self) -> None:
        engine = self.engine
        loops = [
            flows.read_loop(engine, self.process, self._messages),
            flows.write_loop(engine),
            flows.clock_loop(engine),
        ]
        if self.process is not None and self._stderr is not None:
            loops.append(flows.stderr_loop(self.process))
        loop = asyncio.get_running_loop()
        self._loops = [loop.create_task(self.run(flow)) for flow in loops]
        self._callback_task = loop.create_task(self.run(flows.callback_loop(engine)))
        if self._pipe is not None:
            self._pipe.attach(self._fed, self._reading_paused)

    # ------------------------------------------------------------------ the trampoline

    async def run(self, flow: Flow[T]) -> T:
        """Run a flow to its end, awaiting each operation it yields."""
        steps = flows.Steps(flow)
        while (op := steps.next()) is not None:
            try:
                steps.value = await self._perform(op)
            except BaseException as raised:  # an interruption or an expired deadline
                steps.error = raised
        return steps.result

    async def call(
        self,
        row: Method[Any, T],
        params: Any,
        timeout: float | None = None,
        check_capability: bool = True,
    ) -> T:
        """`flows.call`, without the trampoline in the common case (no deadline, room to
        queue): the engine's `Call` steps around one await, as the flow does them."""
        engine = self.engine
        if timeout is not None or not engine.can_queue():
            return await self.run(flows.call(engine, row, params, timeout, check_capability))
        started = engine.start_call(row, params, check_capability=check_capability)
        future: asyncio.Future[Outcome[T]] = started.waiter  # type: ignore[assignment] # ours
        try:
            outcome = await future
        except BaseException as error:
            outcome = started.interrupted(error)
        value: T = started.result(outcome)
        if not started.settled():
            await self.run(flows.settle(engine, started.settle_target))
        return value

    async def notify(
        self,
        row: Notification[Any],
        params: Any,
        timeout: float | None = None,
        check_capability: bool = True,
    ) -> None:
        """`flows.notify`, without the trampoline while there is room to queue (an
        agent's `send_update` stream); the flow itself when the sender must wait."""
        engine = self.engine
        if not engine.can_queue():
            await self.run(flows.notify(engine, row, params, timeout, check_capability))
        elif engine.send_notification(row, params, check_capability=check_capability):
            await asyncio.sleep(0)  # let the writer run (see Engine.send_notification)

    async def _perform(self, op: flows.Op) -> Any:
        """Every operation a flow yields, performed by awaiting: the one dispatch."""
        match op:
            case Until():
                return await self._until(op)
            case AwaitCall(waiter=waiter, deadline=deadline):
                future: asyncio.Future[Any] = waiter  # type: ignore[assignment] # ours
                left = time_left(deadline)
                if left is None:
                    return await future
                try:
                    return await asyncio.wait_for(asyncio.shield(future), left)
                except asyncio.TimeoutError:
                    raise Expired from None
            case Read(stderr=False) if self._pipe is not None:
                # The pipe feeds the engine itself (`_fed`): the read loop only learns
                # that the input ended.
                await asyncio.shield(self._pipe.ended)
                return b""
            case Read(stderr=stderr):
                stream = self._stderr if stderr else self._reader
                assert stream is not None
                assert not isinstance(stream, PipeFeed)
                try:
                    return await stream.read(flows.READ_CHUNK)
                except (OSError, ValueError):
                    return b""
            case Write(data=b""):
                await self._close_write()
                return True
            case Write(data=data):
                try:
                    self._writer.write(data)
                    await self._writer.drain()
                except (OSError, RuntimeError, ValueError):
                    return False
                return True
            case Run(function=function, argument=argument):
                try:
                    outcome = function(*argument)
                except asyncio.CancelledError:  # no await yet, so not our cancellation
                    raise RuntimeError("user code raised CancelledError") from None
                return await _await_user(outcome) if inspect.isawaitable(outcome) else outcome
            case _:
                raise TypeError(f"unknown operation {op!r}")

    async def _close_write(self) -> None:
        # What the transport still buffers must reach the peer before we close (an owed
        # answer to a client that reads late); the close bound cancels this wait for a
        # peer that never reads.
        transport: Any = getattr(self._writer, "transport", None)
        with contextlib.suppress(Exception):
            while transport is not None and transport.get_write_buffer_size():
                if transport.is_closing():
                    break
                await asyncio.sleep(0.005)
        with contextlib.suppress(Exception):
            closing = self._writer.close()
            if inspect.isawaitable(closing):  # a remote transport's goodbye
                await closing

    async def _until(self, op: Until) -> bool:
        pulse: _Pulse = op.signal  # type: ignore[assignment] # our engine's signals
        while True:
            with self.engine.lock:
                if op.ready():
                    return True
                left = time_left(op.deadline)
                waiter = pulse.next() if left != 0 else None
            if waiter is None:
                await asyncio.sleep(0)  # a passed deadline still lets others run once
                with self.engine.lock:
                    return op.ready()
            if left is None:
                await waiter
            else:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(waiter, left)

    def _on_callback_runner(self) -> bool:
        task = asyncio.current_task()
        while task is not None and task is not self._callback_task:
            task = _RUNS_FOR.get(task)  # Python 3.10: user code runs in a child task
        return task is not None

    def _try_write(self, data: bytes) -> int:
        """Hand a frame to the transport now when nothing is buffered in it (it writes to
        the OS at once; what does not fit stays in its buffer, at most this frame)."""
        transport: Any = self._transport
        if transport.is_closing():
            raise BrokenPipeError("the transport is closing")
        if transport.get_write_buffer_size():
            return 0
        self._writer.write(data)
        return len(data)

    def _cork(self) -> None:
        """A notification was just written directly: frames that follow in this loop
        iteration are queued for the writer task (see `Engine.corked`)."""
        try:
            asyncio.get_running_loop().call_soon(self._uncork)
        except RuntimeError:  # not on the loop's thread: nothing would uncork it
            self.engine.corked = False

    def _uncork(self) -> None:
        self.engine.corked = False  # what was queued meanwhile already woke the writer

    # ------------------------------------------------------------------ a pipe's feed

    def _fed(self, data: bytes) -> bool:
        """Bytes from the pipe, in its `data_received`: into the engine, then start the
        handlers they asked for. Returns whether the engine's rules let us read on."""
        engine = self.engine
        self._feeding = True
        try:
            engine.feed(data)
        except Exception:  # a bug here must not leave callers waiting forever
            log.exception("the reader failed")
            engine.shutdown(ConnectionClosed("the connection failed (see the log)"))
        finally:
            self._feeding = False
        if self._to_start:
            self._start_pending()
        return engine.reader_may_read()

    def _reading_paused(self) -> None:
        """The pipe stopped reading (the engine's rules): resume it once they allow."""
        if self._resumer is None:
            self._resumer = asyncio.get_running_loop().create_task(self._resume_reading())
            self._tasks.add(self._resumer)
            self._resumer.add_done_callback(self._tasks.discard)

    async def _resume_reading(self) -> None:
        engine = self.engine
        await self._until(Until(engine.reader_may_read, engine.may_read, None))
        self._resumer = None
        assert self._pipe is not None
        self._pipe.resume()

    # ------------------------------------------------------------------ handlers

    def _start_handler(self, request_id: RequestId, row: Row, params: Any) -> Cancellable:
        flow = flows.handle(self.engine, self._serve, request_id, row, params)
        handle = _HandlerTask()
        if self._feeding and EAGER_START:
            # Called under the engine's lock, which an eager task would need: it starts
            # right after the feed instead (`_start_pending`), before the loop runs on.
            self._to_start.append((handle, request_id, flow))
        else:
            self._spawn(handle, request_id, flow, eager=False)
        return handle

    def _start_pending(self) -> None:
        pending, self._to_start = self._to_start, []
        eager = asyncio.get_running_loop().get_task_factory() is None  # else: the user's
        for handle, request_id, flow in pending:
            if not handle.cancelled:  # else the engine answered it
                self._spawn(handle, request_id, flow, eager=eager)

    def _spawn(
        self, handle: _HandlerTask, request_id: RequestId, flow: Flow[None], *, eager: bool
    ) -> None:
        loop = asyncio.get_running_loop()
        task: asyncio.Task[None]
        if sys.version_info >= (3, 12) and eager:
            task = asyncio.Task(self.run(flow), loop=loop, eager_start=True)
        else:
            task = loop.create_task(self.run(flow))
        handle.task = task

        def ended(task: asyncio.Task[None]) -> None:
            self._tasks.discard(task)
            if task.cancelled():
                # Cancelled before it first ran (its cancel came in the same read as the
                # request), it never entered the flow that answers: answer it here.
                self.engine.answer_unanswered(request_id, handle)

        if task.done():  # an eager task that never waited: it answered already
            ended(task)
            return
        self._tasks.add(task)
        task.add_done_callback(ended)

    # ------------------------------------------------------------------ closing

    async def aclose(
        self, close_timeout: float = 2.0, terminate_timeout: float = 2.0, *, reason: str
    ) -> None:
        """Run the close flow, then await every task, within
        close_timeout + terminate_timeout + CLOSE_SLACK seconds. Idempotent."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        bound = loop.time() + close_timeout + terminate_timeout + CLOSE_SLACK - 0.3
        engine = self.engine
        await self.run(flows.close(engine, self.process, close_timeout, terminate_timeout, reason))
        # The loops end by themselves once the agent is gone; a grandchild that escaped
        # the group may hold a pipe open: cut it off.
        current = asyncio.current_task()
        loops = [t for t in self._loops if t is not current and not t.done()]
        if loops:
            await asyncio.wait(loops, timeout=max(0.05, bound - loop.time()))
        tasks = [t for t in (*self._loops, *self._tasks, self._callback_task) if t is not None]
        tasks = [t for t in tasks if t is not current]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=max(0.05, bound - loop.time()))
        for close in (self._writer.close, *self._closers):
            with contextlib.suppress(Exception):
                close()


PIPE_LIMIT = 1 << 16
"""asyncio's default StreamReader limit; frames are framed by the engine, not by the reader."""


async def open_process_pipes(
    process: AgentProcess,
) -> tuple[AsyncByteReader, AsyncByteWriter, AsyncByteReader, tuple[Callable[[], Any], ...]]:
    """asyncio streams over the agent's pipes. The transports are closed explicitly at
    close (never left to the garbage collector, which would warn after the loop ends)."""
    stdout = asyncio.StreamReader(limit=PIPE_LIMIT)
    writer, stderr, closers = await _open_pipes(
        process, lambda: asyncio.StreamReaderProtocol(stdout)
    )
    return stdout, writer, stderr, closers


async def open_agent_pipes(
    process: AgentProcess,
) -> tuple[PipeFeed, AsyncByteWriter, AsyncByteReader, tuple[Callable[[], Any], ...]]:
    """`open_process_pipes` for a driver: the agent's stdout feeds it (`PipeFeed`)."""
    stdout = PipeFeed()
    writer, stderr, closers = await _open_pipes(process, lambda: stdout)
    return stdout, writer, stderr, closers


async def _open_pipes(
    process: AgentProcess, stdout_protocol: Callable[[], asyncio.BaseProtocol]
) -> tuple[AsyncByteWriter, AsyncByteReader, tuple[Callable[[], Any], ...]]:
    loop = asyncio.get_running_loop()
    stderr = asyncio.StreamReader(limit=PIPE_LIMIT)
    opened: list[asyncio.BaseTransport] = []  # closed again if a later one fails
    try:
        out_transport, _ = await loop.connect_read_pipe(stdout_protocol, process.stdout)
        opened.append(out_transport)
        err_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stderr), process.stderr_pipe
        )
        opened.append(err_transport)
        in_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, process.stdin
        )
    except BaseException:
        for transport in opened:
            transport.close()
        raise
    writer = asyncio.StreamWriter(in_transport, protocol, None, loop)
    return writer, stderr, (out_transport.close, err_transport.close, in_transport.close)


TELLS_CANCELLATIONS_APART: bool = hasattr(asyncio.Task, "cancelling")
"""Python 3.11+: `Task.cancelling()` says whether our task is being cancelled. Without
it (3.10) user code runs in a child task; tests switch this off to run that path."""

_RUNS_FOR: weakref.WeakKeyDictionary[asyncio.Future[Any], asyncio.Task[Any]] = (
    weakref.WeakKeyDictionary()
)
"""Python 3.10: the task a child task runs user code for (see `_await_user`)."""


async def _await_user(awaitable: Awaitable[T]) -> T:
    """Await user code. Our task being cancelled ends the flow (CancelledError goes
    on); user code that lets some other cancellation escape has just failed, which
    the flow treats like any other error of that code."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None) if TELLS_CANCELLATIONS_APART else None
    if cancelling is not None:
        try:
            return await awaitable
        except asyncio.CancelledError:
            if cancelling():
                raise
            raise RuntimeError("user code raised CancelledError") from None
    # Python 3.10 cannot tell the two apart on one task: run the code in a child task,
    # so a cancellation of ours arrives here (and is passed on to the child) while the
    # child's own CancelledError only marks the child cancelled.
    child = asyncio.ensure_future(awaitable)
    if task is not None:
        _RUNS_FOR[child] = task
    try:
        await asyncio.wait({child})
    except asyncio.CancelledError:
        # As when the code runs in our task: it sees the cancellation and may clean up
        # (a tool call block sends its final status) before our flow goes on.
        child.cancel()
        while not child.done():
            try:
                await asyncio.wait({child})
            except asyncio.CancelledError:
                child.cancel()
        with contextlib.suppress(BaseException):
            child.exception()  # retrieved: ours is the cancellation that goes on
        raise
    if child.cancelled():
        raise RuntimeError("user code raised CancelledError")
    return child.result()
