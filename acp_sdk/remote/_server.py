"""The server: a plain ASGI application serving ACP on one path over WebSocket and
Streamable HTTP (no web framework; run it under uvicorn or any ASGI server)."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, Final, overload

import orjson

from acp_sdk._driver.process import argv_of
from acp_sdk.protocol import _routes
from acp_sdk.protocol._framing import DEFAULT_MAX_FRAME_SIZE
from acp_sdk.remote._backends import (
    AgentBackend,
    Backend,
    Gate,
    ProcessBackend,
    StartFailed,
    warm_up,
)

if TYPE_CHECKING:
    from acp_sdk.agent._runtime import Agent
    from acp_sdk.agent._store import SessionStore

log = logging.getLogger("acp_sdk.remote")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

KEEP_ALIVE: Final = 15.0
"""Seconds between SSE comments on a quiet event stream."""
STREAM_BUFFER: Final = 16 * 1024 * 1024
"""Bytes of a connection's output waiting for its event streams before the agent waits."""
INITIALIZE_TIMEOUT: Final = 60.0
CANNOT_START: Final = "Bad Gateway: the agent could not be started (the server's log says why)"
"""What a client is told when its connection's agent cannot be started (502)."""
CLOSE_REASON: Final = 123
"""Bytes a WebSocket close reason may hold (RFC 6455)."""


class _Mailbox:
    """One event stream's messages, kept until its receiver (one at a time) takes them."""

    def __init__(self, owner: _Connection, route: str) -> None:
        self.owner = owner
        self.route = route
        self.messages: list[bytes] = []
        self.arrived = Gate()  # opened by a message, the end, a timer or a disconnect
        self.receiver = False
        self.logged_unread = False  # said once that messages wait with nobody reading

    def push(self, message: bytes) -> None:
        self.messages.append(message)
        self.owner.buffered += len(message)
        self.arrived.open()
        if not self.receiver and not self.logged_unread:
            # A client that never opens this stream waits forever for what is held here.
            self.logged_unread = True
            stream = f"session {self.route}" if self.route else "connection"
            header = f" with Acp-Session-Id: {self.route}" if self.route else ""
            log.debug(
                "connection %s: holding messages for the %s stream, which no client has "
                "open (they are sent once a GET%s opens it)",
                self.owner.id,
                stream,
                header,
            )

    def take(self) -> list[bytes]:
        taken, self.messages = self.messages, []
        self.logged_unread = False
        self.owner.buffered -= sum(len(m) for m in taken)
        if self.owner.buffered <= STREAM_BUFFER:
            self.owner.make_room()
        return taken


