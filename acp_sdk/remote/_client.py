"""The client side of the remote transports: one message in, one message out.

`WebSocketTransport` (the `websockets` library) and `HttpTransport` (httpx, Streamable
HTTP with server-sent events) are written once, for asyncio. The drivers see them
through two small adapters: `AsyncStreams` (the reader/writer pair `AsyncDriver`
takes) and `bridge_to_threads` (a `StreamTransport` for `ThreadDriver`, running the
transport on a private event-loop thread). Both drivers read whole messages
(`messages=True`), so the connection applies no newline framing to them.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import functools
import logging
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from typing import Any, Final, Protocol, TypeVar

import orjson

from acp_sdk._driver.threads import StreamTransport
from acp_sdk.protocol import _routes
from acp_sdk.protocol._errors import ConnectionClosed
from acp_sdk.protocol._framing import DEFAULT_MAX_FRAME_SIZE, split_frames
from acp_sdk.remote._deps import require

T = TypeVar("T")
log = logging.getLogger("acp_sdk.remote")

CONNECTION_ID: Final = "Acp-Connection-Id"
SESSION_ID: Final = "Acp-Session-Id"
CONNECTION_FAILURE: Final = frozenset({401, 403, 404, 410})
"""Statuses after which the HTTP connection is gone (as the TypeScript client says)."""
INBOX_LIMIT: Final = 256
"""Messages read from the event streams and not yet taken by the driver. Past it the
streams stop reading, so a client that stops consuming holds bounded memory and the
server's own buffer (then the agent) is made to wait, as over a pipe."""
SESSION_DRAIN: Final = 1.0
"""Seconds the end of a connection waits for its session streams to deliver what the
server sent on them before it (see `HttpTransport._sessions_drained`)."""


class MessageTransport(Protocol):
    """Whole JSON-RPC messages to and from a remote peer."""

    async def open(self) -> None: ...
    async def recv(self) -> bytes | None:
        """The next message; None once the peer is gone."""

    async def send(self, message: bytes) -> None:
        """Send one message (raises `ConnectionError` when the peer is gone)."""

    async def aclose(self) -> None: ...


def transport_for(
    url: str, headers: Mapping[str, str] | None, timeout: float, max_message_size: int
) -> MessageTransport:
    """WebSocket for ws:// and wss://, Streamable HTTP for http:// and https://."""
    scheme = url.split(":", 1)[0].lower()
    if scheme in ("ws", "wss"):
        return WebSocketTransport(url, headers, timeout, max_message_size)
    if scheme in ("http", "https"):
        return HttpTransport(url, headers, timeout, max_message_size)
    raise ValueError(f"unsupported URL scheme {scheme!r}: use ws://, wss://, http:// or https://")


# ---------------------------------------------------------------------- WebSocket


