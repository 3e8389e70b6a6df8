"""What `Connection.next_event()` returns: one value per thing the peer did.

Auto-replies the protocol demands (parse errors, unknown methods, refused capabilities,
bad params) are queued by the connection itself (`Connection.data_to_send()`); the events
below are what a facade acts on, plus `FrameRejected` to log what was refused.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from acp_sdk.protocol._errors import ACPError, ConnectionClosed, RequestError
from acp_sdk.protocol._jsonrpc import RequestId, slot_setter
from acp_sdk.protocol._rows import Row

__all__ = [
    "NEED_DATA",
    "CallFailed",
    "CancelRequested",
    "ConnectionClosedEvent",
    "ErrorReceived",
    "Event",
    "FrameRejected",
    "NeedData",
    "NotificationReceived",
    "PromptCancelRequested",
    "RequestReceived",
    "ResponseReceived",
]


@attrs.frozen(kw_only=True, order=False)
class RequestReceived:
    """A request that passed every check: answer it with `send_response`/`send_error`."""

    request_id: RequestId
    row: Row
    params: Any


@attrs.frozen(kw_only=True, order=False)
class NotificationReceived:
    """The peer sent a notification (no answer is owed): its row and decoded params."""

    row: Row
    params: Any


@attrs.frozen(kw_only=True, order=False)
class ResponseReceived:
    """The result of one of our calls, decoded as the row's result type."""

    request_id: RequestId
    row: Row
    result: Any


@attrs.frozen(kw_only=True, order=False)
class ErrorReceived:
    """The peer answered one of our calls with a JSON-RPC error."""

    request_id: RequestId
    row: Row
    error: RequestError


@attrs.frozen(kw_only=True, order=False)
class CallFailed:
    """One of our calls ended without a usable answer: a malformed response carrying its
    id or an undecodable result (`RemoteProtocolError`), an unsupported protocol version,
    or the connection closing (`ConnectionClosed`)."""

    request_id: RequestId
    row: Row
    error: ACPError


@attrs.frozen(kw_only=True, order=False)
class CancelRequested:
    """The peer sent `$/cancel_request` for a request we are still handling: stop the
    handler; the request still needs exactly one answer (a result or -32800)."""

    request_id: RequestId


@attrs.frozen(kw_only=True, order=False)
class PromptCancelRequested:
    """`session/cancel` arrived while this prompt was running: stop it. Whatever the
    handler answers now, the connection sends stop reason `cancelled`."""

    request_id: RequestId
    session_id: str


@attrs.frozen(kw_only=True, order=False)
class FrameRejected:
    """A frame was refused (and answered, unless `replied` is False). For logging: a
    malformed response for a pending call also fails that call (`CallFailed`)."""

    reason: str
    code: int | None
    request_id: RequestId | None
    replied: bool


@attrs.frozen(kw_only=True, order=False)
class ConnectionClosedEvent:
    """The connection closed (end of input, `close()`, or it gave up on a peer that is
    not an ACP agent): no more events will follow. Requests received before end of
    input can still be answered until `close()`.

    Attributes:
        reason: Why, when the connection closed itself (`NotAnAgent`); else None.
    """

    reason: ConnectionClosed | None = None


class NeedData:
    """Type of `NEED_DATA`: `next_event()` has nothing until more bytes arrive."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA: Final = NeedData()
"""`next_event()` has nothing more until `receive_data` is called again."""

Event = (
    RequestReceived
    | NotificationReceived
    | ResponseReceived
    | ErrorReceived
    | CallFailed
    | CancelRequested
    | PromptCancelRequested
    | FrameRejected
    | ConnectionClosedEvent
)


# The events of every notification and response are built slot by slot: what their attrs
# `__init__` does, without a keyword call per frame.
_new: Final = object.__new__
_SET_NOTE_ROW: Final = slot_setter(NotificationReceived, "row")
_SET_NOTE_PARAMS: Final = slot_setter(NotificationReceived, "params")
_SET_RESPONSE_ID: Final = slot_setter(ResponseReceived, "request_id")
_SET_RESPONSE_ROW: Final = slot_setter(ResponseReceived, "row")
_SET_RESPONSE_RESULT: Final = slot_setter(ResponseReceived, "result")
_SET_REQUEST_ID: Final = slot_setter(RequestReceived, "request_id")
_SET_REQUEST_ROW: Final = slot_setter(RequestReceived, "row")
_SET_REQUEST_PARAMS: Final = slot_setter(RequestReceived, "params")


def notification_received(row: Row, params: Any) -> NotificationReceived:
    event: NotificationReceived = _new(NotificationReceived)
    _SET_NOTE_ROW(event, row)
    _SET_NOTE_PARAMS(event, params)
    return event


def response_received(request_id: RequestId, row: Row, result: Any) -> ResponseReceived:
    event: ResponseReceived = _new(ResponseReceived)
    _SET_RESPONSE_ID(event, request_id)
    _SET_RESPONSE_ROW(event, row)
    _SET_RESPONSE_RESULT(event, result)
    return event


def request_received(request_id: RequestId, row: Row, params: Any) -> RequestReceived:
    event: RequestReceived = _new(RequestReceived)
    _SET_REQUEST_ID(event, request_id)
    _SET_REQUEST_ROW(event, row)
    _SET_REQUEST_PARAMS(event, params)
    return event
