"""The endpoint engine: every rule above the sans-IO connection, written once.

The `Connection` decides what the protocol allows. The engine decides what an endpoint
does about it, for both the threaded and the asyncio driver:

- which waiter a response resolves, and which prompt turn it ends;
- where each `session/update` goes (the running turn of its session, or the callbacks);
- which inbound requests run as handlers, and which handlers a cancellation stops;
- how a call ends on a timeout, a local cancellation or a closed connection, and with
  which `ConnectionClosed` (the one that says why, e.g. the agent's exit code);
- a prompt turn's clock: started with the turn, re-armed by the agent's updates and
  requests in the session, acted on (`session/cancel`, then `RequestTimeout`) as the
  clock's rule in `turn.py` says; `flows.clock_loop` wakes it in time;
- which updates a session's state has folded: exactly those handed out (to a turn's
  consumer or `on_update`), and on arrival those nobody is there to take;
- backpressure: how many bytes may wait for the peer before senders wait, and how much
  received-but-unconsumed work makes the reader stop reading.

Rules:
1. Every field is guarded by `lock`, a plain `threading.Lock`. It is never held across
   I/O, user code or a wait, so a peer that stops reading can block only the writer.
2. Frames leave in the order the connection recorded them: a frame is queued under the
   same lock that changed the connection's state, and one writer sends the queue in order.
3. Senders wait while more than `max_send_buffer` bytes are queued (a soft bound: each
   waiting sender adds one frame). The reader stops while more than
   `max_buffered_updates` updates/callbacks are unconsumed, while answers it owes are
   stuck in the queue (`max_send_buffer` bytes of them), while `max_inflight` requests
   are being handled, or while `max_owed_answers` answers are owed (requests being
   handled plus answers not yet written: a count, so a peer that pipelines requests
   and never reads costs bounded memory however small the answers), or while the
   connection holds frames received behind an `initialize` not answered yet (they are
   dispatched right after that answer, `_take_released`). The reader never waits for
   senders: two endpoints streaming at each other cannot deadlock.
4. Every call ends exactly once, by resolving its waiter with an `Outcome` (never an
   exception set on a future, so an abandoned call never logs "never retrieved").

A driver supplies four things: waiters (futures), signals (a condition or a pulse
that waiting code re-checks its predicate on), handler execution (a pool or tasks) and
`on_callback_runner` (whether the running code is the callback runner).
"""

from __future__ import annotations

import contextlib
import copy
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final, Generic, TypeVar