class _RemoteTransport:
    """Where a remote transport connects, and the limits both kinds share."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        max_message_size: int = DEFAULT_MAX_FRAME_SIZE,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.max_message_size = max_message_size
        self.connection_id: str | None = None
        self._start_state()

    def _start_state(self) -> None:
        """Set up what a kind of transport keeps per connection (before `open`)."""


class WebSocketTransport(_RemoteTransport):
    """One JSON-RPC message per WebSocket text frame; binary frames are ignored (RFD)."""

    _ws: Any = None  # the open websockets connection

    async def open(self) -> None:
        client = require("websockets.asyncio.client", "ws")
        try:
            self._ws = await client.connect(
                self.url,
                additional_headers=self.headers,
                open_timeout=self.timeout,
                # The SDK's own line cap, not websockets' 1 MiB default.
                max_size=self.max_message_size,
                compression=None,
            )
        except Exception as error:
            raise ConnectionClosed(f"could not connect to {self.url}: {error}") from error
        self.connection_id = self._ws.response.headers.get(CONNECTION_ID)

    async def recv(self) -> bytes | None:
        exceptions = require("websockets.exceptions", "ws")
        while True:
            try:
                message = await self._ws.recv()
            except exceptions.ConnectionClosed:
                return None
            if isinstance(message, str):
                return message.encode()
            log.debug("ignored a binary WebSocket frame of %d bytes", len(message))

    async def send(self, message: bytes) -> None:
        exceptions = require("websockets.exceptions", "ws")
        try:
            await self._ws.send(message, text=True)
        except exceptions.ConnectionClosed as error:
            raise ConnectionResetError(str(error)) from error

    async def aclose(self) -> None:
        if self._ws is None:
            return
        try:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._ws.close(), self.timeout)
        finally:
            # A peer that stopped reading never lets the closing handshake out: drop
            # the socket rather than leave it (and its buffered frames) behind.
            transport = getattr(self._ws, "transport", None)
            if transport is not None and not transport.is_closing():
                transport.abort()


# ---------------------------------------------------------------------- Streamable HTTP


class HttpTransport(_RemoteTransport):
    """Streamable HTTP as the TypeScript SDK 2.4.0 speaks it: POST each message
    (`initialize` answers in its body, with `Acp-Connection-Id`), one server-sent event
    stream for the connection and one per session (opened before the first POST of that
    session), `Acp-Session-Id` on every POST for a session, DELETE at the end. Cookies
    the server sets are kept for the connection. HTTP/2 is used where the server offers
    it over TLS; plain http:// speaks HTTP/1.1 (one TCP connection per open stream)."""

    _client: Any = None  # the httpx.AsyncClient, once open

    def _start_state(self) -> None:
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue(INBOX_LIMIT)
        self._streams: dict[str, asyncio.Future[None]] = {}  # session -> opened
        self._tasks: set[asyncio.Task[None]] = set()
        self._answer_sessions: dict[str, str] = {}  # the agent's request id -> session
        self._closed = False

    async def open(self) -> None:
        httpx = require("httpx", "http")
        http2 = self.url.lower().startswith("https:")
        if http2:
            require("h2", "http")
        self._client = httpx.AsyncClient(
            headers=self.headers, timeout=httpx.Timeout(self.timeout), http2=http2
        )
        # Fail here, with the reason, when the server refuses us outright (a wrong token,
        # a wrong path): a GET without a connection id is otherwise answered 400.
        try:
            probe = await self._client.get(self.url, headers={"Accept": "text/event-stream"})
        except Exception as error:
            await self._client.aclose()
            raise ConnectionClosed(f"could not connect to {self.url}: {error}") from error
        if probe.status_code in CONNECTION_FAILURE:
            await self._client.aclose()
            raise ConnectionClosed(
                f"{self.url} refused the connection: HTTP {probe.status_code} {probe.text[:500]}"
            )

    async def recv(self) -> bytes | None:
        if self._closed and self._inbox.empty():
            return None
        message = await self._inbox.get()
        if message is None:
            self._wake()  # every later recv ends too
        return message

    def _wake(self) -> None:
        """End a `recv` waiting on an empty inbox (a full one is drained first, and then
        `recv` sees the connection closed)."""
        with contextlib.suppress(asyncio.QueueFull):
            self._inbox.put_nowait(None)

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ConnectionResetError("the HTTP connection is closed")
        decoded = orjson.loads(message)
        if self.connection_id is None:
            await self._initialize(message)
            return
        session = _routes.session_of(decoded)
        if session is None and _routes.is_response(decoded):
            key = _routes.id_key(decoded)
            session = self._answer_sessions.pop(key, None) if key is not None else None
        if session is not None:
            await self._open_stream(session)
        headers = {"Content-Type": "application/json", CONNECTION_ID: self.connection_id}
        if session is not None:
            headers[SESSION_ID] = session
        try:
            response = await self._client.post(self.url, content=message, headers=headers)
        except Exception as error:
            self._end(f"POST failed: {error}")
            raise ConnectionResetError(str(error)) from error
        if response.status_code < 300:
            return
        text = response.text[:8192]
        if response.status_code in CONNECTION_FAILURE:
            self._end(f"the server answered {response.status_code}: {text}")
            raise ConnectionResetError(text)
        if "method" in decoded and "id" in decoded:  # the request fails, not the connection
            await self._inbox.put(_error_answer(decoded["id"], response.status_code, text))
        else:
            log.warning("the server refused a message: HTTP %d %s", response.status_code, text)

    async def _initialize(self, message: bytes) -> None:
        try:
            response = await self._client.post(
                self.url, content=message, headers={"Content-Type": "application/json"}
            )
        except Exception as error:
            raise ConnectionClosed(f"could not connect to {self.url}: {error}") from error
        connection_id = response.headers.get(CONNECTION_ID)
        if response.status_code != 200 or not connection_id:
            # The caller's initialize fails with what the server said; the connection ends.
            request_id = orjson.loads(message).get("id")
            await self._inbox.put(_error_answer(request_id, response.status_code, response.text))
            self._end(f"initialize failed: HTTP {response.status_code}")
            return
        self.connection_id = connection_id
        self._start_stream(None)
        await self._inbox.put(response.content)

    def _start_stream(self, session: str | None) -> asyncio.Future[None]:
        opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if session is not None:
            self._streams[session] = opened
        task = asyncio.get_running_loop().create_task(self._stream(session, opened))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return opened

    async def _open_stream(self, session: str) -> None:
        opened = self._streams.get(session) or self._start_stream(session)
        await opened

    async def _stream(self, session: str | None, opened: asyncio.Future[None]) -> None:
        httpx = require("httpx", "http")
        assert self.connection_id is not None
        headers = {"Accept": "text/event-stream", CONNECTION_ID: self.connection_id}
        if session is not None:
            headers[SESSION_ID] = session
        # No read timeout: a quiet stream is not a dead one (the server sends keep-alives).
        timeout = httpx.Timeout(self.timeout, read=None)
        try:
            async with self._client.stream(
                "GET", self.url, headers=headers, timeout=timeout
            ) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise ConnectionResetError(
                        f"event stream refused: {response.status_code} {response.text[:2000]}"
                    )
                if not opened.done():
                    opened.set_result(None)
                async for message in sse_messages(response.aiter_lines(), self.max_message_size):
                    await self._received(message, session)
            if session is None:
                await self._sessions_drained()
                self._end("the server ended the connection's event stream")
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if not opened.done():
                opened.set_exception(ConnectionResetError(str(error)))
                opened.exception()  # retrieved: the sender may be gone
            if session is None:
                await self._sessions_drained()
                self._end(f"the connection's event stream failed: {error}")
            else:
                log.warning("the event stream of session %s ended: %s", session, error)
        finally:
            if session is not None and self._streams.get(session) is opened:
                del self._streams[session]

    async def _received(self, message: bytes, session: str | None) -> None:
        if b'"sessionId"' in message or (session is not None and b'"method"' in message):
            try:
                decoded = _routes.as_message(orjson.loads(message))
            except orjson.JSONDecodeError:
                decoded = None
            if decoded is not None:
                opened = _routes.result_session(decoded)
                if opened is not None and opened not in self._streams and not self._closed:
                    self._start_stream(opened)
                key = _routes.id_key(decoded)
                if session is not None and "method" in decoded and key is not None:
                    self._answer_sessions[key] = session
        await self._inbox.put(message)  # waits while the inbox is full: backpressure

    async def _sessions_drained(self) -> None:
        """Before the connection ends: what the server already sent on the session
        streams (a dying agent's last updates) is read first, so nothing sent before the
        end is lost. The server ends those streams with the connection; bounded anyway."""
        this = asyncio.current_task()
        others = [task for task in self._tasks if task is not this]
        if others:
            await asyncio.wait(others, timeout=SESSION_DRAIN)

    def _end(self, why: str) -> None:
        if not self._closed:
            log.info("remote connection ended: %s", why)
        self._closed = True
        self._wake()

    async def aclose(self) -> None:
        already = self._closed
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=self.timeout)
        if self._client is not None:
            if self.connection_id is not None and not already:
                with contextlib.suppress(Exception):
                    await self._client.delete(self.url, headers={CONNECTION_ID: self.connection_id})
            with contextlib.suppress(Exception):
                await self._client.aclose()
        self._wake()


