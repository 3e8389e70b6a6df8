"""Every procedure an endpoint runs, written once, as generators that yield what to wait for.

A flow never blocks and never awaits: where it must wait it yields an operation (`Until`
a predicate holds, the `Answer` of a call, `Sleep`, `Read` or `Write` bytes, `Run` user
code) and is resumed with the result. The threaded driver performs an operation by
blocking, the asyncio driver by awaiting; an interruption (Ctrl-C, a cancelled task)
is thrown into the flow at the yield, so the clean-up written here runs in both worlds.
This is how the two facades share one implementation of calls, turns, reading,
writing, callbacks, handlers and closing, and differ only in how they wait and move
bytes (see docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Generator
from typing import Any, Final, Generic, TypeVar

from acp_sdk._driver.engine import (
    Engine,
    Outcome,
    Signal,
    Sink,
    Waiter,
    deadline_after,
    send_timeout,
)
from acp_sdk._driver.process import AgentProcess
from acp_sdk.protocol._codec import decode
from acp_sdk.protocol._errors import ACPError, ConnectionClosed, RequestTimeout
from acp_sdk.protocol._rows import Kind, Method, Notification, Row, Side

T = TypeVar("T")
RequestId = int | str
log = logging.getLogger("acp_sdk.driver")

READ_CHUNK: Final = 1 << 16
LET_THE_WRITER_RUN: Final = 1 << 16
"""Queued bytes past which a sender yields once to the writer (see `notify`)."""


class Op:
    """Something a flow waits for; the driver performs it and resumes the flow."""

    __slots__ = ()


class Until(Op):
    """Wait until `ready()` (checked under the engine's lock) or the deadline: bool."""

    __slots__ = ("deadline", "ready", "signal")

    def __init__(self, ready: Callable[[], bool], signal: Signal, deadline: float | None) -> None:
        self.ready = ready
        self.signal = signal
        self.deadline = deadline


class Answer(Op):
    """Wait for a call's `Outcome`; `Expired` is thrown in when the deadline passes."""

    __slots__ = ("deadline", "waiter")

    def __init__(self, waiter: Waiter, deadline: float | None) -> None:
        self.waiter = waiter
        self.deadline = deadline


class Sleep(Op):
    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


class Read(Op):
    """Up to READ_CHUNK bytes from the peer (`stderr`: from the agent's stderr);
    b"" at end of input or on an error."""

    __slots__ = ("stderr",)

    def __init__(self, *, stderr: bool = False) -> None:
        self.stderr = stderr


class Write(Op):
    """Write all of `data` to the peer; True when done, False when its input is gone."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class CloseWrite(Op):
    """Close our output to the peer (its stdin)."""

    __slots__ = ()


class Run(Op):
    """Call user code with one argument (awaiting it when it returns an awaitable)."""

    __slots__ = ("argument", "function")

    def __init__(self, function: Callable[..., Any], *argument: Any) -> None:
        self.function = function
        self.argument = argument


class InCallbackRunner(Op):
    """True when the flow runs on the callback runner itself (thread or task)."""

    __slots__ = ()


class Expired(Exception):
    """Thrown into a flow whose `Answer` deadline passed."""


Flow = Generator[Op, Any, T]


class Steps(Generic[T]):
    """Drives a flow for a driver: `next()` is the next operation to perform (None once
    the flow returned `result`); set `value` or `error` with how it went."""

    __slots__ = ("_flow", "error", "result", "value")

    def __init__(self, flow: Flow[T]) -> None:
        self._flow = flow
        self.value: Any = None
        self.error: BaseException | None = None

    def next(self) -> Op | None:
        error, self.error = self.error, None
        try:
            op = self._flow.send(self.value) if error is None else self._flow.throw(error)
        except StopIteration as stop:
            self.result: T = stop.value
            return None
        self.value = None
        return op


# ---------------------------------------------------------------------- callers


def call(
    engine: Engine[Any],
    row: Method[Any, T],
    params: Any,
    timeout: float | None,
    check_capability: bool = True,
) -> Flow[T]:
    """A request and its result. `timeout` covers queueing, sending and waiting; an
    interruption gives the call up and tells the peer (`$/cancel_request`)."""
    deadline = deadline_after(timeout)
    if not engine.can_queue() and not (yield Until(engine.can_queue, engine.space, deadline)):
        raise send_timeout(row, timeout)
    request_id, waiter = engine.begin_call(row, params, check_capability=check_capability)
    try:
        outcome: Outcome[T] = yield Answer(waiter, deadline)
    except Expired:
        error = engine.end_call(request_id, timed_out=True)
        if error is not None:
            raise error from None
        outcome = waiter.result()  # answered just in time
    except BaseException:
        engine.end_call(request_id, timed_out=False)
        raise
    value: T = outcome.unwrap()
    yield from settle(engine)
    return value


def notify(
    engine: Engine[Any],
    row: Notification[Any],
    params: Any,
    timeout: float | None,
    check_capability: bool = True,
) -> Flow[None]:
    """Queue a notification, waiting (up to `timeout`) while the send buffer is full."""
    if not engine.can_queue() and not (
        yield Until(engine.can_queue, engine.space, deadline_after(timeout))
    ):
        raise send_timeout(row, timeout)
    if queue_notification(engine, row, params, check_capability):
        yield Sleep(0)


def queue_notification(
    engine: Engine[Any], row: Notification[Any], params: Any, check_capability: bool = True
) -> bool:
    """The part of `notify` that never waits (there is room to queue): True when the
    sender should then yield once to the writer. A driver may call it directly when
    `engine.can_queue()`, skipping the flow's trampoline (the streaming hot path)."""
    engine.notify(row, params, check_capability=check_capability)
    # Past this many queued bytes (the OS pipe is full, or frames were corked) give the
    # writer a turn now, so the peer reads while we produce (a producer that never
    # waits would otherwise fill max_send_buffer before anything more leaves).
    return engine.queued_bytes > LET_THE_WRITER_RUN


def begin_turn(
    engine: Engine[Any], row: Method[Any, Any], params: Any, clock: TurnClock | None = None
) -> Flow[tuple[RequestId, Sink]]:
    """Send a prompt; its updates and its end flow into the returned sink. With a clock,
    waiting to send counts against its timeout."""
    deadline = clock.deadline if clock is not None else None
    if not engine.can_queue() and not (yield Until(engine.can_queue, engine.space, deadline)):
        raise send_timeout(row, clock.timeout if clock is not None else None)
    return engine.begin_turn(row, params)


class TurnClock:
    """A turn's time limit: when it passes, `session/cancel` is sent and the agent gets
    `grace` seconds to end the turn (stop reason `cancelled`) before it times out."""

    __slots__ = ("cancelled", "deadline", "grace", "request_id", "timeout")

    def __init__(self, timeout: float | None, grace: float) -> None:
        self.timeout = timeout
        self.deadline = deadline_after(timeout)
        self.grace = grace
        self.cancelled = False
        self.request_id: RequestId | None = None


def next_updates(
    engine: Engine[Any], sink: Sink, clock: TurnClock | None = None
) -> Flow[list[Any]]:
    """The turn's updates received so far, waiting for at least one; [] once the turn
    ended (its outcome is then in `sink.outcome`). With a clock: past its deadline send
    `session/cancel`, then past the grace end the call and raise `RequestTimeout`."""
    while not sink.ready():
        deadline = clock.deadline if clock is not None else None
        if (yield Until(sink.ready, engine.delivered, deadline)) or clock is None:
            break
        if clock.cancelled:
            assert clock.request_id is not None
            error = engine.end_call(clock.request_id, timed_out=True)
            raise error or RequestTimeout(f"the prompt did not end within {clock.timeout} s")
        clock.cancelled = True
        clock.deadline = deadline_after(clock.grace)
        cancel = engine.connection.table.get(Side.AGENT, "session/cancel", Kind.NOTIFICATION)
        if cancel is not None:
            params = decode({"sessionId": sink.session_id}, cancel.params_type)
            with contextlib.suppress(ACPError):
                engine.notify(cancel, params)  # type: ignore[arg-type] # a notification row
    with engine.lock:
        return engine.take_updates(sink)


def settle(engine: Engine[Any]) -> Flow[None]:
    """Wait until the callbacks for notifications received so far have run, so a call
    returns after them (except on the callback runner: it would wait on itself)."""
    target = engine.callbacks_queued
    if engine.settled(target) or (yield InCallbackRunner()):
        return
    yield Until(lambda: engine.settled(target), engine.delivered, None)


# ---------------------------------------------------------------------- the driver's own


def read_loop(
    engine: Engine[Any], process: AgentProcess | None, messages: bool = False
) -> Flow[None]:
    """Bytes from the peer into the engine, pausing while consumers lag; at the end,
    tell the engine why the input ended (the agent's exit status, its stderr). With
    `messages`, each read is one whole message (a message-framed transport)."""
    feed = engine.feed_message if messages else engine.feed
    try:
        while True:
            if not engine.reader_may_read():
                yield Until(engine.reader_may_read, engine.may_read, None)
            data: bytes = yield Read()
            if not data:
                break
            feed(data)
        reason = ConnectionClosed("the peer closed the connection")
        if process is not None:
            for delay in process.exit_steps():
                yield Sleep(delay)
            reason = process.exit_reason()
        engine.end_of_input(reason)
    except Exception:  # a bug here must not leave callers waiting forever
        log.exception("the reader failed")
        engine.shutdown(ConnectionClosed("the connection failed (see the log)"))


def write_loop(engine: Engine[Any]) -> Flow[None]:
    """The queue to the peer, in order, as batches; the only flow that waits on the
    peer's input. Ends (closing our output) once the engine closes it. (No `yield` in a
    `finally`: a flow dropped unfinished must close quietly.)"""
    while True:
        yield Until(engine.writer_has_work, engine.to_write, None)
        with engine.lock:
            batch = engine.take_batch()
        if batch is None:
            break
        if not (yield Write(batch.data)):
            engine.peer_stopped_reading()
            break
        engine.wrote(batch)
    yield CloseWrite()


def callback_loop(engine: Engine[Any]) -> Flow[None]:
    """Notification callbacks, one at a time, in arrival order, off the reader."""
    while True:
        if not engine.callback_ready():
            yield Until(engine.callback_ready, engine.delivered, None)
        with engine.lock:
            job = engine.next_callback()
        if job is None:
            return
        function, params = job
        try:
            yield Run(function, params)
        except (Exception, KeyboardInterrupt, SystemExit):
            # User code: log it and go on (later callbacks and settling calls depend on
            # this runner). Only the runner's own cancellation ends it.
            log.exception("a notification callback failed")
        finally:
            engine.callback_finished()


def stderr_loop(process: AgentProcess) -> Flow[None]:
    """Drain the agent's stderr (always: a full pipe would block the agent)."""
    while True:
        chunk: bytes = yield Read(stderr=True)
        process.stderr.feed(chunk)
        if not chunk:
            return


def handle(
    engine: Engine[Any],
    serve: Callable[[Row, Any], Any],
    request_id: RequestId,
    row: Row,
    params: Any,
) -> Flow[None]:
    """One request of the peer: run its handler, queue its one answer."""
    try:
        result = yield Run(serve, row, params)
    except Exception as error:
        engine.answer(request_id, error=error)
    except BaseException:  # cancelled ($/cancel_request, session/cancel, closing)
        engine.answer(request_id, cancelled=True)
        raise
    else:
        engine.answer(request_id, result)


def close(
    engine: Engine[Any],
    process: AgentProcess | None,
    close_timeout: float,
    terminate_timeout: float,
    reason: str,
) -> Flow[None]:
    """Fail what is pending, flush and close the peer's input, stop the agent's whole
    process group (escalating). The driver then joins what it started."""
    engine.shutdown(ConnectionClosed(reason))
    engine.close_output(flush=True)
    if process is not None:
        for delay in process.stop_steps(close_timeout, terminate_timeout):
            yield Sleep(delay)


def end_of_service(engine: Engine[Any], grace: float) -> Flow[None]:
    """An agent's life: until the client ends its input, then a grace for the handlers
    still running to answer."""
    yield Until(engine.peer_gone, engine.may_read, None)
    yield Until(lambda: engine.serving == 0, engine.may_read, deadline_after(grace))