from acp_sdk._driver.turn import Sink
from acp_sdk._driver.vocabulary import (
    _NO_WAITER,
    Batch,
    Cancellable,
    Expired,
    Limits,
    Outcome,
    Signal,
    Waiter,
)
from acp_sdk.protocol._codec import decode
from acp_sdk.protocol._connection import Connection
from acp_sdk.protocol._errors import ACPError, ConnectionClosed, LocalProtocolError, RequestTimeout
from acp_sdk.protocol._events import (
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
from acp_sdk.protocol._jsonrpc import RequestId
from acp_sdk.protocol._rows import Kind, Method, Notification, Row, Side

T = TypeVar("T")
S = TypeVar("S", bound="Signal")
log = logging.getLogger("acp_sdk.driver")
_wire = logging.getLogger("acp_sdk.wire")

AWAITING_FACTOR: Final = 16
AWAITING_FLOOR: Final = 65536
"""While a call waits for its answer the reader keeps reading up to
max(16 x max_buffered_updates, 65536) unconsumed updates (see `reader_may_read`)."""
FOLD_EVERY: Final = 1024
"""Updates of a session kept unfolded before the reader folds them into its state (the
rest is folded when someone reads the state): bounded memory, cheap streaming."""
SESSION_UPDATE: Final = "session/update"
LET_THE_WRITER_RUN: Final = 1 << 16
"""Queued bytes past which a sender of notifications yields once to the writer."""
RIGHT_SIZE_BELOW: Final = 2048
"""Queued frames shorter than this are copied to an exactly sized `bytes` (see
`Engine._queue_frame`)."""


class Call:
    """One of our requests in flight: the engine-level steps around awaiting its outcome,
    shared by `flows.call` and the asyncio driver's direct path (which only awaits)."""

    __slots__ = ("engine", "request_id", "settle_target", "waiter")

    def __init__(self, engine: Engine[Any], request_id: RequestId, waiter: Waiter) -> None:
        self.engine = engine
        self.request_id = request_id
        self.waiter = waiter
        self.settle_target = 0

    def interrupted(self, error: BaseException, timeout: float | None = None) -> Outcome[Any]:
        """The wait for the outcome ended by `error`: a passed deadline (`expired`) times
        the call out (after `timeout` seconds, which the error names), anything else
        (Ctrl-C, a cancelled task) gives it up; either way the peer is told
        (`$/cancel_request`). Returns the outcome of a call answered just in time; else
        raises."""
        if isinstance(error, Expired):
            timed_out = self.engine.end_call(self.request_id, timed_out=True, after=timeout)
            if timed_out is not None:
                raise timed_out from None
            return self.waiter.result()  # answered just in time
        self.engine.end_call(self.request_id, timed_out=False)
        raise error

    def result(self, outcome: Outcome[Any]) -> Any:
        """The call's value (or its error, raised); notes the callbacks it must await."""
        self.settle_target = self.engine.callbacks_queued
        return outcome.unwrap()

    def settled(self) -> bool:
        """True once the callbacks of notifications received before its answer have run
        (or on the callback runner, which would wait on itself)."""
        engine = self.engine
        return engine.settled(self.settle_target) or engine.on_callback_runner()


Serve = Callable[[Row, Any], Any]
"""Run one inbound request's handler: (row, params) -> result (or an awaitable)."""
StartHandler = Callable[[RequestId, Row, Any], Cancellable]
Callback = Callable[[Any], Any]


class Engine(Generic[S]):
    """One endpoint's state above its `Connection`; shared by both drivers."""

    def __init__(
        self,
        connection: Connection,
        *,
        limits: Limits,
        new_signal: Callable[[], S],
        new_waiter: Callable[[], Waiter],
        start_handler: StartHandler,
        notification_callbacks: Callable[[Row, Any], Sequence[Callback]],
        on_update: Callback | None = None,
        lock: threading.Lock | None = None,
    ) -> None:
        self.connection = connection
        self.limits = limits
        self.lock = lock or threading.Lock()
        self._new_waiter = new_waiter
        self._start_handler = start_handler
        self._notification_callbacks = notification_callbacks
        self.on_update = on_update
        # Signals: the writer has work; senders may queue; the reader may read; a turn
        # or the callback runner has something (or a callback finished).
        self.to_write = new_signal()
        self.space = new_signal()
        self.may_read = new_signal()
        self.delivered = new_signal()
        self.clock = new_signal()  # a turn with a clock began (or we are closing)
        self.on_callback_runner: Callable[[], bool] = lambda: False
        """Set by a driver: True when called on its callback runner (thread or task)."""
        self._queue: deque[tuple[bytes, int]] = deque()  # a frame, the answers in it
        self._writing = False  # the writer holds a batch it has not finished writing
        self.try_write: Callable[[bytes], int] | None = None
        """Set by a driver whose transport can take bytes without blocking: returns how
        many of them it took now (the rest is queued for the writer)."""
        self.cork: Callable[[], None] | None = None
        """Set by a driver that can coalesce a burst (asyncio): called after a
        notification went out through `try_write`; the driver clears `corked` once
        the producer let its event loop run (the next loop iteration)."""
        self.corked = False
        """While set, frames skip `try_write` and queue for the writer, which sends
        them together: a lone frame leaves at once, a burst in one write per batch."""
        self._queued = 0  # bytes queued or being written
        self._replies_queued = 0  # of which answers we owe the peer
        self._answers_queued = 0  # how many answers those bytes hold
        self._calls: dict[RequestId, Waiter] = {}
        self._turn_of_call: dict[RequestId, Sink] = {}
        self._turns: dict[str, Sink] = {}
        self._clocked: set[Sink] = set()  # running turns with a timeout or idle timeout
        self._asked_in: dict[RequestId, Sink] = {}  # the peer's requests in a clocked turn
        self._clock_changed = False
        self._serving: dict[RequestId, Cancellable] = {}
        self._callbacks: deque[tuple[Callback, Any]] = deque()
        self._buffered = 0  # updates in sinks plus callbacks not yet run
        self.callbacks_queued = 0
        self.callbacks_done = 0
        self.fold: Callable[[Any, list[Any]], Any] | None = None
        """Set by a client: (state or None, updates) -> the session's next state."""
        self._states: dict[str, Any] = {}
        self._unfolded: dict[str, list[Any]] = {}  # per session: handed out, not folded yet
        self.close_reason: ConnectionClosed | None = None
        self.input_ended = False
        self.output_closed = False  # no more frames will be queued
        self.output_dropped = False  # and what is queued will not be written either

    # ------------------------------------------------------------------ predicates
    # Called with `lock` held, by the drivers' wait loops.

    def can_queue(self) -> bool:
        return self._queued < self.limits.max_send_buffer or self.close_reason is not None

    def reader_may_read(self) -> bool:
        limits = self.limits
        buffered = limits.max_buffered_updates
        if len(self._calls) > len(self._turn_of_call):
            # A call (not a prompt) waits for its answer, which may sit behind the
            # updates its own caller has not consumed yet (a turn's consumer, or a
            # callback, calling the client): read on, up to the hard cap, so that
            # answer can arrive instead of both sides waiting for each other.
            buffered = max(buffered * AWAITING_FACTOR, AWAITING_FLOOR)
        return self.close_reason is not None or (
            self._buffered < buffered
            and not self.connection.holding
            and self._replies_queued < limits.max_send_buffer
            and len(self._serving) < limits.max_inflight
            and len(self._serving) + self._answers_queued < limits.max_owed_answers
        )

    def writer_has_work(self) -> bool:
        return bool(self._queue) or self.output_closed

    def callback_ready(self) -> bool:
        return bool(self._callbacks) or self.close_reason is not None

    def peer_gone(self) -> bool:
        return self.input_ended or self.close_reason is not None

    def settled(self, target: int) -> bool:
        return self.callbacks_done >= target or self.close_reason is not None

    def clock_changed(self) -> bool:
        return self._clock_changed or self.close_reason is not None

    @property
    def queued_bytes(self) -> int:
        """Bytes waiting for the peer to read them."""
        return self._queued

    # ------------------------------------------------------------------ outbound

    def closed_error(self) -> ConnectionClosed:
        """A fresh `ConnectionClosed` saying why the connection ended (never re-raise one
        instance from many places: tracebacks would pile up on it)."""
        reason = self.close_reason
        if reason is None:
            return ConnectionClosed("the connection is closed")
        # A new instance of its class (`NotAnAgent` too), attributes and all, no traceback.
        fresh: ConnectionClosed = copy.copy(reason)
        return fresh

    def start_call(
        self, row: Method[Any, Any], params: Any, *, check_capability: bool = True
    ) -> Call:
        """Record and queue a request; the caller awaits `call.waiter`, then hands what it
        got to `call.result` (or what interrupted it to `call.interrupted`)."""
        with self.lock:
            if self.close_reason is not None:
                raise self.closed_error()
            request_id, frame = self.connection.send_request(
                row, params, check_capability=check_capability
            )
            waiter = self._new_waiter()
            self._calls[request_id] = waiter
            self._queue_frame(frame, reply=False)
        return Call(self, request_id, waiter)

    def begin_turn(
        self,
        row: Method[Any, Any],
        params: Any,
        *,
        timeout: float | None = None,
        idle_timeout: float | None = None,
        grace: float | None = None,
    ) -> Sink:
        """Open the session's turn, start its clock and queue its prompt at once (past
        `max_send_buffer` too: one frame per session, never a wait), so the prompt
        leaves before anything sent after it, a `session/cancel` included.

        Raises `LocalProtocolError` while the session's previous turn runs (the one
        documented rule: a session runs one turn at a time)."""
        session_id: str = params.session_id
        with self.lock:
            if self.close_reason is not None:
                raise self.closed_error()
            if session_id in self._turns:
                raise LocalProtocolError(
                    f"a prompt turn is still running in session {session_id}: let it end "
                    "first (iterate it, or wait()/await it; after cancel() it ends once the "
                    "agent answers `cancelled`)"
                )
            request_id, frame = self.connection.send_request(row, params)
            sink = Sink(
                session_id,
                request_id,
                timeout=timeout,
                idle=idle_timeout,
                grace=grace,
            )
            self._turns[session_id] = sink
            self._turn_of_call[request_id] = sink
            self._calls[request_id] = _NO_WAITER
            if sink.deadline is not None or sink.idle_deadline is not None:
                self._clocked.add(sink)
                self._clock_changed = True
                self.clock.notify()
            self._queue_frame(frame, reply=False)
        return sink

    def end_call(
        self, request_id: RequestId, *, timed_out: bool, after: float | None = None
    ) -> ACPError | None:
        """End one of our calls locally (a timeout, or the caller gave up) and tell the
        peer with `$/cancel_request`. Returns the error for a timeout."""
        with self.lock:
            if self._calls.pop(request_id, None) is None:
                return None
            error: ACPError | None = None
            if timed_out:
                error, frame = self.connection.time_out(request_id, after=after)
            else:
                frame = self.connection.cancel(request_id)
            sink = self._turn_of_call.pop(request_id, None)
            if sink is not None:
                self._finish_turn(sink, Outcome(error=error or self.closed_error()))
            if frame and not self.output_closed:
                self._queue_frame(frame, reply=False)
            return error

    def send_notification(
        self, row: Notification[Any], params: Any, *, check_capability: bool = True
    ) -> bool:
        """Queue a notification (never waits: the caller checked `can_queue`). True when
        the sender should now yield once to the writer: past LET_THE_WRITER_RUN queued
        bytes (the OS pipe is full, or frames were corked) the peer must read while we
        produce, or a producer that never waits fills max_send_buffer first. Once our
        output is closed nothing more can leave: a producer that never waits would spin."""
        with self.lock:
            if self.close_reason is not None or self.output_closed:
                raise self.closed_error()
            frame = self.connection.send_notification(
                row, params, check_capability=check_capability
            )
            self._queue_frame(frame, reply=False, cork=True)
            return self._queued > LET_THE_WRITER_RUN

    def check_outbound(self, row: Row, params: Any) -> None:
        """Raise what sending `row` with `params` would raise (a capability the peer did
        not advertise, the wrong lifecycle), sending nothing: for a sender that keeps a
        message before it is sent (the agent's session store)."""
        with self.lock:
            self.connection.check_outbound(row, params)

    def _queue_frame(self, frame: bytes, *, reply: bool, cork: bool = False) -> None:
        if not frame or self.output_closed:
            return
        if _wire.isEnabledFor(logging.DEBUG):
            _wire.debug("-> %s", frame[:4096].decode("utf-8", "replace").rstrip("\n"))
        if self.try_write is not None and not self._queue and not self._writing and not self.corked:
            # Nothing is waiting ahead of this frame: hand it to the OS now, without
            # blocking, and leave only what did not fit to the writer (in order). This is
            # what lets a peer read while we produce, instead of in bursts. After a
            # notification the driver may cork: what follows in the same loop iteration
            # (a stream of updates) is queued and leaves as one write.
            try:
                written = self.try_write(frame)
            except OSError:
                written = 0  # the writer meets the same error and shuts down
            if written >= len(frame):
                if cork and self.cork is not None:
                    self.corked = True
                    self.cork()
                return
            frame = frame[written:]
        if len(frame) < RIGHT_SIZE_BELOW:
            # orjson's bytes keep a buffer of at least 4 KiB: a queued small frame would
            # cost 20-40x its length, and the byte bound would not bound memory.
            frame = bytes(memoryview(frame))
        # Per frame: the answers it holds (frames end with a newline, which JSON text
        # never contains), counted against max_owed_answers until written.
        answers = (frame.count(b"\n") or 1) if reply else 0
        self._queue.append((frame, answers))
        self._queued += len(frame)
        if reply:
            self._replies_queued += len(frame)
            self._answers_queued += answers
        self.to_write.notify()

    def take_batch(self) -> Batch | None:
        """Everything queued, as one write (None: nothing more will ever be written).
        Called with `lock` held, by the writer."""
        if not self._queue or self.output_dropped:
            return None
        frames: list[bytes] = []
        replies = answers = 0
        while self._queue:
            frame, held = self._queue.popleft()
            frames.append(frame)
            if held:
                replies += len(frame)
                answers += held
        self._writing = True
        return Batch(b"".join(frames), replies, answers)

    def wrote(self, batch: Batch) -> None:
        with self.lock:
            self._writing = False
            self._queued -= len(batch.data)
            self._replies_queued -= batch.replies
            self._answers_queued -= batch.answers
            self.space.notify()
            self.may_read.notify()

    # ------------------------------------------------------------------ inbound

    def feed(self, data: bytes) -> None:
        """Bytes from the peer (never `b""`: end of input is `end_of_input`)."""
        with self.lock:
            self.connection.receive_data(data)
            self._dispatch(self.connection.events())
            self._queue_frame(self.connection.data_to_send(), reply=True)

    def feed_message(self, message: bytes) -> None:
        """One whole message from a message-framed transport (WebSocket, HTTP)."""
        with self.lock:
            self.connection.receive_message(message)
            self._dispatch(self.connection.events())
            self._queue_frame(self.connection.data_to_send(), reply=True)

    def end_of_input(self, reason: ConnectionClosed) -> None:
        """The peer closed its output. Pending calls fail with `reason`; the connection
        cancels running prompt turns (their answers may still reach a half-closed peer)."""
        with self.lock:
            self.input_ended = True
            if self.close_reason is None:
                self.close_reason = reason
            self.connection.receive_data(b"")
            self._dispatch(self.connection.events())
            self._queue_frame(self.connection.data_to_send(), reply=True)
            self._wake_all()

    def _dispatch(self, events: list[Event]) -> None:
        routed = self._buffered
        for event in events:
            if isinstance(event, NotificationReceived):  # the common case first
                self._route(event.row, event.params)
            elif isinstance(event, ResponseReceived):
                self._resolve(event.request_id, Outcome(value=event.result))
            elif isinstance(event, (ErrorReceived, CallFailed)):
                error: BaseException = event.error
                if isinstance(error, ConnectionClosed):
                    if self.close_reason is None:  # the connection closed itself
                        self.close_reason = error
                    error = self.closed_error()
                self._resolve(event.request_id, Outcome(error=error))
            elif isinstance(event, RequestReceived):
                if self._clocked:
                    self._asked(event.request_id, getattr(event.params, "session_id", None))
                self._serving[event.request_id] = self._start_handler(
                    event.request_id, event.row, event.params
                )
            elif isinstance(event, (CancelRequested, PromptCancelRequested)):
                self._cancel_handler(event.request_id)
            elif isinstance(event, FrameRejected):
                log.debug("frame rejected: %s", event.reason)
            elif isinstance(event, ConnectionClosedEvent):  # pyright: ignore[reportUnnecessaryIsInstance] - the last kind, named for readers
                self.input_ended = True
                if event.reason is not None:  # it gave up on the peer (`NotAnAgent`)
                    if self.close_reason is None:
                        self.close_reason = event.reason
                    self._wake_all()
        if self._buffered != routed:  # updates reached turns: wake them once per batch
            self.delivered.notify()

    def _resolve(self, request_id: RequestId, outcome: Outcome[Any]) -> None:
        waiter = self._calls.pop(request_id, None)
        sink = self._turn_of_call.pop(request_id, None)
        if sink is not None:
            self._finish_turn(sink, outcome)
        if waiter is not None and waiter is not _NO_WAITER and not waiter.done():
            waiter.set_result(outcome)

    def _route(self, row: Row, params: Any) -> None:
        if row.wire == SESSION_UPDATE:
            sink = self._turns.get(params.session_id)
            if sink is not None:
                sink.updates.append(params.update)
                sink.received += 1
                self._buffered += 1
                if sink.idle is not None:
                    sink.rearm()
            elif self.on_update is not None:
                self._queue_callback(self.on_update, params)  # folded when handed out
            elif self.fold is not None:
                self._fold_in(params.session_id, params.update)  # nobody to hand it to
        for callback in self._notification_callbacks(row, params):
            self._queue_callback(callback, params)

    def _asked(self, request_id: RequestId, session_id: Any) -> None:
        """The agent asked us something in the session: its turn is not idle, and stays
        so until we answer (the wait is ours: a person deciding on a permission)."""
        sink = self._turns.get(session_id) if isinstance(session_id, str) else None
        if sink is not None and sink.idle is not None:
            sink.rearm()
            sink.asking += 1
            self._asked_in[request_id] = sink

    def _answered(self, request_id: RequestId) -> None:
        """We answered the agent's request: its silence counts again from now."""
        if self._asked_in:
            sink = self._asked_in.pop(request_id, None)
            if sink is not None:
                sink.asking -= 1
                sink.rearm()

    # ------------------------------------------------------------------ session state
    # A session's state is the caller's view: it folds exactly the updates handed out
    # (by a turn's iterator, to `on_update`), and on arrival those nobody would take.

    def handed_out(self, session_id: str, update: Any) -> None:
        """A turn's consumer is being handed `update`: the session's state includes it."""
        if self.fold is not None:
            with self.lock:
                self._fold_in(session_id, update)

    def _fold_in(self, session_id: str, update: Any) -> None:
        pending = self._unfolded.setdefault(session_id, [])
        pending.append(update)
        if len(pending) >= FOLD_EVERY:
            self._fold(session_id)

    def state_of(self, session_id: str) -> Any:
        """The folded state of a session: every update handed out so far."""
        with self.lock:
            return self._fold(session_id)

    def forget_state(self, session_id: str) -> None:
        """Start the session's state afresh (`session/load` replays its whole history)."""
        with self.lock:
            self._states.pop(session_id, None)
            self._unfolded.pop(session_id, None)

    def sessions_with_state(self) -> frozenset[str]:
        """The sessions whose state (or updates not folded yet) the engine holds."""
        with self.lock:
            return frozenset(self._states) | frozenset(self._unfolded)

    def _fold(self, session_id: str) -> Any:
        assert self.fold is not None
        pending = self._unfolded.pop(session_id, None)
        state = self._states.get(session_id)
        if pending or state is None:
            state = self._states[session_id] = self.fold(state, pending or [])
        return state

    def _queue_callback(self, callback: Callback, params: Any) -> None:
        self._callbacks.append((callback, params))
        self._buffered += 1
        self.callbacks_queued += 1
        self.delivered.notify()

    # ------------------------------------------------------------------ consumers

    def take_updates(self, sink: Sink) -> list[Any]:
        """Every update the turn holds now, in order (empty once the turn ended and was
        drained). One lock round trip per batch, not per update. `lock` held."""
        updates = list(sink.updates)
        sink.updates.clear()
        if updates and not sink.released:
            if self._clocked:
                self._release_clocks()
            self._buffered -= len(updates)
            self.may_read.notify()
        return updates

    def _release_clocks(self) -> None:
        """A consumer is about to let a held-back reader read on: what waited in the
        pipe meanwhile (behind the backlog) was our silence, not the agents', so every
        turn's idle deadline starts again (see `Sink.expire`)."""
        if not self.reader_may_read():
            for sink in self._clocked:
                sink.rearm()

    def next_callback(self) -> tuple[Callback, Any] | None:
        """The next notification callback to run (None: closed). `lock` held."""
        if not self._callbacks:
            return None
        # The running callback no longer counts as buffered: it may call the client and
        # wait for an answer the reader must still read.
        if self._clocked:
            self._release_clocks()
        self._buffered -= 1
        self.may_read.notify()
        job = self._callbacks.popleft()
        if job[0] is self.on_update and self.fold is not None:
            self._fold_in(job[1].session_id, job[1].update)  # handed out now
        return job

    def callback_finished(self) -> None:
        with self.lock:
            self.callbacks_done += 1
            self.may_read.notify()
            self.delivered.notify()

    def _finish_turn(self, sink: Sink, outcome: Outcome[Any]) -> None:
        if sink.outcome is None:
            sink.outcome = outcome
        if not sink.released:
            # Its updates no longer hold the reader back: a consumer may abandon a
            # finished turn (break, an exception) and they must not count forever.
            sink.released = True
            self._buffered -= len(sink.updates)
            self.may_read.notify()
        if self._turns.get(sink.session_id) is sink:
            del self._turns[sink.session_id]
        self._clocked.discard(sink)
        self.delivered.notify()

    # ------------------------------------------------------------------ turns' clocks

    def next_turn_deadline(self) -> float | None:
        """When `expire_turns` next has something to do (None: no clocked turn).
        `lock` held; the clock loop calls it before each wait."""
        self._clock_changed = False
        deadlines = [d for sink in self._clocked if (d := sink.next_deadline()) is not None]
        return min(deadlines) if deadlines else None

    def expire_turns(self) -> None:
        """Do what each turn's clock says (`Sink.expire`, the rule): send
        `session/cancel`, or end the turn with `RequestTimeout` and tell the agent
        (`$/cancel_request`)."""
        with self.lock:
            now = time.monotonic()
            # A reader stopped by our own consumers (or our own handlers) is our silence.
            held_back = not self.reader_may_read()
            for sink in list(self._clocked):
                action = sink.expire(now, held_back=held_back)
                if action == "cancel":
                    self._send_cancel(sink.session_id)
                elif action == "give up":
                    self._clocked.discard(sink)
                    self._calls.pop(sink.request_id, None)
                    self._turn_of_call.pop(sink.request_id, None)
                    _error, frame = self.connection.time_out(sink.request_id)
                    self._finish_turn(sink, Outcome(error=sink.timeout_error()))
                    if frame and not self.output_closed:
                        self._queue_frame(frame, reply=False)

    def _send_cancel(self, session_id: str) -> None:
        row = self.connection.table.get(Side.AGENT, "session/cancel", Kind.NOTIFICATION)
        if row is None or self.close_reason is not None:
            return
        params = decode({"sessionId": session_id}, row.params_type)
        with contextlib.suppress(ACPError):
            frame = self.connection.send_notification(row, params)  # type: ignore[arg-type] # a notification row
            self._queue_frame(frame, reply=False)

    # ------------------------------------------------------------------ handlers

    def answer(
        self,
        request_id: RequestId,
        result: Any = None,
        *,
        error: BaseException | None = None,
        cancelled: bool = False,
    ) -> None:
        """A handler ended: queue its one answer (the connection's rule) and free its slot."""
        if isinstance(error, ConnectionClosed):
            # The handler saw the connection end (send_update after the peer left): that
            # is how a turn stops at end of input, not a failure to report.
            error, cancelled = None, True
        with self.lock:
            self._serving.pop(request_id, None)
            self._answered(request_id)
            holding = self.connection.holding
            frame = self.connection.answer(request_id, result, error=error, cancelled=cancelled)
            self._queue_frame(frame, reply=True)
            if holding:
                self._take_released()
            self.may_read.notify()

    def answer_unanswered(self, request_id: RequestId, handle: Cancellable) -> None:
        """A handler ended: if it never answered (cancelled before it first ran), answer
        it as cancelled now, so every request gets exactly one answer. `handle` tells
        it from a later request that reuses the id."""
        with self.lock:
            if self._serving.get(request_id) is handle:
                del self._serving[request_id]
                self._answered(request_id)
                holding = self.connection.holding
                frame = self.connection.answer(request_id, cancelled=True)
                self._queue_frame(frame, reply=True)
                if holding:
                    self._take_released()
                self.may_read.notify()

    def _cancel_handler(self, request_id: RequestId) -> None:
        handle = self._serving.get(request_id)
        if handle is not None and handle.cancel():
            self._serving.pop(request_id, None)
            self._answered(request_id)
            holding = self.connection.holding
            frame = self.connection.answer(request_id, cancelled=True)
            self._queue_frame(frame, reply=True)
            if holding:
                self._take_released()

    def _take_released(self) -> None:
        """`initialize` was just answered: what the connection held behind it (a
        pipelined `session/new`) is processed now, after that answer. `lock` held."""
        self._dispatch(self.connection.events())
        self._queue_frame(self.connection.data_to_send(), reply=True)

    @property
    def serving(self) -> int:
        return len(self._serving)

    # ------------------------------------------------------------------ closing

    def shutdown(self, reason: ConnectionClosed) -> None:
        """Close locally: no new calls; pending calls, turns and callback waits end with
        `reason`; handlers are cancelled; the writer stops once its queue is sent."""
        with self.lock:
            if self.close_reason is None:
                self.close_reason = reason
            self.connection.close()
            self._dispatch(self.connection.events())
            for request_id in list(self._calls):
                self._resolve(request_id, Outcome(error=self.closed_error()))
            for handle in self._serving.values():
                handle.cancel()
            self._wake_all()

    def peer_stopped_reading(self) -> None:
        """A write failed: the peer closed its input. Nothing more can be sent, so every
        pending call and turn fails now (instead of waiting for an answer to a request
        that never left)."""
        self.close_output(flush=False)
        self.shutdown(ConnectionClosed("the peer closed its input (it stopped reading)"))

    def close_output(self, *, flush: bool) -> None:
        """No more frames: the writer sends what is queued (`flush`) or drops it (the
        peer's input is gone), then closes its side."""
        with self.lock:
            self.output_closed = True
            if not flush:
                self.output_dropped = True
                self._queue.clear()
                self._queued = self._replies_queued = self._answers_queued = 0
            self._wake_all()

    def _wake_all(self) -> None:
        for signal in (self.to_write, self.space, self.may_read, self.delivered, self.clock):
            signal.notify()


def send_timeout(row: Row, timeout: float | None) -> RequestTimeout:
    return RequestTimeout(
        f"{row.wire}: could not send within {timeout} s (the peer is not reading)",
        method=row.wire,
    )
