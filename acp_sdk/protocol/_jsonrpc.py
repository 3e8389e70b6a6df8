"""JSON-RPC 2.0 envelopes: classify one frame, and build the frames we send.

Classification rules (first match wins):
1. Not JSON -> `Invalid(-32700)`, answered with `id: null`.
2. Not an object (scalar, array: ACP has no batches) -> `Invalid(-32600)`, `id: null`.
3. No `"method"` but `"result"` or `"error"` -> response-shaped: a `Response` when the id
   is valid and exactly one of the two is present (an error object with an integer
   `code` and string `message`), otherwise `BadResponse`. Never answered. A
   `BadResponse` keeps the id whenever it is valid, so the connection can fail the call
   it answers (a bad `"jsonrpc"`, both `result` and `error`, a malformed error object).
4. `"jsonrpc"` is not exactly `"2.0"`, `"method"` is not a string, `"params"` is neither
   an object nor null/absent, or the id is invalid -> `Invalid(-32600)`, echoing the id
   only when it is valid.
5. Otherwise a `Request` (has an id) or a `Notification`.

Valid ids are strings and integers within int64 (never booleans or floats); they keep
their exact type, so `1` and `"1"` are different requests.
"""

# JSON values arrive as Any and are narrowed by exact type checks (`type(v) is dict`),
# which pyright types as dict[Unknown, Unknown]; a cast per value would cost a call on the
# per-frame path, and every value is checked before use.
# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportUnknownMemberType=false

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs
import orjson

from acp_sdk.protocol._errors import EncodeError, ErrorCode

RequestId = int | str

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_ABSENT: Final[Any] = object()
NOT_AN_OBJECT: Final = "not a JSON-RPC object"


def is_valid_id(value: object) -> bool:
    if type(value) is str:
        return True
    return isinstance(value, int) and type(value) is int and _INT64_MIN <= value <= _INT64_MAX


@attrs.frozen(kw_only=True, order=False)
class Request:
    id: RequestId
    method: str
    params: Any  # a dict, or None when absent/null


@attrs.frozen(kw_only=True, order=False)
class Notification:
    method: str
    params: Any


@attrs.frozen(kw_only=True, order=False)
class Response:
    id: RequestId | None
    result: Any = None
    error: Mapping[str, Any] | None = None  # set for an error response


@attrs.frozen(kw_only=True, order=False)
class BadResponse:
    """A response-shaped frame that breaks the rules; dropped, never answered."""

    reason: str
    id: RequestId | None


@attrs.frozen(kw_only=True, order=False)
class Invalid:
    """A frame to answer with a JSON-RPC error and `id` (None -> `null`)."""

    code: int
    reason: str
    id: RequestId | None


Inbound = Request | Notification | Response | BadResponse | Invalid

# `classify` runs once per frame: it builds its three common results slot by slot (what
# the attrs `__init__` does, without the keyword call), e.g. `_notification(m, p)`.
_new: Final = object.__new__


def slot_setter(cls: type, name: str) -> Any:
    """The slot descriptor's `__set__` of a frozen slotted class: hot paths build their
    objects slot by slot with it, skipping the keyword `__init__`."""
    return cls.__dict__[name].__set__


_SET_REQUEST_ID: Final = slot_setter(Request, "id")
_SET_REQUEST_METHOD: Final = slot_setter(Request, "method")
_SET_REQUEST_PARAMS: Final = slot_setter(Request, "params")
_SET_NOTIFICATION_METHOD: Final = slot_setter(Notification, "method")
_SET_NOTIFICATION_PARAMS: Final = slot_setter(Notification, "params")


def _notification(method: str, params: Any) -> Notification:
    message: Notification = _new(Notification)
    _SET_NOTIFICATION_METHOD(message, method)
    _SET_NOTIFICATION_PARAMS(message, params)
    return message


