"""The flows, stepped by hand: no thread, no event loop, no subprocess.

Each test drives a flow generator itself (`next`, `send`, `throw`), feeds the engine the
peer's frames, and checks the operation yielded at each step, what was written, and
what the flow does when an interruption (Ctrl-C, a cancelled task) is thrown in at
each of its yields: calls, notifications, turns and their clocks, reading, writing,
callbacks, handlers and closing.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Generator, Sequence
from typing import Any

import orjson
import pytest

from acp_sdk._driver import flows
from acp_sdk._driver.engine import LET_THE_WRITER_RUN, Engine
from acp_sdk._driver.flows import AwaitCall, Read, Run, Until, Write
from acp_sdk._driver.turn import Sink
from acp_sdk._driver.vocabulary import Expired, Limits, Outcome
from acp_sdk.methods import AUTHENTICATE, INITIALIZE, SESSION_CANCEL, SESSION_PROMPT
from acp_sdk.protocol._connection import Connection
from acp_sdk.protocol._errors import (
    ConnectionClosed,
    LocalProtocolError,
    RequestError,
    RequestTimeout,
)
from acp_sdk.protocol._rows import Side
from acp_sdk.schema import (
    AuthenticateRequest,
    CancelledPermissionOutcome,
    CancelNotification,
    InitializeRequest,
    PromptRequest,
    RequestPermissionResponse,
    TextContent,
)

pytestmark = pytest.mark.timeout(10)


class Signal:
    def __init__(self) -> None:
        self.notified = 0

    def notify(self) -> None:
        self.notified += 1


class Handle:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> bool:
        self.cancelled = True
        return False


class Peer:
    """The other end: what the engine wrote (frames), and frames to feed it."""

    def __init__(self, engine: Engine[Any], *, reading: bool = True) -> None:
        self.engine = engine
        self.reading = reading
        self.frames: list[dict[str, Any]] = []
        self.handlers: list[tuple[Any, Any, Any, Handle]] = []
        self.callbacks: list[Any] = []
        engine.try_write = self.take

    def take(self, data: bytes) -> int:
        if not self.reading:
            return 0
        self.frames += [orjson.loads(line) for line in data.splitlines() if line.strip()]
        return len(data)

    def feed(self, **message: Any) -> None:
        self.engine.feed(orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n")

    def methods(self) -> list[str]:
        return [frame.get("method", "<response>") for frame in self.frames]

    def last(self, method: str) -> dict[str, Any]:
        return next(f for f in reversed(self.frames) if f.get("method") == method)


def new_engine(**limits: Any) -> tuple[Engine[Any], Peer]:
    holder: list[Peer] = []

    def start_handler(request_id: Any, row: Any, params: Any) -> Handle:
        handle = Handle()
        holder[0].handlers.append((request_id, row, params, handle))
        return handle

    def callbacks(row: Any, params: Any) -> list[Any]:
        return list(holder[0].callbacks)

    engine: Engine[Any] = Engine(
        Connection(Side.CLIENT),
        limits=Limits(**limits),
        new_signal=Signal,
        new_waiter=concurrent.futures.Future,
        start_handler=start_handler,
        notification_callbacks=callbacks,
    )
    holder.append(Peer(engine))
    return engine, holder[0]


def result_of(flow: Generator[Any, Any, Any], value: Any = None) -> Any:
    """Resume `flow` with `value`; it must now return: its result."""
    with pytest.raises(StopIteration) as stop:
        flow.send(value)
    return stop.value.value


def ready() -> tuple[Engine[Any], Peer]:
    """An engine whose connection is initialized."""
    engine, peer = new_engine()
    flow = flows.call(engine, INITIALIZE, InitializeRequest(protocol_version=1), None)
    op = next(flow)
    assert isinstance(op, AwaitCall)
    request = peer.last("initialize")
    peer.feed(id=request["id"], result={"protocolVersion": 1, "agentCapabilities": {}})
    assert op.waiter.done()
    assert result_of(flow, op.waiter.result()).protocol_version == 1
    return engine, peer


def authenticate(engine: Engine[Any], timeout: float | None = None) -> Any:
    return flows.call(engine, AUTHENTICATE, AuthenticateRequest(method_id="m"), timeout)


def prompt(session: str = "s1") -> PromptRequest:
    return PromptRequest(session_id=session, prompt=[TextContent(text="hi")])


def chunk(peer: Peer, text: str, session: str = "s1") -> None:
    peer.feed(
        method="session/update",
        params={
            "sessionId": session,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text},
            },
        },
    )


# ---------------------------------------------------------------------- calls


def test_a_call_with_room_sends_at_once_and_awaits_its_outcome() -> None:
    engine, peer = ready()
    flow = authenticate(engine, timeout=30)
    op = next(flow)
    assert isinstance(op, AwaitCall)
    assert op.deadline is not None
    assert peer.methods()[-1] == "authenticate"
    peer.feed(id=peer.last("authenticate")["id"], result={})
    assert result_of(flow, op.waiter.result()) is not None


def test_a_call_error_outcome_raises_in_the_caller() -> None:
    engine, peer = ready()
    flow = authenticate(engine)
    op = next(flow)
    peer.feed(id=peer.last("authenticate")["id"], error={"code": -32000, "message": "no"})
    with pytest.raises(RequestError, match="no"):
        flow.send(op.waiter.result())


def test_a_call_past_its_deadline_times_out_and_tells_the_peer() -> None:
    engine, peer = ready()
    flow = authenticate(engine, timeout=5)
    next(flow)
    with pytest.raises(RequestTimeout):
        flow.throw(Expired())
    assert peer.methods()[-1] == "$/cancel_request"
    assert peer.frames[-1]["params"]["requestId"] == peer.last("authenticate")["id"]


def test_a_call_answered_just_before_its_deadline_returns_the_answer() -> None:
    engine, peer = ready()
    flow = authenticate(engine, timeout=5)
    op = next(flow)
    peer.feed(id=peer.last("authenticate")["id"], result={})
    with pytest.raises(StopIteration):
        flow.throw(Expired())
    assert op.waiter.done()
    assert "$/cancel_request" not in peer.methods()


def test_a_call_interrupted_at_its_await_gives_up_and_tells_the_peer() -> None:
    engine, peer = ready()
    flow = authenticate(engine)
    next(flow)
    with pytest.raises(KeyboardInterrupt):
        flow.throw(KeyboardInterrupt())
    assert peer.methods()[-1] == "$/cancel_request"
    peer.feed(id=peer.last("authenticate")["id"], result={})  # a late answer: ignored


def test_a_call_waits_for_room_and_its_deadline_covers_the_wait() -> None:
    engine, peer = ready()
    engine.limits = Limits(max_send_buffer=10)
    peer.reading = False
    engine.send_notification(SESSION_CANCEL, CancelNotification(session_id="s0"))
    flow = authenticate(engine, timeout=1)
    op = next(flow)
    assert isinstance(op, Until)
    assert op.signal is engine.space
    assert op.deadline is not None
    with pytest.raises(RequestTimeout, match="could not send"):
        flow.send(False)


def test_a_call_interrupted_while_waiting_for_room_sends_nothing() -> None:
    engine, peer = ready()
    engine.limits = Limits(max_send_buffer=10)
    peer.reading = False
    engine.send_notification(SESSION_CANCEL, CancelNotification(session_id="s0"))
    flow = authenticate(engine)
    assert isinstance(next(flow), Until)
    queued = engine.queued_bytes
    with pytest.raises(KeyboardInterrupt):
        flow.throw(KeyboardInterrupt())
    assert engine.queued_bytes == queued


def test_a_call_returns_after_the_callbacks_of_notifications_before_its_answer() -> None:
    engine, peer = ready()
    peer.callbacks.append(lambda params: None)
    flow = authenticate(engine)
    op = next(flow)
    chunk(peer, "note")  # no turn in s1: one callback
    peer.feed(id=peer.last("authenticate")["id"], result={})
    assert engine.callbacks_queued == 1
    settle = flow.send(op.waiter.result())
    assert isinstance(settle, Until)
    assert not settle.ready()
    engine.callback_finished()
    assert settle.ready()
    result_of(flow, True)


def test_a_call_on_the_callback_runner_does_not_wait_for_itself() -> None:
    engine, peer = ready()
    peer.callbacks.append(lambda params: None)
    engine.on_callback_runner = lambda: True
    flow = authenticate(engine)
    op = next(flow)
    chunk(peer, "note")
    peer.feed(id=peer.last("authenticate")["id"], result={})
    result_of(flow, op.waiter.result())


# ---------------------------------------------------------------------- notifications


def test_a_notification_with_room_is_sent_without_a_yield() -> None:
    engine, peer = ready()
    flow = flows.notify(engine, SESSION_CANCEL, CancelNotification(session_id="s1"), None)
    result_of(flow)
    assert peer.methods()[-1] == "session/cancel"


def test_a_notification_yields_to_the_writer_past_the_threshold() -> None:
    engine, peer = ready()
    peer.reading = False
    engine.limits = Limits(max_send_buffer=LET_THE_WRITER_RUN * 4)
    while engine.queued_bytes <= LET_THE_WRITER_RUN:
        engine.send_notification(SESSION_CANCEL, CancelNotification(session_id="x" * 1000))
    flow = flows.notify(engine, SESSION_CANCEL, CancelNotification(session_id="s1"), None)
    op = next(flow)
    assert isinstance(op, Until)  # a wait whose deadline has passed: a yield
    assert not op.ready()
    result_of(flow, False)


def test_a_notification_waits_for_room_up_to_its_timeout() -> None:
    engine, peer = ready()
    engine.limits = Limits(max_send_buffer=10)
    peer.reading = False
    engine.send_notification(SESSION_CANCEL, CancelNotification(session_id="s0"))
    flow = flows.notify(engine, SESSION_CANCEL, CancelNotification(session_id="s1"), 1)
    assert isinstance(next(flow), Until)
    with pytest.raises(RequestTimeout):
        flow.send(False)
    flow = flows.notify(engine, SESSION_CANCEL, CancelNotification(session_id="s1"), None)
    next(flow)
    with pytest.raises(KeyboardInterrupt):
        flow.throw(KeyboardInterrupt())


# ---------------------------------------------------------------------- turns


def test_a_turn_is_queued_at_once_even_without_room() -> None:
    engine, peer = ready()
    engine.limits = Limits(max_send_buffer=10)
    peer.reading = False
    engine.send_notification(SESSION_CANCEL, CancelNotification(session_id="s0"))
    before = engine.queued_bytes
    sink = engine.begin_turn(SESSION_PROMPT, prompt())
    assert engine.queued_bytes > before  # queued behind, never waiting
    assert sink.outcome is None


def test_a_turns_updates_then_its_end() -> None:
    engine, peer = ready()
    sink = engine.begin_turn(SESSION_PROMPT, prompt())
    request = peer.last("session/prompt")
    flow = flows.next_updates(engine, sink)
    op = next(flow)
    assert isinstance(op, Until)
    assert op.signal is engine.delivered
    assert op.deadline is None  # the clock is not the iterator's
    chunk(peer, "a")
    chunk(peer, "b")
    assert op.ready()
    assert [u.content.text for u in result_of(flow, True)] == ["a", "b"]
    peer.feed(id=request["id"], result={"stopReason": "end_turn"})
    flow = flows.next_updates(engine, sink)
    with pytest.raises(StopIteration) as stop:
        next(flow)
    assert stop.value.value == []
    assert sink.outcome is not None
    assert sink.outcome.value.stop_reason == "end_turn"


def test_a_second_turn_in_a_session_is_refused_while_the_first_runs() -> None:
    engine, peer = ready()
    sink = engine.begin_turn(SESSION_PROMPT, prompt())
    with pytest.raises(LocalProtocolError, match="still running"):
        engine.begin_turn(SESSION_PROMPT, prompt())
    engine.begin_turn(SESSION_PROMPT, prompt("s2"))  # another session: fine
    peer.feed(id=sink.request_id, result={"stopReason": "end_turn"})
    engine.begin_turn(SESSION_PROMPT, prompt())  # the first ended: fine


def test_an_interrupted_iteration_leaves_the_turn_running() -> None:
    engine, peer = ready()
    sink = engine.begin_turn(SESSION_PROMPT, prompt())
    flow = flows.next_updates(engine, sink)
    next(flow)
    with pytest.raises(KeyboardInterrupt):
        flow.throw(KeyboardInterrupt())
    chunk(peer, "later")
    peer.feed(id=sink.request_id, result={"stopReason": "cancelled"})
    flow = flows.next_updates(engine, sink)
    with pytest.raises(StopIteration) as stop:
        next(flow)
    assert [u.content.text for u in stop.value.value] == ["later"]


def test_updates_of_a_turn_nobody_iterates_stop_the_reader_at_the_bound() -> None:
    engine, peer = ready()
    engine.limits = Limits(max_buffered_updates=3)
    sink = engine.begin_turn(SESSION_PROMPT, prompt())
    for index in range(3):
        chunk(peer, str(index))
    assert not engine.reader_may_read()
    with engine.lock:
        engine.take_updates(sink)
    assert engine.reader_may_read()


# ---------------------------------------------------------------------- turns' clocks


def clock_step(flow: Generator[Any, Any, Any], value: Any) -> Until:
    op = flow.send(value)
    assert isinstance(op, Until)
    return op


def test_the_clock_loop_waits_for_the_nearest_deadline() -> None:
    engine, _peer = ready()
    flow = flows.clock_loop(engine)
    op = next(flow)
    assert isinstance(op, Until)
    assert op.deadline is None  # no clocked turn
    engine.begin_turn(SESSION_PROMPT, prompt(), timeout=30)
    assert op.ready()  # a new clock wakes the loop
    op = clock_step(flow, True)
    assert op.deadline is not None
    assert 25 < op.deadline - time.monotonic() <= 30


def test_a_passed_timeout_sends_cancel_then_the_agent_ends_the_turn_cancelled() -> None:
    engine, peer = ready()
    sink = engine.begin_turn(SESSION_PROMPT, prompt(), timeout=30, grace=7)
    flow = flows.clock_loop(engine)
    next(flow)
    sink.deadline = time.monotonic() - 1  # as if 30 s had passed
    op = clock_step(flow, False)
    assert peer.methods()[-1] == "session/cancel"
    assert sink.timed_out == "timeout"
    assert op.deadline is not None
    assert 5 < op.deadline - time.monotonic() <= 7  # the grace
    peer.feed(id=sink.request_id, result={"stopReason": "cancelled"})
    assert sink.outcome is not None
    assert sink.outcome.value.stop_reason == "cancelled"
    assert clock_step(flow, False).deadline is None  # nothing left to time


def test_a_passed_grace_ends_the_turn_with_request_timeout() -> None:
    engine, peer = ready()
    sink = engine.begin_turn(SESSION_PROMPT, prompt(), idle_timeout=30, grace=1)
    flow = flows.clock_loop(engine)
    next(flow)
    sink.idle_deadline = time.monotonic() - 1
    clock_step(flow, False)
    assert sink.timed_out == "idle_timeout"
    assert sink.give_up_at is not None
    sink.give_up_at = time.monotonic() - 1
    clock_step(flow, False)
    assert sink.outcome is not None
    assert isinstance(sink.outcome.error, RequestTimeout)
    assert "idle timeout 30 s" in str(sink.outcome.error)
    assert peer.methods()[-1] == "$/cancel_request"
    engine.begin_turn(SESSION_PROMPT, prompt())  # the session is free again


def test_updates_and_agent_requests_in_the_session_rearm_the_idle_clock() -> None:
    engine, peer = ready()
    sink = engine.begin_turn(SESSION_PROMPT, prompt(), idle_timeout=30)
    sink.idle_deadline = first = time.monotonic() - 1
    chunk(peer, "still here")
    assert sink.idle_deadline is not None
    assert sink.idle_deadline > first + 20
    sink.idle_deadline = first
    peer.feed(
        id="a1",
        method="session/request_permission",
        params={"sessionId": "s1", "toolCall": {"toolCallId": "t"}, "options": []},
    )
    assert sink.idle_deadline > first + 20
    chunk(peer, "another session's", session="s9")
    engine.expire_turns()
    assert sink.timed_out is None


def test_the_hard_timeout_is_not_rearmed_by_updates() -> None:
    engine, peer = ready()
    sink = engine.begin_turn(SESSION_PROMPT, prompt(), timeout=30)
    sink.deadline = time.monotonic() - 1
    chunk(peer, "busy")
    engine.expire_turns()
    assert sink.timed_out == "timeout"


def test_the_clock_loop_ends_on_close_and_passes_interruptions_on() -> None:
    engine, _peer = ready()
    flow = flows.clock_loop(engine)
    op = next(flow)
    assert isinstance(op, Until)
    engine.shutdown(ConnectionClosed("bye"))
    assert op.ready()
    result_of(flow, True)
    flow = flows.clock_loop(new_engine()[0])
    next(flow)
    with pytest.raises(KeyboardInterrupt):
        flow.throw(KeyboardInterrupt())


# ---------------------------------------------------------------------- the driver's own


def test_the_read_loop_feeds_bytes_until_end_of_input() -> None:
    engine, _peer = new_engine()
    flow = flows.read_loop(engine, None)
    assert isinstance(next(flow), Read)
    op = flow.send(b'{"jsonrpc":"2.0","method":"$/x","params":{}}\n')
    assert isinstance(op, Read)
    result_of(flow, b"")
    assert engine.input_ended
    assert isinstance(engine.close_reason, ConnectionClosed)


def test_the_read_loop_pauses_while_consumers_lag() -> None:
    engine, peer = ready()
    engine.limits = Limits(max_buffered_updates=1)
    engine.begin_turn(SESSION_PROMPT, prompt())
    chunk(peer, "x")
    flow = flows.read_loop(engine, None)
    op = next(flow)
    assert isinstance(op, Until)
    assert op.signal is engine.may_read


def test_a_failing_read_loop_closes_the_engine_instead_of_hanging_callers() -> None:
    engine, _peer = ready()
    flow = flows.read_loop(engine, None)
    next(flow)
    with pytest.raises(StopIteration):
        flow.throw(RuntimeError("bug"))  # logged; the engine shuts down
    assert engine.close_reason is not None


def test_the_write_loop_writes_batches_then_closes_our_output() -> None:
    engine, _peer = ready()
    engine.try_write = None  # everything goes through the writer
    engine.send_notification(SESSION_CANCEL, CancelNotification(session_id="s1"))
    flow = flows.write_loop(engine)
    op = next(flow)
    assert isinstance(op, Until)
    assert op.ready()
    write = flow.send(True)
    assert isinstance(write, Write)
    assert b"session/cancel" in write.data
    op = flow.send(True)
    assert engine.queued_bytes == 0
    engine.close_output(flush=True)
    close = flow.send(True)
    assert isinstance(close, Write)
    assert close.data == b""
    result_of(flow, True)


def test_a_failed_write_fails_what_is_pending() -> None:
    engine, _peer = ready()
    engine.try_write = None
    call = authenticate(engine)
    awaiting = next(call)
    flow = flows.write_loop(engine)
    next(flow)
    flow.send(True)
    grace = flow.send(False)  # the write failed: a moment for the reader to see why
    assert isinstance(grace, Until)
    assert grace.deadline is not None
    assert not awaiting.waiter.done()
    assert isinstance(flow.send(False), Write)  # no end of output came: close ours
    assert awaiting.waiter.done()
    with pytest.raises(ConnectionClosed):
        call.send(awaiting.waiter.result())


def test_the_callback_loop_runs_callbacks_and_survives_their_errors() -> None:
    engine, peer = ready()
    seen: list[Any] = []
    engine.on_update = seen.append
    chunk(peer, "a")  # no turn: handed to on_update
    chunk(peer, "b")
    flow = flows.callback_loop(engine)
    op = next(flow)
    assert isinstance(op, Run)
    assert op.function == seen.append
    op = flow.throw(ValueError("user code failed"))  # logged, the loop goes on
    assert isinstance(op, Run)
    assert engine.callbacks_done == 1
    op = flow.send(None)
    assert isinstance(op, Until)
    engine.shutdown(ConnectionClosed("bye"))
    result_of(flow, True)
    assert engine.callbacks_done == 2


def test_a_handler_answers_once_whatever_ends_it() -> None:
    engine, peer = ready()
    for index in range(3):
        peer.feed(
            id=f"p{index}",
            method="session/request_permission",
            params={"sessionId": "s1", "toolCall": {"toolCallId": "t"}, "options": []},
        )
    [(rid0, row, params, _), (rid1, *_), (rid2, *_)] = peer.handlers

    def serve(row: Any, params: Any) -> Any:
        raise AssertionError("run by the driver, not here")

    flow = flows.handle(engine, serve, rid0, row, params)
    assert isinstance(next(flow), Run)
    result_of(flow, RequestPermissionResponse(outcome=CancelledPermissionOutcome()))
    flow = flows.handle(engine, serve, rid1, row, params)
    next(flow)
    with pytest.raises(StopIteration):
        flow.throw(RequestError.internal_error("boom"))
    flow = flows.handle(engine, serve, rid2, row, params)
    next(flow)
    with pytest.raises(KeyboardInterrupt):
        flow.throw(KeyboardInterrupt())
    answers = {f["id"]: f for f in peer.frames if "id" in f and "method" not in f}
    assert "result" in answers["p0"]
    assert "error" in answers["p1"]
    assert answers["p2"]["error"]["code"] == -32800  # cancelled
    assert engine.serving == 0


def test_close_fails_pending_calls_and_turns() -> None:
    engine, _peer = ready()
    call = authenticate(engine)
    awaiting = next(call)
    sink: Sink = engine.begin_turn(SESSION_PROMPT, prompt())
    flow = flows.close(engine, None, 1.0, 1.0, "the client was closed")
    with pytest.raises(StopIteration):
        next(flow)
    assert isinstance(awaiting.waiter.result(), Outcome)
    with pytest.raises(ConnectionClosed, match="the client was closed"):
        call.send(awaiting.waiter.result())
    assert sink.outcome is not None
    assert isinstance(sink.outcome.error, ConnectionClosed)
    with pytest.raises(ConnectionClosed):
        engine.begin_turn(SESSION_PROMPT, prompt("s2"))


# ---------------------------------------------------------------------- the caller's view


def folding(engine: Engine[Any]) -> None:
    engine.fold = lambda state, updates: [*(state or []), *(u.content.text for u in updates)]


def test_a_turns_updates_join_the_state_only_as_they_are_handed_out() -> None:
    engine, peer = ready()
    folding(engine)
    sink = engine.begin_turn(SESSION_PROMPT, prompt())
    chunk(peer, "a")
    chunk(peer, "b")
    assert engine.state_of("s1") == []
    flow = flows.next_updates(engine, sink)
    with pytest.raises(StopIteration) as stop:
        next(flow)
    first, second = stop.value.value
    engine.handed_out("s1", first)
    assert engine.state_of("s1") == ["a"]
    engine.handed_out("s1", second)
    assert engine.state_of("s1") == ["a", "b"]


def test_updates_nobody_takes_join_the_state_on_arrival() -> None:
    engine, peer = ready()
    folding(engine)
    chunk(peer, "alone")
    assert engine.state_of("s1") == ["alone"]


def test_updates_for_on_update_join_the_state_when_handed_to_it() -> None:
    engine, peer = ready()
    folding(engine)
    engine.on_update = lambda params: None
    chunk(peer, "later")
    assert engine.state_of("s1") == []
    with engine.lock:
        job = engine.next_callback()
    assert job is not None
    assert engine.state_of("s1") == ["later"]


def test_a_turn_whose_updates_wait_for_the_consumer_is_not_idle() -> None:
    engine, peer = ready()
    sink = engine.begin_turn(SESSION_PROMPT, prompt(), idle_timeout=30)
    chunk(peer, "unread")
    sink.idle_deadline = time.monotonic() - 1
    engine.expire_turns()
    assert sink.timed_out is None
    assert sink.idle_deadline > time.monotonic() + 20


# ---------------------------------------------------------------------- an agent process


class FakeProcess:
    """What the flows ask of an `AgentProcess`: its sleeps, why it ended, its stderr."""

    def __init__(self) -> None:
        self.stderr = StderrSink()

    def exit_steps(self) -> Generator[float, None, None]:
        yield 0.25
        yield 0.5

    def stop_steps(self, close_timeout: float, terminate_timeout: float) -> Any:
        yield close_timeout
        yield terminate_timeout

    def exit_reason(self, stray_lines: Sequence[str] = ()) -> ConnectionClosed:
        return ConnectionClosed("the agent exited with code 3", exit_code=3)


class StderrSink:
    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def feed(self, chunk: bytes) -> None:
        self.chunks.append(chunk)


def sleeps(op: Any, seconds: float) -> bool:
    """`op` is a sleep of about `seconds`: an Until that never holds, with a deadline."""
    return (
        isinstance(op, Until)
        and not op.ready()
        and op.deadline is not None
        and seconds - 0.2 < op.deadline - time.monotonic() <= seconds
    )


def test_end_of_input_waits_for_the_agent_to_exit_and_says_why() -> None:
    engine, _peer = ready()
    flow = flows.read_loop(engine, FakeProcess())  # type: ignore[arg-type] # a fake
    next(flow)
    assert sleeps(flow.send(b""), 0.25)
    assert sleeps(flow.send(False), 0.5)
    result_of(flow, False)
    assert engine.close_reason is not None
    assert engine.close_reason.exit_code == 3


def test_close_escalates_through_the_process_steps_and_an_interruption_stops_it() -> None:
    engine, _peer = ready()
    flow = flows.close(engine, FakeProcess(), 1.0, 2.0, "bye")  # type: ignore[arg-type] # a fake
    assert sleeps(next(flow), 1.0)
    assert engine.close_reason is not None  # everything pending failed first
    assert sleeps(flow.send(False), 2.0)
    result_of(flow, False)
    flow = flows.close(engine, FakeProcess(), 1.0, 2.0, "bye")  # type: ignore[arg-type] # a fake
    next(flow)
    with pytest.raises(KeyboardInterrupt):
        flow.throw(KeyboardInterrupt())


def test_the_stderr_loop_drains_until_end_of_file() -> None:
    process = FakeProcess()
    flow = flows.stderr_loop(process)  # type: ignore[arg-type] # a fake
    op = next(flow)
    assert isinstance(op, Read)
    assert op.stderr
    assert isinstance(flow.send(b"line\n"), Read)
    result_of(flow, b"")
    assert process.stderr.chunks == [b"line\n", b""]


def test_end_of_service_waits_for_the_peer_then_the_handlers_within_the_grace() -> None:
    engine, peer = ready()
    peer.feed(
        id="p1",
        method="session/request_permission",
        params={"sessionId": "s1", "toolCall": {"toolCallId": "t"}, "options": []},
    )
    flow = flows.end_of_service(engine, 3.0)
    op = next(flow)
    assert isinstance(op, Until)
    assert not op.ready()
    engine.end_of_input(ConnectionClosed("the peer closed the connection"))
    grace = flow.send(True)
    assert isinstance(grace, Until)
    assert grace.deadline is not None
    assert not grace.ready()  # a handler still runs
    result_of(flow, False)
