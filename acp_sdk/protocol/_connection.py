"""The sans-IO ACP connection: bytes in, events out; calls in, bytes out.

One `Connection` holds everything both facades and the agent runtime would otherwise
each re-implement: framing, JSON-RPC envelopes, request-id correlation, the lifecycle,
capability checks in both directions, and the cancellation rules. It does no I/O, starts
no threads and knows no event loop (the h11 design):

    conn = Connection(Side.CLIENT)
    request_id, data = conn.send_request(INITIALIZE, InitializeRequest(protocol_version=1))
    transport.write(data)
    conn.receive_data(transport.read())        # b"" at end of input
    while (event := conn.next_event()) is not NEED_DATA:
        ...                                    # ResponseReceived, RequestReceived, ...
    transport.write(conn.data_to_send())       # replies the protocol made on its own

Inbound requests are checked in this order, each failure answered by the connection
itself: envelope (-32700/-32600), lifecycle (-32600), duplicate in-flight id (dropped),
unknown method or a notification-only method (-32601), our own advertised capability
(-32601), params decode (-32602), params-dependent capabilities (-32602).

Responses are never answered. One that matches none of our pending calls is dropped
(`FrameRejected(replied=False)`). One that is malformed (a bad `"jsonrpc"`, both `result`
and `error`, an error object without an integer `code` and string `message`) but carries
the exact id (`1` is not `"1"`) of a pending call ends that call at once with
`CallFailed(RemoteProtocolError)`, whose message names the method and the fault, never
the peer's values; `FrameRejected` is still emitted for logging, and the connection
stays usable. A call that ends without a usable answer (error, bad answer, cancelled,
timed out) and was `initialize` sends the lifecycle back to NEW, so it can be retried.

Requests are processed in the order received, also at the start: on the side that
received `initialize`, every frame behind it (a pipelined `session/new`, end of input)
is held, unprocessed, until it is answered (`holding`), then processed in order. On the
client side, more than `STRAY_LIMIT_LINES` lines (or `STRAY_LIMIT_BYTES`) that are not
JSON-RPC before `initialize` is answered mean the peer is not an agent: the connection
closes, failing `initialize` with `NotAnAgent`.

The lifecycle (`_state`) is one transition table; every change goes through `_fire`.
End of input half-closes: `state` becomes CLOSED, pending calls fail with
`ConnectionClosed`, no more calls can start, but requests already received stay
answerable (the peer may still read) until a local `close()`.

A UTF-8 byte order mark at the very start of the input is ignored (`_framing`). The
bytes-in half (framing, stray output, held frames) is the base class, `_intake.Intake`.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from typing import Any, Final, TypeVar

import attrs

from acp_sdk.protocol import _jsonrpc as rpc
from acp_sdk.protocol._capabilities import (
    PARAMS_GATED,
    Capabilities,
    Info,
    is_advertised,
    required_by_params,
    update_capability,
)
from acp_sdk.protocol._codec import decode, to_json_value
from acp_sdk.protocol._errors import (
    ACPError,
    CapabilityNotNegotiated,
    ConnectionClosed,
    DecodeError,
    EncodeError,
    ErrorCode,
    LocalProtocolError,
    RemoteProtocolError,
    RequestError,
    RequestTimeout,
    UnsupportedProtocolVersion,
)
from acp_sdk.protocol._events import (
    NEED_DATA,
    CallFailed,
    CancelRequested,
    ConnectionClosedEvent,
    ErrorReceived,
    Event,
    FrameRejected,
    NeedData,
    PromptCancelRequested,
    notification_received,
    request_received,
    response_received,
)
from acp_sdk.protocol._framing import DEFAULT_MAX_FRAME_SIZE
from acp_sdk.protocol._intake import Intake
from acp_sdk.protocol._jsonrpc import RequestId
from acp_sdk.protocol._rows import Kind, Method, MethodTable, Notification, Row, Side
from acp_sdk.protocol._state import Lifecycle, State, Trigger, refusal, step

__all__ = ["SUPPORTED_PROTOCOL_VERSIONS", "Connection"]

P = TypeVar("P")
R = TypeVar("R")

SUPPORTED_PROTOCOL_VERSIONS: Final = (1,)
log = logging.getLogger("acp_sdk.connection")
_wire = logging.getLogger("acp_sdk.wire")
_WIRE_LOG_BYTES: Final = 4096
"""`acp_sdk.wire` at DEBUG logs every frame received (and the driver every frame sent),
cut to `_WIRE_LOG_BYTES` bytes."""

_INITIALIZE: Final = "initialize"
_PROMPT: Final = "session/prompt"
_SESSION_CANCEL: Final = "session/cancel"
_SESSION_CLOSE: Final = "session/close"
_SESSION_UPDATE: Final = "session/update"
_UNLEARNT: Final[Any] = object()
_CANCEL_REQUEST: Final = "$/cancel_request"
_ROOT: Final = {Side.AGENT: "agentCapabilities", Side.CLIENT: "clientCapabilities"}
_BEFORE_READY: Final = (State.NEW, State.INITIALIZING)


class _InFlight:
    """A request we received and still owe exactly one answer."""

    __slots__ = ("cancelled", "params", "row")

    def __init__(self, row: Row, params: Any) -> None:
        self.row = row
        self.params = params
        self.cancelled = False  # session/cancel arrived first (prompts only)


class Connection(Intake):
    """One side of an ACP connection, as a state machine.

    Args:
        our_role: `Side.CLIENT` or `Side.AGENT`.
        table: The method table (default: the stable protocol; pass
            `acp_sdk.unstable.TABLE`, or a table extended with extension rows).
        max_frame_size: Longest accepted line, in bytes.
        protocol_versions: Versions this side speaks, best last.
    """

    def __init__(
        self,
        our_role: Side,
        *,
        table: MethodTable | None = None,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        protocol_versions: Sequence[int] = SUPPORTED_PROTOCOL_VERSIONS,
    ) -> None:
        if our_role not in (Side.CLIENT, Side.AGENT):
            raise ValueError("our_role is Side.CLIENT or Side.AGENT")
        if table is None:
            from acp_sdk.protocol._generated.methods import TABLE

            table = TABLE
        self.our_role = our_role
        self.their_role = our_role.peer
        self.table = table
        self.protocol_versions = tuple(protocol_versions)
        self._lifecycle = Lifecycle()
        self.protocol_version: int | None = None
        self.our_capabilities: Capabilities | None = None
        """What we advertised at initialize (None before)."""
        self.their_capabilities: Capabilities | None = None
        """What the peer advertised at initialize: `AgentCapabilities` on a client,
        `ClientCapabilities` on an agent (their `acp_sdk.unstable` twins over the
        unstable table); None before initialize or when the peer sent none."""
        self.their_info: Info | None = None
        """The peer's `Implementation` (name, version), if it sent one."""
        super().__init__(max_frame_size)
        self._events: deque[Event] = deque()
        self._outbox = bytearray()
        self._next_id = 0
        self._pending: dict[RequestId, Row] = {}
        self._inbound: dict[RequestId, _InFlight] = {}
        # The last row `_check_outbound` cleared, and what it was cleared against.
        self._cleared_row: Row | None = None
        self._cleared_lifecycle: Lifecycle | None = None
        self._cleared_capabilities: Capabilities | None = None
        # The capability each session update class needs (None: none), learnt per class.
        self._update_gate_of: dict[type[object], str | None] = {}

    # ------------------------------------------------------------------ introspection

    @property
    def state(self) -> State:
        """The lifecycle state, shared by both peers (`acp_sdk.protocol.State`)."""
        return self._lifecycle.state

    @property
    def pending_ids(self) -> tuple[RequestId, ...]:
        """Ids of our calls still waiting for an answer."""
        return tuple(self._pending)

    @property
    def inbound_ids(self) -> tuple[RequestId, ...]:
        """Ids of received requests still waiting for our answer."""
        return tuple(self._inbound)

    def data_to_send(self) -> bytes:
        """Replies the connection made on its own (errors for refused frames); clears them."""
        data = bytes(self._outbox)
        self._outbox.clear()
        return data

    # ------------------------------------------------------------------ inbound

    def next_event(self) -> Event | NeedData:
        """The next event from received data, or `NEED_DATA` when more bytes are needed."""
        return self._events.popleft() if self._events else NEED_DATA

    def events(self) -> list[Event]:
        """Every event queued so far."""
        out = list(self._events)
        self._events.clear()
        return out

    def _handle(self, message: rpc.Inbound) -> None:
        if isinstance(message, rpc.Notification):  # the common case first
            self._on_notification(message)
        elif isinstance(message, rpc.Request):
            self._on_request(message)
        elif isinstance(message, rpc.Response):
            self._on_response(message)
        elif isinstance(message, rpc.BadResponse):
            self._on_bad_response(message)
        else:
            self._reject(message.id, message.code, message.reason)

    def _reject(
        self, request_id: RequestId | None, code: int, reason: str, data: Any = None
    ) -> None:
        error = RequestError(
            code, _MESSAGES.get(code, "Error"), data if data is not None else {"reason": reason}
        )
        self._outbox += rpc.error_frame(request_id, error.to_wire())
        self._events.append(
            FrameRejected(reason=reason, code=code, request_id=request_id, replied=True)
        )

    def _on_request(self, message: rpc.Request) -> None:
        rid, method = message.id, message.method
        state = self._lifecycle.state
        if state is not State.READY or method == _INITIALIZE:  # else `refusal` is None
            why = refusal(state, method)
            if why is not None:
                self._reject(rid, ErrorCode.INVALID_REQUEST, why)
                return
        if rid in self._inbound:
            log.debug("dropped a request reusing in-flight id %r", rid)
            self._events.append(
                FrameRejected(
                    reason="duplicate in-flight id", code=None, request_id=rid, replied=False
                )
            )
            return
        row = self.table.get(self.our_role, method, Kind.REQUEST)
        if row is None:
            if self.table.get(self.our_role, method, Kind.NOTIFICATION) is not None:
                self._reject(
                    rid, ErrorCode.METHOD_NOT_FOUND, f"{method} is a notification, not a request"
                )
            else:
                self._reject(rid, ErrorCode.METHOD_NOT_FOUND, "unknown method", {"method": method})
            return
        if row.gate is not None and not is_advertised(self.our_capabilities, row.gate):
            self._reject(
                rid, ErrorCode.METHOD_NOT_FOUND, f"{method} is not advertised", {"method": method}
            )
            return
        try:
            params = decode(message.params if message.params is not None else {}, row.params_type)
        except DecodeError as error:
            data = {"path": error.path_text, "reason": error.message}
            self._reject(rid, ErrorCode.INVALID_PARAMS, "params do not decode", data)
            return
        if method in PARAMS_GATED:
            for path in required_by_params(method, params):
                if not is_advertised(self.our_capabilities, path):
                    data = {"capability": path}
                    self._reject(rid, ErrorCode.INVALID_PARAMS, "params need a capability", data)
                    return
        if method == _INITIALIZE:
            self._fire(Trigger.INITIALIZE_STARTED)
            self.their_capabilities = getattr(params, "client_capabilities", None)
            self.their_info = getattr(params, "client_info", None)
            self._start_holding()  # what follows waits for the answer (see `holding`)
        if method == _SESSION_CLOSE and self.our_role is Side.AGENT:
            # session-setup.mdx: close cancels the session's ongoing work "as if
            # session/cancel had been called" (found by `python -m acp_sdk check`):
            # its running prompts end `cancelled` and the agent sees the cancel.
            self._cancel_as_if_notified(getattr(params, "session_id", None))
        self._inbound[rid] = _InFlight(row, params)
        self._events.append(request_received(rid, row, params))

    def _on_notification(self, message: rpc.Notification) -> None:
        method = message.method
        row = self.table.get(self.our_role, method, Kind.NOTIFICATION)
        if row is None:
            log.debug("ignored unknown notification %s", method)
            return
        if self._lifecycle.state is not State.READY:
            log.debug("ignored %s before initialization", method)
            return
        if row.gate is not None and not is_advertised(self.our_capabilities, row.gate):
            log.debug("ignored %s: %s not advertised", method, row.gate)
            return
        try:
            params = decode(message.params if message.params is not None else {}, row.params_type)
        except DecodeError as error:
            log.debug("ignored %s: params do not decode at %s", method, error.path_text)
            return
        if method == _CANCEL_REQUEST:
            target = getattr(params, "request_id", None)
            if target in self._inbound:
                self._events.append(CancelRequested(request_id=target))
            return
        if method == _SESSION_CANCEL and self.our_role is Side.AGENT:
            self._cancel_prompts(getattr(params, "session_id", None))
        self._events.append(notification_received(row, params))

    def _cancel_as_if_notified(self, session_id: object | None) -> None:
        """What a `session/cancel` for the session would do, when a prompt of it runs."""
        row = self.table.get(self.our_role, _SESSION_CANCEL, Kind.NOTIFICATION)
        running = any(
            call.row.wire == _PROMPT
            and not call.cancelled
            and getattr(call.params, "session_id", None) == session_id
            for call in self._inbound.values()
        )
        if row is None or session_id is None or not running:
            return
        self._cancel_prompts(session_id)
        params_type: Any = row.params_type
        self._events.append(notification_received(row, params_type(session_id=session_id)))

    def _cancel_prompts(self, session_id: object | None) -> None:
        """Running prompts of the session (all of them for None) end as cancelled turns:
        each gets `PromptCancelRequested`, and its answer is sent with stop reason
        `cancelled` whatever the handler returns (prompt-turn.mdx)."""
        for rid, call in self._inbound.items():
            if call.row.wire != _PROMPT or call.cancelled:
                continue
            call_session = getattr(call.params, "session_id", None)
            if session_id is None or call_session == session_id:
                call.cancelled = True
                self._events.append(
                    PromptCancelRequested(request_id=rid, session_id=str(call_session))
                )

    def _on_response(self, message: rpc.Response) -> None:
        rid = message.id
        row = self._pending.pop(rid, None) if rid is not None else None
        if row is None:
            log.debug("dropped a response for unknown or finished id %r", rid)
            self._events.append(
                FrameRejected(
                    reason="no call with this id", code=None, request_id=rid, replied=False
                )
            )
            return
        assert rid is not None
        if message.error is not None:
            self._call_ended_badly(row)
            self._events.append(
                ErrorReceived(request_id=rid, row=row, error=RequestError.from_wire(message.error))
            )
            return
        raw: Any = message.result if message.result is not None else {}
        assert row.result_type is not None  # a pending call's row is a request row
        try:
            result = decode(raw, row.result_type)
        except DecodeError as error:
            failure = RemoteProtocolError(f"{row.wire} result does not decode: {error}")
            self._fail_call(rid, row, failure)
            return
        if row.wire == _INITIALIZE:
            version = getattr(result, "protocol_version", None)
            if version not in self.protocol_versions:
                failure = UnsupportedProtocolVersion(int(version or 0), self.protocol_versions)
                self._fail_call(rid, row, failure)
                return
            self.protocol_version = version
            self.their_capabilities = getattr(result, "agent_capabilities", None)
            self.their_info = getattr(result, "agent_info", None)
            self._fire(Trigger.INITIALIZE_SUCCEEDED)
        self._events.append(response_received(rid, row, result))

    def _on_bad_response(self, message: rpc.BadResponse) -> None:
        """A malformed response: logged, and if it carries the id of a pending call, that
        call fails now rather than waiting for an answer that will never come."""
        rid = message.id
        log.debug("dropped a malformed response: %s", message.reason)
        self._events.append(
            FrameRejected(reason=message.reason, code=None, request_id=rid, replied=False)
        )
        row = self._pending.pop(rid, None) if rid is not None else None
        if row is None:
            return
        assert rid is not None
        failure = RemoteProtocolError(f"malformed response to {row.wire}: {message.reason}")
        self._fail_call(rid, row, failure)

    def _fail_call(self, request_id: RequestId, row: Row, error: ACPError) -> None:
        """End one of our calls (already popped from `_pending`) without a usable answer."""
        self._call_ended_badly(row)
        self._events.append(CallFailed(request_id=request_id, row=row, error=error))

    def _call_ended_badly(self, row: Row) -> None:
        if row.wire == _INITIALIZE:
            self._fire(Trigger.INITIALIZE_FAILED)

    def _fire(self, trigger: Trigger) -> None:
        """The one place the lifecycle changes: a step through `_state.TRANSITIONS`."""
        self._lifecycle = step(self._lifecycle, trigger)

    # ------------------------------------------------------------------ outbound

    def send_request(
        self, row: Method[P, R], params: P, *, check_capability: bool = True
    ) -> tuple[RequestId, bytes]:
        """Start a call. Returns its id and the bytes to write.

        Raises:
            LocalProtocolError: Not allowed now (before initialization, a second
                initialize, a method the peer does not handle); nothing was written.
            CapabilityNotNegotiated: The peer did not advertise what the method or its
                params need (skip with `check_capability=False`).
            ConnectionClosed: The connection is closed.
        """
        self._check_outbound(row, params, check_capability)
        request_id = self._next_id
        # Encode before changing any state: a value that cannot be encoded leaves the
        # connection exactly as it was.
        frame = rpc.request_frame(request_id, row.wire, self._payload(params))
        self._next_id += 1
        if row.wire == _INITIALIZE:
            self._fire(Trigger.INITIALIZE_STARTED)
            self.our_capabilities = getattr(params, "client_capabilities", None)
        self._pending[request_id] = row
        return request_id, frame

    def send_notification(
        self, row: Notification[P], params: P, *, check_capability: bool = True
    ) -> bytes:
        """The bytes of a notification, after the same checks as `send_request`."""
        self._check_outbound(row, params, check_capability)
        return rpc.notification_frame(row.wire, self._payload(params))

    def check_outbound(self, row: Row, params: Any, *, check_capability: bool = True) -> None:
        """Raise what `send_request` / `send_notification` would raise for this row and
        these params, without encoding or sending anything: for a sender that queues
        first and sends later (an agent's session store keeps each update before it
        leaves), so a refused update is refused before it is kept."""
        self._check_outbound(row, params, check_capability)

    def _check_outbound(self, row: Row, params: Any, check_capability: bool) -> None:
        # The checks below depend on the row, the lifecycle, the peer's capabilities and
        # (for PARAMS_GATED methods only) the params. The last row that passed them all
        # passes again while neither the lifecycle nor the capabilities object changed:
        # a stream of `session/update` pays one comparison instead of the walk.
        if not (
            row is self._cleared_row
            and self._lifecycle is self._cleared_lifecycle
            and self.their_capabilities is self._cleared_capabilities
        ):
            self._check_outbound_fully(row, params, check_capability)
            if check_capability and row.wire not in PARAMS_GATED:
                self._cleared_row = row
                self._cleared_lifecycle = self._lifecycle
                self._cleared_capabilities = self.their_capabilities
        # A notice or compaction update needs the client's capability (schema: "Agents MUST
        # only send ..."): checked per update, after the row's checks above.
        if row.wire == _SESSION_UPDATE and check_capability:
            update: object = getattr(params, "update", None)
            kind = type(update)
            path = self._update_gate_of.get(kind, _UNLEARNT)
            if path is _UNLEARNT:
                path = update_capability(self.table.update_gates, params)
                if hasattr(kind, "TAG"):  # one tag per class (not an Unknown* variant)
                    self._update_gate_of[kind] = path
            if path is not None and not is_advertised(self.their_capabilities, path):
                raise CapabilityNotNegotiated(row.wire, path)

    def _check_outbound_fully(self, row: Row, params: Any, check_capability: bool) -> None:
        if self.state is State.CLOSED:
            raise ConnectionClosed("the connection is closed")
        if row.handled_by not in (self.their_role, Side.BOTH):
            raise LocalProtocolError(
                f"{row.wire} is handled by the {row.handled_by.value}, not the peer"
            )
        if row.kind is Kind.REQUEST:
            why = refusal(self.state, row.wire)
            if why is not None:
                raise LocalProtocolError(f"cannot send {row.wire}: {why}")
        elif self.state is not State.READY:
            raise LocalProtocolError(f"cannot send {row.wire}: not initialized")
        if not check_capability:
            return
        if row.gate is not None and not is_advertised(self.their_capabilities, row.gate):
            raise CapabilityNotNegotiated(row.wire, row.gate)
        own = self.table.sender_gates.get(row.wire)
        if own is not None and not is_advertised(self.our_capabilities, own):
            raise CapabilityNotNegotiated(row.wire, own, ours=True)
        if row.wire in PARAMS_GATED:
            for path in required_by_params(row.wire, params):
                if not is_advertised(self.their_capabilities, path):
                    raise CapabilityNotNegotiated(row.wire, path)

    @staticmethod
    def _payload(params: Any) -> Any:
        try:
            return to_json_value(params)
        except EncodeError:
            raise
        except Exception as error:
            raise EncodeError(f"cannot encode {type(params).__name__}: {error}") from None

    def send_response(self, request_id: RequestId, result: Any) -> bytes:
        """Answer a received request with its result; returns the bytes to write.

        A prompt whose session was cancelled before this answer is sent with stop
        reason `cancelled`, whatever the handler returned (prompt-turn.mdx). If the
        result cannot be encoded, `EncodeError` is raised and the request stays
        unanswered (answer it with `send_error`).
        """
        call = self._inbound.get(request_id) if self._lifecycle.answerable else None
        if call is None:
            call = self._peek_inbound(request_id)  # raises, saying why
        if call.cancelled and hasattr(result, "stop_reason"):
            result = attrs.evolve(result, stop_reason="cancelled")
        is_initialize = call.row.wire == _INITIALIZE
        if is_initialize:
            version = getattr(result, "protocol_version", None)
            if version not in self.protocol_versions:
                raise LocalProtocolError(f"protocol version {version} is not one this side speaks")
        frame = rpc.result_frame(request_id, self._payload(result))
        del self._inbound[request_id]
        if is_initialize:
            self.protocol_version = result.protocol_version
            self.our_capabilities = getattr(result, "agent_capabilities", None)
            self._fire(Trigger.INITIALIZE_SUCCEEDED)
            self._release()  # after the answer: its replies and events follow it
        return frame

    def send_error(self, request_id: RequestId, error: RequestError) -> bytes:
        """Answer a received request with an error; returns the bytes to write.

        A cancelled prompt is answered with stop reason `cancelled` instead of the error.
        Error `data` that cannot be encoded is left out rather than losing the answer.
        """
        call = self._peek_inbound(request_id)
        if call.cancelled and call.row.wire == _PROMPT:
            assert call.row.result_type is not None
            return self.send_response(
                request_id, decode({"stopReason": "cancelled"}, call.row.result_type)
            )
        try:
            frame = rpc.error_frame(request_id, error.to_wire())
        except EncodeError:  # the data cannot be encoded: answer without it
            frame = rpc.error_frame(request_id, {"code": error.code, "message": error.message})
        del self._inbound[request_id]
        if call.row.wire == _INITIALIZE:
            self._fire(Trigger.INITIALIZE_FAILED)
            self._release()
        return frame

    def answer(
        self,
        request_id: RequestId,
        result: Any = None,
        *,
        error: BaseException | None = None,
        cancelled: bool = False,
    ) -> bytes:
        """The one answer to a received request, from how its handler ended.

        A result is sent as the result; a `RequestError` as itself; a cancelled handler
        as -32800; any other exception as -32603, without its text (it is logged here).
        A result the answer cannot carry (it does not encode, or a wrong protocol
        version) becomes -32603 too, so the request is still answered exactly once.
        Returns b"" when there is nothing left to send (closed locally, or answered).
        """
        failure: RequestError | None = None
        if cancelled:
            failure = RequestError.request_cancelled()
        elif isinstance(error, RequestError):
            failure = error
        elif error is not None:
            log.error("handler for request %r failed", request_id, exc_info=error)
            failure = RequestError.internal_error()
        try:
            if failure is None:
                return self.send_response(request_id, result)
            return self.send_error(request_id, failure)
        except ConnectionClosed:
            return b""
        except ACPError as problem:
            if request_id not in self._inbound:
                return b""
            log.error("could not answer request %r: %s", request_id, problem)
            return self.send_error(request_id, RequestError.internal_error())

    def _peek_inbound(self, request_id: RequestId) -> _InFlight:
        # After end of input the peer may still read: requests received before it can
        # still be answered (half-closed). After a local close, nothing can.
        if not self._lifecycle.answerable:
            raise ConnectionClosed("the connection is closed")
        call = self._inbound.get(request_id)
        if call is None:
            if self.state is State.CLOSED:
                raise ConnectionClosed("the connection is closed")
            raise LocalProtocolError(f"no received request {request_id!r} awaits an answer")
        return call

    def negotiate_version(self, requested: int) -> int:
        """The version an agent answers `initialize` with (initialization.mdx)."""
        return requested if requested in self.protocol_versions else max(self.protocol_versions)

    # ------------------------------------------------------------------ ending calls

    def cancel(self, request_id: RequestId) -> bytes:
        """End one of our calls locally and return the `$/cancel_request` to send.

        A response arriving later for this id is dropped. Returns b"" when the call had
        already ended. Ending `initialize` this way sends the lifecycle back to NEW.
        """
        return self._end_locally(request_id)

    def time_out(
        self, request_id: RequestId, *, after: float | None = None
    ) -> tuple[RequestTimeout, bytes]:
        """End one of our calls as timed out; returns the error and a `$/cancel_request`.
        Timing out `initialize` sends the lifecycle back to NEW, as `cancel` does.

        The error names the method (and `after`, the seconds waited, when given); for
        `initialize` it also says what the peer printed that was not JSON-RPC, if
        anything (`RequestTimeout.stdout_tail`): often why it never answered."""
        row = self._pending.get(request_id)
        method = row.wire if row is not None else None
        message = f"{method} (request {request_id!r})" if method else f"request {request_id!r}"
        message += " got no answer" + (f" within {after:g} s" if after is not None else "")
        stray = ""
        if method == _INITIALIZE:
            stray = self._stray.tail
            message += self._stray.unanswered(self.their_role.value)
        error = RequestTimeout(message, method=method, stdout_tail=stray)
        return error, self._end_locally(request_id)

    def _end_locally(self, request_id: RequestId) -> bytes:
        row = self._pending.pop(request_id, None)
        if row is None:
            return b""
        self._call_ended_badly(row)
        if self.state is State.CLOSED:
            return b""
        return rpc.notification_frame(_CANCEL_REQUEST, {"requestId": request_id})

    def close(self) -> None:
        """Close locally: every pending call fails with `ConnectionClosed`, and requests
        received but not yet answered can no longer be answered."""
        self._close(Trigger.CLOSE, ConnectionClosed("the connection was closed"))
        self._inbound.clear()
        self._held = None  # nothing held will be processed now
        self._diverted = True

    def _close(self, trigger: Trigger, error: ConnectionClosed) -> None:
        """End of input (half-close) or a local close: no more calls either way. Requests
        already received stay answerable until `close()` (the peer may still read)."""
        was_open = self.state is not State.CLOSED
        self._fire(trigger)
        if not was_open:
            return
        for rid, row in self._pending.items():
            self._events.append(CallFailed(request_id=rid, row=row, error=error))
        self._pending.clear()
        if trigger is Trigger.END_OF_INPUT:
            # Nobody is left to stream a turn to: running prompts end as cancelled (a
            # half-closed peer may still read their answers); other requests received
            # before the end are answered as usual.
            self._cancel_prompts(None)
        reason = error if trigger is Trigger.NOT_AN_AGENT else None
        self._events.append(ConnectionClosedEvent(reason=reason))


_MESSAGES: Final[dict[int, str]] = {
    ErrorCode.PARSE_ERROR: "Parse error",
    ErrorCode.INVALID_REQUEST: "Invalid request",
    ErrorCode.METHOD_NOT_FOUND: "Method not found",
    ErrorCode.INVALID_PARAMS: "Invalid params",
    ErrorCode.INTERNAL_ERROR: "Internal error",
}