def _request(request_id: RequestId, method: str, params: Any) -> Request:
    message: Request = _new(Request)
    _SET_REQUEST_ID(message, request_id)
    _SET_REQUEST_METHOD(message, method)
    _SET_REQUEST_PARAMS(message, params)
    return message


def classify(frame: bytes) -> Inbound:
    try:
        message = orjson.loads(frame)
    except orjson.JSONDecodeError:
        return Invalid(code=ErrorCode.PARSE_ERROR, reason="not valid JSON", id=None)
    if type(message) is not dict:
        return Invalid(code=ErrorCode.INVALID_REQUEST, reason=NOT_AN_OBJECT, id=None)
    method = message.get("method", _ABSENT)
    if type(method) is str and "id" not in message and message.get("jsonrpc") == "2.0":
        # The common case first: a well-formed notification (rules 3-5 all pass).
        params = message.get("params")
        if params is None or type(params) is dict:
            return _notification(method, params)
    raw_id = message.get("id", _ABSENT)
    has_id = raw_id is not _ABSENT
    valid_id = has_id and is_valid_id(raw_id)
    if "method" not in message and ("result" in message or "error" in message):
        return _response(message, raw_id if valid_id else None, has_id, valid_id)
    echo = raw_id if valid_id else None
    if message.get("jsonrpc") != "2.0":
        return Invalid(code=ErrorCode.INVALID_REQUEST, reason='"jsonrpc" must be "2.0"', id=echo)
    if type(method) is not str:
        return Invalid(code=ErrorCode.INVALID_REQUEST, reason='"method" must be a string', id=echo)
    params = message.get("params")
    if params is not None and type(params) is not dict:
        return Invalid(code=ErrorCode.INVALID_REQUEST, reason='"params" must be an object', id=echo)
    if not has_id:
        return _notification(method, params)
    if not valid_id:
        return Invalid(code=ErrorCode.INVALID_REQUEST, reason="invalid request id", id=None)
    return _request(raw_id, method, params)


def _response(message: dict[str, Any], rid: RequestId | None, has_id: bool, valid: bool) -> Inbound:
    if message.get("jsonrpc") != "2.0":
        return BadResponse(reason='"jsonrpc" must be "2.0"', id=rid)
    if not has_id:
        return BadResponse(reason="response without an id", id=None)
    if "result" in message and "error" in message:
        return BadResponse(reason="response with both result and error", id=rid)
    if "result" in message:
        if not valid:
            return BadResponse(reason="invalid response id", id=None)
        return Response(id=rid, result=message["result"])
    error = message["error"]
    problem = _error_object_problem(error)
    if problem is not None:
        return BadResponse(reason=problem, id=rid)
    if message["id"] is not None and not valid:
        return BadResponse(reason="invalid response id", id=None)
    return Response(id=rid, error=error)


def _error_object_problem(error: Any) -> str | None:
    """What makes `error` not a JSON-RPC error object (None: it is one). Names the field,
    never its value."""
    if type(error) is not dict:
        return "malformed error object: not an object"
    if type(error.get("code")) is not int:
        return "malformed error object: code is not an integer"
    if type(error.get("message")) is not str:
        return "malformed error object: message is not a string"
    return None


# ----------------------------------------------------------------------------- outbound


def request_frame(request_id: RequestId, method: str, params: Any) -> bytes:
    return _frame({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def notification_frame(method: str, params: Any) -> bytes:
    return _frame({"jsonrpc": "2.0", "method": method, "params": params})


def result_frame(request_id: RequestId, result: Any) -> bytes:
    return _frame({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_frame(request_id: RequestId | None, error: Mapping[str, Any]) -> bytes:
    return _frame({"jsonrpc": "2.0", "id": request_id, "error": error})


def _frame(message: dict[str, Any]) -> bytes:
    # orjson escapes control characters inside strings, so a frame never holds a raw
    # newline except the delimiter appended here.
    try:
        return orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError as error:
        raise EncodeError(f"cannot encode the message: {error}") from None