class _Connection:
    """One remote connection. What only HTTP needs (routes, mailboxes) is made on first
    use: a server holding thousands of idle WebSockets pays for little besides its agent."""

    __slots__ = (
        "_room",
        "_routes",
        "backend",
        "buffered",
        "closed",
        "id",
        "initial",
        "kind",
        "last_active",
        "server",
        "streams",
        "tasks",
    )

    def __init__(self, server: _Server, backend: Backend, kind: str) -> None:
        self.id = str(uuid.uuid4())
        self.server = server
        self.backend = backend
        self.kind = kind
        self._routes: _routes.Routes | None = None
        self.streams: dict[str, _Mailbox] = {}
        self.buffered = 0
        self._room: Gate | None = None
        self.last_active = time.monotonic()
        self.closed = False
        self.initial: tuple[str, asyncio.Future[bytes]] | None = None
        self.tasks: list[asyncio.Task[Any]] = []

    @property
    def routes(self) -> _routes.Routes:
        if self._routes is None:
            self._routes = _routes.Routes()
        return self._routes

    def make_room(self) -> None:
        if self._room is not None:
            self._room.open()

    def touch(self) -> None:
        self.last_active = time.monotonic()

    def mailbox(self, route: str) -> _Mailbox:
        box = self.streams.get(route)
        if box is None:
            box = self.streams[route] = _Mailbox(self, route)
        return box

    def attached(self) -> bool:
        return any(box.receiver for box in self.streams.values())

    async def route(self, message: bytes) -> None:
        """HTTP: an agent message to its event stream (waiting while the streams lag).
        An in-process agent's writer calls this itself (`Backend.deliver_to`). Once the
        connection ended, what the agent still sends until it sees its input end is
        dropped: nobody can read it any more, and holding it would grow without a bound."""
        if self.closed:
            return
        self.touch()
        try:
            decoded = _routes.as_message(orjson.loads(message))
        except orjson.JSONDecodeError:
            decoded = None
        if decoded is None:
            self.mailbox(_routes.CONNECTION).push(message)
            return
        if self.initial is not None and _routes.id_key(decoded) == self.initial[0]:
            if not self.initial[1].done():
                self.initial[1].set_result(message)
            self.initial = None
            return
        self.mailbox(self.routes.outbound(decoded)).push(message)
        while self.buffered > STREAM_BUFFER and not self.closed:
            if self._room is None:
                self._room = Gate()
            await self._room.wait()

    async def route_output(self) -> None:
        """HTTP: route what `backend.recv()` gives until the agent ends (for an agent that
        delivers its messages itself, only the end comes here)."""
        while (message := await self.backend.recv()) is not None:
            await self.route(message)
        if not self.closed:
            _, why = await self.backend.ended()
            await self.close(why)

    def idle_for(self, now: float) -> float:
        """Seconds without traffic; 0 while an HTTP event stream is open or `initialize`
        waits for the agent (a slow agent start is bounded by INITIALIZE_TIMEOUT, not by
        the client's idleness)."""
        if self.initial is not None or (self.kind == "http" and self.attached()):
            return 0.0
        return now - self.last_active

    async def close(self, why: str) -> None:
        """End the connection and wait until its agent stopped. The stop is the server's
        (`_Server.stop_soon`): it counts against max_connections and shutdown awaits it,
        also when this wait is cancelled."""
        if self.end(why):
            await asyncio.shield(self.server.stop_soon(self, asyncio.current_task()))

    def end(self, why: str) -> bool:
        """Forget the connection at once (its id answers 404 from now on) and wake its
        streams; False if it had already ended. `stop()` then stops the agent."""
        if self.closed:
            return False
        self.closed = True
        self.make_room()
        log.info("connection %s closed: %s", self.id, why)
        self.server.connections.pop(self.id, None)
        for box in self.streams.values():
            box.arrived.open()
        if self.initial is not None and not self.initial[1].done():
            self.initial[1].set_exception(ConnectionResetError(why))
        return True

    async def stop(self, spare: asyncio.Task[Any] | None = None) -> None:
        """Stop the agent (it may take the backend's whole close sequence) and the
        connection's tasks, but `spare` (the task that asked)."""
        await self.backend.aclose()
        for task in self.tasks:
            if task is not spare:
                task.cancel()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