def _error_answer(request_id: Any, status: int, body: str) -> bytes:
    """What the TypeScript client answers itself when a POST of a request is refused."""
    try:
        data: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = body
    return orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {
                "code": -32603,
                "message": f"the server refused the request: HTTP {status}",
                "data": {"status": status, "body": data},
            },
        }
    )


async def sse_messages(lines: AsyncIterator[str], max_size: int) -> AsyncIterator[bytes]:
    """The `data` of each server-sent event (comments, ids and event names skipped)."""
    data: list[str] = []
    size = 0
    async for line in lines:
        if not line:
            if data:
                yield "\n".join(data).encode()
            data, size = [], 0
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            value = value[1:] if value.startswith(" ") else value
            size += len(value)
            if size > max_size:
                raise ConnectionResetError(f"an event over {max_size} bytes")
            data.append(value)
    if data:
        yield "\n".join(data).encode()


# ---------------------------------------------------------------------- driver adapters


class AsyncStreams:
    """The reader and writer `AsyncDriver` takes, over a message transport: each read
    is one whole message, each write a batch of our frames sent one by one."""

    def __init__(self, transport: MessageTransport) -> None:
        self.transport = transport
        self._pending: collections.deque[bytes] = collections.deque()
        self._closing: asyncio.Future[None] | None = None

    async def read(self, n: int = -1, /) -> bytes:
        message = await self.transport.recv()
        if message is None:
            return b""
        return message or b" "  # an empty message is malformed, not the end

    def write(self, data: bytes, /) -> None:
        self._pending.extend(split_frames(data))

    async def drain(self) -> None:
        while self._pending:
            await self.transport.send(self._pending.popleft())

    def close(self) -> asyncio.Future[None]:
        if self._closing is None:
            self._closing = asyncio.ensure_future(self.transport.aclose())
        return self._closing


