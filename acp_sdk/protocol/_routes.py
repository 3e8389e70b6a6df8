"""Which stream a message of a Streamable HTTP connection belongs to (sans-IO).

The routing metadata HTTP needs and WebSocket does not: a message carrying
`params.sessionId` belongs to that session's event stream, an answer goes where its
request came from, everything else to the connection's stream. The rules follow the
TypeScript SDK 2.4.0 (`experimental/server`), which the RFD leaves open in places:
`session/load` is answered on the connection stream (the client has no session stream
yet) unless the client already has that session's stream open: then the answer follows
the replayed history on it, so no client sees the answer before the replay. A POST
carrying a `sessionId` without the `Acp-Session-Id` header is refused with 400.
Pure functions and one small table per connection: no I/O.
"""

from __future__ import annotations

from typing import Any, Final, cast

SESSION_SCOPED: Final = frozenset(
    {
        "session/cancel",
        "session/close",
        "session/delete",
        "session/fork",
        "session/load",
        "session/prompt",
        "session/resume",
        "session/set_config_option",
        "session/set_mode",
        "session/set_model",
    }
)
"""Methods whose POST must carry `Acp-Session-Id` (as the TypeScript SDK requires)."""

CONNECTION: Final = ""
"""The route of the connection-scoped stream (a session route is its session id)."""


def as_message(value: object) -> dict[str, Any] | None:
    """A parsed JSON value as a message object (None when it is not an object)."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _field(holder: object, name: str) -> str | None:
    """`holder[name]` when `holder` is an object and that field a string."""
    found = as_message(holder)
    value = found.get(name) if found is not None else None
    return value if isinstance(value, str) else None


def session_of(message: dict[str, Any]) -> str | None:
    """The `params.sessionId` of a request or notification, when it is a string."""
    return _field(message.get("params"), "sessionId")


def result_session(message: dict[str, Any]) -> str | None:
    """The `result.sessionId` of a response (session/new and friends), when a string."""
    return _field(message.get("result"), "sessionId")


def id_key(message: dict[str, Any]) -> str | None:
    """A request id as a dictionary key that keeps 1 and "1" apart."""
    if "id" not in message:
        return None
    value = message["id"]
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return "s:" + value
    if isinstance(value, int):
        return "n:" + str(value)
    return None


def is_response(message: dict[str, Any]) -> bool:
    return "method" not in message and ("result" in message or "error" in message)


class Refused(Exception):
    """An HTTP request the routing rules refuse: `status` and a short text."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


class Routes:
    """One HTTP connection's routing table (the server side)."""

    def __init__(self) -> None:
        self._answers: dict[str, str] = {}  # our peer's request id -> route of its answer
        self._client_answers: dict[str, str] = {}  # the agent's request id -> its route

    def inbound(
        self,
        message: dict[str, Any],
        header_session: str | None,
        session_stream_open: bool = False,
    ) -> None:
        """Check a message the client POSTed and remember where its answer goes.
        `session_stream_open`: the client has the `Acp-Session-Id` session's event stream
        open (then a `session/load` is answered there, after its replay).
        Raises `Refused` (400) for a missing or mismatched `Acp-Session-Id`."""
        key = id_key(message)
        if is_response(message):
            route = self._client_answers.get(key) if key is not None else None
            if route:  # an answer to a session's request comes with that session's header
                if header_session is None:
                    raise Refused(400, "Missing Acp-Session-Id")
                if header_session != route:
                    raise Refused(400, "Mismatched Acp-Session-Id")
            if key is not None:
                self._client_answers.pop(key, None)
            return
        method = message.get("method")
        session = session_of(message)
        if (method in SESSION_SCOPED or session is not None) and header_session is None:
            raise Refused(400, "Missing Acp-Session-Id")
        if header_session is not None and session is not None and header_session != session:
            raise Refused(400, "Mismatched Acp-Session-Id")
        route = header_session or session or CONNECTION
        if key is not None and "method" in message:
            on_connection = method == "session/load" and not session_stream_open
            self._answers[key] = CONNECTION if on_connection else route

    def outbound(self, message: dict[str, Any]) -> str:
        """The route of a message the agent sent: `CONNECTION` or a session id."""
        key = id_key(message)
        if is_response(message):
            return self._answers.pop(key, CONNECTION) if key is not None else CONNECTION
        route = session_of(message) or CONNECTION
        if key is not None:
            self._client_answers[key] = route
        return route