class _Server:
    def __init__(
        self,
        new_backend: Callable[[], Backend],
        *,
        token: str | None,
        path: str,
        allowed_origins: Sequence[str],
        max_connections: int,
        idle_timeout: float,
        max_message_size: int,
        in_process: bool = False,
    ) -> None:
        self.new_backend = new_backend
        self.in_process = in_process  # the agent runs here: warm the codec at startup
        self.token = token
        self.path = path
        self.allowed_origins = frozenset(o.rstrip("/").lower() for o in allowed_origins)
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        self.max_message_size = max_message_size
        self.connections: dict[str, _Connection] = {}
        self.stopping: set[asyncio.Task[None]] = set()  # see stop_soon
        self.sweeper: asyncio.Task[None] | None = None  # see _sweep

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if self.in_process:
                    await warm_up(self.max_message_size)
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def aclose(self) -> None:
        """Close every connection (their agents stop)."""
        if self.sweeper is not None:
            self.sweeper.cancel()
        await asyncio.gather(
            *(c.close("the server is shutting down") for c in list(self.connections.values())),
            *list(self.stopping),  # agents of ended connections, still stopping
        )

    def _authorized(self, scope: Scope) -> bool:
        if self.token is None:
            return True
        given = _header(scope, b"authorization") or ""
        return hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode())

    def _origin_allowed(self, scope: Scope) -> bool:
        origin = _header(scope, b"origin")
        if origin is None:
            return True  # not a browser
        origin = origin.rstrip("/").lower()
        if origin in self.allowed_origins or "*" in self.allowed_origins:
            return True
        host = (_header(scope, b"host") or "").lower()
        return origin in (f"http://{host}", f"https://{host}")

    # ------------------------------------------------------------------ HTTP

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"].rstrip("/") != self.path.rstrip("/"):
            await _text(send, 404, "Not Found")
            return
        if not self._authorized(scope):
            await _text(send, 401, "Unauthorized", [(b"www-authenticate", b"Bearer")])
            return
        if not self._origin_allowed(scope):
            await _text(send, 403, "Forbidden origin")
            return
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send)
        elif method == "GET":
            if (_header(scope, b"upgrade") or "").lower() == "websocket":
                await _text(send, 426, "WebSocket upgrade is not supported by this server")
            else:
                await self._get(scope, receive, send)
        elif method == "DELETE":
            await self._delete(scope, send)
        else:
            await _text(send, 405, "Method Not Allowed", [(b"allow", b"GET, POST, DELETE")])

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        content_type = (_header(scope, b"content-type") or "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            await _text(send, 415, "Unsupported Media Type")
            return
        body = await _read_body(receive, self.max_message_size)
        if body is None:
            await _text(send, 413, f"Message over {self.max_message_size} bytes")
            return
        try:
            parsed: object = orjson.loads(body)
        except orjson.JSONDecodeError:
            await _text(send, 400, "Invalid JSON")
            return
        if isinstance(parsed, list):
            error = {"code": -32600, "message": "JSON-RPC batches are not supported"}
            await _json(send, 501, orjson.dumps({"jsonrpc": "2.0", "id": None, "error": error}))
            return
        decoded = _routes.as_message(parsed)
        if decoded is None:
            await _text(send, 400, "Invalid JSON-RPC message")
            return
        if decoded.get("method") == "initialize" and "id" in decoded:
            if _header(scope, b"acp-connection-id"):
                await _text(send, 400, "Initialize not allowed on existing connection")
            else:
                await self._initialize(body, decoded, send)
            return
        connection = await self._http_connection(scope, send)
        if connection is None:
            return
        header_session = _header(scope, b"acp-session-id")
        box = connection.streams.get(header_session) if header_session else None
        try:
            connection.routes.inbound(
                decoded, header_session, session_stream_open=box is not None and box.receiver
            )
        except _routes.Refused as refused:
            await _text(send, refused.status, refused.text)
            return
        connection.touch()
        try:
            await connection.backend.send(body)
        except ConnectionError:
            await _text(send, 404, "Unknown Acp-Connection-Id")
            return
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def _http_connection(self, scope: Scope, send: Send) -> _Connection | None:
        """The HTTP connection `Acp-Connection-Id` names; None after answering 400/404."""
        connection_id = _header(scope, b"acp-connection-id")
        if not connection_id:
            await _text(send, 400, "Missing Acp-Connection-Id")
            return None
        connection = self.connections.get(connection_id)
        if connection is None or connection.kind != "http":
            await _text(send, 404, "Unknown Acp-Connection-Id")
            return None
        return connection

    def _at_capacity(self) -> bool:
        # Agents of connections ended by DELETE still run until they have stopped: they
        # count, or initialize + DELETE in a loop would start agents without a bound.
        return len(self.connections) + len(self.stopping) >= self.max_connections

    async def _initialize(self, body: bytes, decoded: dict[str, Any], send: Send) -> None:
        if self._at_capacity():
            await _text(send, 503, "Too many connections")
            return
        try:
            connection = await self._open(kind="http")
        except StartFailed:
            await _text(send, 502, CANNOT_START)
            return
        key = _routes.id_key(decoded)
        assert key is not None
        answered: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        connection.initial = (key, answered)
        connection.tasks.append(asyncio.get_running_loop().create_task(connection.route_output()))
        # A failed send means the agent is gone: its output ends too, and `answered`
        # then fails saying how it ended (its exit code).
        with contextlib.suppress(ConnectionError):
            await connection.backend.send(body)
        try:
            answer = await asyncio.wait_for(answered, INITIALIZE_TIMEOUT)
        except asyncio.TimeoutError:
            why = f"the agent did not answer initialize within {INITIALIZE_TIMEOUT:g} s"
            await connection.close(why)
            await _text(send, 504, f"Gateway Timeout: {why}")
            return
        except ConnectionError as error:
            await connection.close(f"initialize failed: {error}")
            await _text(send, 502, f"Bad Gateway: initialize got no answer: {error}")
            return
        await _json(send, 200, answer, [(b"acp-connection-id", connection.id.encode())])

    async def _open(self, kind: str, send: Send | None = None) -> _Connection:
        """A new connection with its agent started; `StartFailed` (logged, one line) when
        the agent cannot be started, the connection then forgotten."""
        connection = _Connection(self, self.new_backend(), kind)
        self.connections[connection.id] = connection
        if send is not None:
            connection.backend.deliver_to(_websocket_sender(connection, send))
        elif kind == "http":
            connection.backend.deliver_to(connection.route)
        shown = "WebSocket" if kind == "ws" else "HTTP"
        try:
            await connection.backend.start()
        except StartFailed as failed:
            self.connections.pop(connection.id, None)
            await connection.backend.aclose()
            log.warning("connection refused (%s): cannot start the agent: %s", shown, failed)
            raise
        # After the start, before any await: the agent's first stderr line comes after.
        log.info("connection %s opened (%s)", connection.id, shown)
        if self.sweeper is None or self.sweeper.done():
            self.sweeper = asyncio.get_running_loop().create_task(self._sweep())
        return connection

    async def _sweep(self) -> None:
        """Close idle connections: one task for the server (a task per connection cost
        about 2.5 KB each), running while any connection is open."""
        while self.connections:
            await asyncio.sleep(min(self.idle_timeout / 4, 5.0))
            now = time.monotonic()
            for connection in list(self.connections.values()):
                if connection.idle_for(now) > self.idle_timeout:
                    self._stop_soon(connection, f"idle for {self.idle_timeout} s")

    def _stop_soon(self, connection: _Connection, why: str) -> None:
        """End the connection now and stop its agent in the background."""
        if connection.end(why):
            self.stop_soon(connection, None)

    def stop_soon(
        self, connection: _Connection, spare: asyncio.Task[Any] | None
    ) -> asyncio.Task[None]:
        """Stop an ended connection's agent in a task of the server's: shutdown awaits
        it, and it counts against max_connections until done (else a client closing
        and reconnecting in a loop starts agents past the cap)."""
        task = asyncio.get_running_loop().create_task(connection.stop(spare))
        self.stopping.add(task)
        task.add_done_callback(self.stopping.discard)
        return task

    async def _get(self, scope: Scope, receive: Receive, send: Send) -> None:
        accept = (_header(scope, b"accept") or "").lower()
        if "text/event-stream" not in accept:
            await _text(send, 406, "Not Acceptable")
            return
        connection = await self._http_connection(scope, send)
        if connection is None:
            return
        route = _header(scope, b"acp-session-id") or _routes.CONNECTION
        box = connection.mailbox(route)
        if box.receiver:
            await _text(send, 409, "Outbound stream already has an active receiver")
            return
        box.receiver = True
        try:
            await self._stream(connection, box, receive, send)
        finally:
            box.receiver = False
            connection.touch()
            if route != _routes.CONNECTION and not box.messages:
                connection.streams.pop(route, None)  # kept only while messages wait

    async def _stream(
        self, connection: _Connection, box: _Mailbox, receive: Receive, send: Send
    ) -> None:
        headers = [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        loop = asyncio.get_running_loop()
        gone = loop.create_task(_disconnected(receive))
        gone.add_done_callback(lambda _: box.arrived.open())
        try:
            while not gone.done():
                if box.messages:
                    chunk = b"".join(b"data: " + m + b"\n\n" for m in box.take())
                elif connection.closed:
                    break
                else:
                    # One future per wait, opened by a message, the end, the client going
                    # away or the keep-alive timer (no task or asyncio.wait per message).
                    timer = loop.call_later(KEEP_ALIVE, box.arrived.open)
                    await box.arrived.wait()
                    timer.cancel()
                    if box.messages or gone.done() or connection.closed:
                        continue
                    chunk = b": keep-alive\n\n"
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if not gone.done():
                await send({"type": "http.response.body", "body": b""})
        except OSError:
            pass  # the client went away
        finally:
            gone.cancel()

    async def _delete(self, scope: Scope, send: Send) -> None:
        connection = await self._http_connection(scope, send)
        if connection is None:
            return
        # Answer at once: stopping the agent can take the backend's whole close sequence
        # (seconds), and the client has nothing to wait for. The server owns the stop
        # and awaits it at shutdown.
        self._stop_soon(connection, "the client ended the connection (DELETE)")
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    # ------------------------------------------------------------------ WebSocket

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "websocket.connect":
            return
        if scope["path"].rstrip("/") != self.path.rstrip("/"):
            await _refuse_upgrade(scope, send, 404, "Not Found")
            return
        if not self._authorized(scope):
            await _refuse_upgrade(scope, send, 401, "Unauthorized")
            return
        if not self._origin_allowed(scope):
            await _refuse_upgrade(scope, send, 403, "Forbidden origin")
            return
        if self._at_capacity():
            await _refuse_upgrade(scope, send, 503, "Too many connections")
            return
        try:
            connection = await self._open(kind="ws", send=send)
        except StartFailed:
            await _refuse_upgrade(scope, send, 502, CANNOT_START)
            return
        await send(
            {
                "type": "websocket.accept",
                "headers": [(b"acp-connection-id", connection.id.encode())],
            }
        )
        loop = asyncio.get_running_loop()
        outbound = loop.create_task(self._to_websocket(connection, send))
        connection.tasks.append(outbound)
        try:
            await self._from_websocket(connection, receive, send)
        finally:
            await connection.close("the WebSocket closed")
            with contextlib.suppress(BaseException):
                await outbound

    async def _from_websocket(self, connection: _Connection, receive: Receive, send: Send) -> None:
        while not connection.closed:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            if message["type"] != "websocket.receive":
                continue
            connection.touch()
            text = message.get("text")
            if text is None:
                continue  # binary frames are ignored (RFD)
            data = text.encode()
            if len(data) > self.max_message_size:
                with contextlib.suppress(Exception):
                    await send({"type": "websocket.close", "code": 1009, "reason": "too big"})
                return
            try:
                await connection.backend.send(data)
            except ConnectionError:
                return

    async def _to_websocket(self, connection: _Connection, send: Send) -> None:
        """What the agent sends, until it ends; then close the socket, saying how the
        agent ended: 1000, or 1014 (bad gateway) when it failed (a non-zero exit code,
        a signal). (An in-process agent sends through `_websocket_sender` itself: then
        this only waits for the end.)"""
        try:
            while True:
                message = await connection.backend.recv()
                if message is None:
                    break
                connection.touch()
                await send({"type": "websocket.send", "text": message.decode()})
            if connection.closed:  # ended here (the client left, shutdown, idle)
                await send({"type": "websocket.close", "code": 1000})
                return
            clean, why = await connection.backend.ended()
            await connection.close(why)
            reason = why.encode()[:CLOSE_REASON].decode("utf-8", "ignore")
            code = 1000 if clean else 1014  # 1014: bad gateway
            await send({"type": "websocket.close", "code": code, "reason": reason})
        except (OSError, RuntimeError):
            pass  # the client went away
        except Exception:
            # ASGI servers raise their own "client disconnected" errors
            log.debug("sending to a WebSocket failed", exc_info=True)


def _websocket_sender(connection: _Connection, send: Send) -> Callable[[bytes], Awaitable[None]]:
    async def deliver(message: bytes) -> None:
        connection.touch()
        await send({"type": "websocket.send", "text": message.decode()})

    return deliver


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b""
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _text(
    send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": text.encode()})


async def _json(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _refuse_upgrade(scope: Scope, send: Send, status: int, text: str) -> None:
    """An HTTP answer to a WebSocket upgrade, where the server supports it (uvicorn
    does); otherwise a plain refusal (the server answers 403)."""
    if "websocket.http.response" in scope.get("extensions", {}):
        await send(
            {
                "type": "websocket.http.response.start",
                "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8")],
            }
        )
        await send({"type": "websocket.http.response.body", "body": text.encode()})
    else:
        await send({"type": "websocket.close", "code": 1008})


@overload
def asgi_app(
    agent: Agent | Callable[[], Agent],
    *,
    command: None = None,
    token: str | None = None,
    path: str = "/acp",
    allowed_origins: Sequence[str] = (),
    max_connections: int = 16,
    idle_timeout: float = 300.0,
    max_message_size: int = DEFAULT_MAX_FRAME_SIZE,
    store: SessionStore | None = None,
) -> ASGIApp: ...
@overload
def asgi_app(
    agent: None = None,
    *,
    command: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    token: str | None = None,
    path: str = "/acp",
    allowed_origins: Sequence[str] = (),
    max_connections: int = 16,
    idle_timeout: float = 300.0,
    max_message_size: int = DEFAULT_MAX_FRAME_SIZE,
) -> ASGIApp: ...
def asgi_app(
    agent: Agent | Callable[[], Agent] | None = None,
    *,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    token: str | None = None,
    path: str = "/acp",
    allowed_origins: Sequence[str] = (),
    max_connections: int = 16,
    idle_timeout: float = 300.0,
    max_message_size: int = DEFAULT_MAX_FRAME_SIZE,
    store: SessionStore | None = None,
) -> ASGIApp:
    """An ASGI application serving ACP on `path` over WebSocket and Streamable HTTP.

    Serve either `agent` in this process (an `Agent` instance shared by every
    connection, or a zero-argument callable making one per connection) or `command`, a
    stdio agent started once per remote connection (its process group is stopped when
    the connection ends). Run it with any ASGI server, e.g.
    `uvicorn.run(asgi_app(MyAgent), host="127.0.0.1", ws_max_size=...,
    ws_per_message_deflate=False)` (compression doubles an idle WebSocket's memory; see
    "Under load" in docs/remote.md for the open-file limit and the other limits).

    Args:
        token: When set, every request and WebSocket upgrade must carry
            `Authorization: Bearer <token>` (401 otherwise).
        allowed_origins: Browser origins allowed besides the server's own (an `Origin`
            header naming another site is refused with 403; non-browser clients send
            none). `"*"` allows any.
        max_connections: Connections at once; more are refused with 503.
        idle_timeout: Seconds after which a connection is closed: a WebSocket with no
            message either way, an HTTP connection with no event stream open and no
            request.
        max_message_size: Longest accepted message, in bytes (HTTP: 413; WebSocket:
            closed with 1009). Configure the ASGI server's own WebSocket limit to match
            (uvicorn's `ws_max_size` defaults to 16 MiB).
        store: For an in-process `agent`: a session store shared by every connection
            (`serve_agent(..., store=...)`; docs/persistence.md), so a session started
            on one connection is listed and loaded on the next. You close it.
    """
    if (agent is None) == (command is None):
        raise ValueError("serve either an agent or a command")
    if store is not None and agent is None:
        raise ValueError("store= is for an in-process agent (a command keeps its own)")
    if agent is not None:
        from acp_sdk.agent._runtime import Agent as AgentClass

        def new_backend() -> Backend:
            instance = agent if isinstance(agent, AgentClass) else agent()
            return AgentBackend(instance, max_message_size, store)
    else:
        assert command is not None
        argv = argv_of(command)

        def new_backend() -> Backend:
            return ProcessBackend(argv, env=env, cwd=cwd, max_message_size=max_message_size)

    return _Server(
        new_backend,
        in_process=agent is not None,
        token=token,
        path=path,
        allowed_origins=allowed_origins,
        max_connections=max_connections,
        idle_timeout=idle_timeout,
        max_message_size=max_message_size,
    )
