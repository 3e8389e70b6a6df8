"""Every procedure an endpoint runs, written once, as generators that yield what to wait for.

A flow never blocks and never awaits: where it must wait it yields one of five
operations and is resumed with the result:

- `Until` a predicate holds (or a deadline passes; also how a flow sleeps),
- `AwaitCall`, the outcome of one of our calls (`Expired` is thrown in at its deadline),
- `Read` bytes from the peer, `Write` bytes to it (`b""` closes our output),
- `Run` user code (a handler, a callback).

The threaded driver performs an operation by blocking, the asyncio driver by awaiting,
each in one `match`; an interruption (Ctrl-C, a cancelled task) is thrown into the flow
at the yield, so the clean-up written here runs in both worlds. The rules the flows
apply are the engine's (`engine.py`): a flow only says in which order to wait. This is
how the two facades share one implementation of calls, turns, reading, writing,
callbacks, handlers and closing (see docs/architecture.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from typing import Any, Final, Generic, TypeVar

from acp_sdk._driver.engine import Engine, send_timeout
from acp_sdk._driver.process import EXIT_WAIT, AgentProcess
from acp_sdk._driver.turn import Sink, deadline_after
from acp_sdk._driver.vocabulary import Outcome, Signal, Waiter
from acp_sdk.protocol._errors import ConnectionClosed
from acp_sdk.protocol._jsonrpc import RequestId
from acp_sdk.protocol._rows import Method, Notification, Row

T = TypeVar("T")
log = logging.getLogger("acp_sdk.driver")
STOPPED_READING_GRACE: Final = 2 * EXIT_WAIT
"""Seconds a failed write waits for the end of the peer's output before failing calls
(the reader waits up to EXIT_WAIT after it for the exit status)."""

READ_CHUNK: Final = 1 << 16


class Op:
    """Something a flow waits for; the driver performs it and resumes the flow."""

    __slots__ = ()


class Until(Op):
    """Wait until `ready()` (checked under the engine's lock) or the deadline: bool.
    A deadline already passed still lets other work run once (asyncio: one loop turn)."""

    __slots__ = ("deadline", "ready", "signal")

    def __init__(self, ready: Callable[[], bool], signal: Signal, deadline: float | None) -> None:
        self.ready = ready
        self.signal = signal
        self.deadline = deadline


class AwaitCall(Op):
    """Wait for the `Outcome` of one of OUR calls (not to be confused with answering the
    peer: `Engine.answer`); `Expired` is thrown in when the deadline passes."""

    __slots__ = ("deadline", "waiter")

    def __init__(self, waiter: Waiter, deadline: float | None) -> None:
        self.waiter = waiter
        self.deadline = deadline


class Read(Op):
    """Up to READ_CHUNK bytes from the peer (`stderr`: from the agent's stderr);
    b"" at end of input or on an error."""

    __slots__ = ("stderr",)

    def __init__(self, *, stderr: bool = False) -> None:
        self.stderr = stderr


class Write(Op):
    """Write all of `data` to the peer (`b""`: close our output to it); True when done,
    False when its input is gone."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class Run(Op):
    """Call user code with its arguments (awaiting it when it returns an awaitable)."""

    __slots__ = ("argument", "function")

    def __init__(self, function: Callable[..., Any], *argument: Any) -> None:
        self.function = function
        self.argument = argument


Flow = Generator[Op, Any, T]


def _never() -> bool:
    return False


def sleep(engine: Engine[Any], seconds: float) -> Until:
    """Wait `seconds` (0: let other work run once)."""
    return Until(_never, engine.clock, deadline_after(seconds))


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
    interruption gives the call up and tells the peer (`$/cancel_request`). The steps
    around the wait are the engine's `Call`, which the asyncio driver's direct path
    shares."""
    deadline = deadline_after(timeout)
    if not engine.can_queue() and not (yield Until(engine.can_queue, engine.space, deadline)):
        raise send_timeout(row, timeout)
    started = engine.start_call(row, params, check_capability=check_capability)
    try:
        outcome: Outcome[T] = yield AwaitCall(started.waiter, deadline)
    except BaseException as error:
        outcome = started.interrupted(error, timeout)
    value: T = started.result(outcome)
    if not started.settled():
        yield from settle(engine, started.settle_target)
    return value


def notify(
    engine: Engine[Any],
    row: Notification[Any],
    params: Any,
    timeout: float | None,
    check_capability: bool = True,
) -> Flow[None]:
    """Queue a notification, waiting (up to `timeout`) while the send buffer is full;
    then, past LET_THE_WRITER_RUN queued bytes, let the writer run once."""
    if not engine.can_queue() and not (
        yield Until(engine.can_queue, engine.space, deadline_after(timeout))
    ):
        raise send_timeout(row, timeout)
    if engine.send_notification(row, params, check_capability=check_capability):
        yield sleep(engine, 0)


def next_updates(engine: Engine[Any], sink: Sink) -> Flow[list[Any]]:
    """The turn's updates received so far, waiting for at least one; [] once the turn
    ended (its outcome is then in `sink.outcome`). The turn's clock is not this flow's:
    `clock_loop` acts on it whether or not anyone iterates."""
    if not sink.ready():
        yield Until(sink.ready, engine.delivered, None)
    with engine.lock:
        return engine.take_updates(sink)


def settle(engine: Engine[Any], target: int) -> Flow[None]:
    """Wait until `target` callbacks (those of notifications received before a call's
    answer) have run, so the call returns after them."""
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
                yield sleep(engine, delay)
            reason = process.exit_reason(engine.connection.stray_lines)
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
            # An agent that stopped reading has usually exited: give the reader a moment
            # to reach the end of its output, so calls fail saying why (exit code, stderr,
            # what it printed) rather than only that it stopped reading.
            # (A local close() ends the wait too.)
            engine.close_output(flush=False)
            yield Until(engine.peer_gone, engine.may_read, deadline_after(STOPPED_READING_GRACE))
            engine.peer_stopped_reading()
            break
        engine.wrote(batch)
    yield Write(b"")


def clock_loop(engine: Engine[Any]) -> Flow[None]:
    """Wakes the engine when a turn's deadline passes (`Engine.expire_turns` decides
    what that means), whether or not anyone iterates the turn. Ends on close."""
    while True:
        with engine.lock:
            if engine.close_reason is not None:
                return
            deadline = engine.next_turn_deadline()
        if not (yield Until(engine.clock_changed, engine.clock, deadline)):
            engine.expire_turns()


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
            yield sleep(engine, delay)


def end_of_service(engine: Engine[Any], grace: float) -> Flow[None]:
    """An agent's life: until the client ends its input, then a grace for the handlers
    still running to answer."""
    yield Until(engine.peer_gone, engine.may_read, None)
    yield Until(lambda: engine.serving == 0, engine.may_read, deadline_after(grace))