READ_POLL: Final = 0.5


def bridge_to_threads(transport: MessageTransport, timeout: float) -> StreamTransport:
    """A `StreamTransport` for the blocking driver: the transport runs on a private
    event loop in a daemon thread; reads and writes wait for it."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="acp-remote", daemon=True)
    thread.start()
    closed = threading.Event()
    lock = threading.Lock()  # nothing is submitted to the loop once it is stopping

    def submit(make: Callable[[], Coroutine[Any, Any, T]]) -> concurrent.futures.Future[T] | None:
        with lock:
            if closed.is_set():
                return None
            return asyncio.run_coroutine_threadsafe(make(), loop)

    def run(make: Callable[[], Coroutine[Any, Any, T]], wait: float | None = None) -> T:
        future = submit(make)
        if future is None:
            raise BrokenPipeError("the remote transport is closed")
        try:
            return future.result(wait)
        except concurrent.futures.CancelledError:
            # Closing stops the loop under a call still waiting (a send to a peer that
            # stopped reading): to the driver, the transport is gone.
            raise BrokenPipeError("the remote transport is closed") from None

    def stop() -> None:
        with lock:
            closed.set()

        async def cancel_the_rest() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(cancel_the_rest(), loop).result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()

    try:
        run(lambda: _open_bounded(transport, timeout))
    except BaseException:
        stop()
        raise

    def read(n: int) -> bytes:
        future = submit(transport.recv)
        if future is None:
            return b""
        while True:
            try:
                message = future.result(READ_POLL)
            except concurrent.futures.TimeoutError:
                if closed.is_set():
                    future.cancel()
                    return b""
                continue
            except (concurrent.futures.CancelledError, OSError):
                return b""
            if message is None:
                return b""
            return message or b" "

    def write(data: bytes) -> None:
        for frame in split_frames(data):
            run(functools.partial(transport.send, frame))

    def close() -> None:
        if closed.is_set():
            return
        try:
            with contextlib.suppress(Exception):
                run(transport.aclose, timeout + 1)
        finally:
            stop()

    bridged = StreamTransport(read, write, close)
    bridged.messages = True
    return bridged


async def _open_bounded(transport: MessageTransport, timeout: float) -> None:
    try:
        await asyncio.wait_for(transport.open(), timeout)
    except asyncio.TimeoutError:
        raise ConnectionClosed(f"could not connect within {timeout} s") from None
