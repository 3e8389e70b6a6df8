"""The blocking, thread-based client: `Client`, its sessions and prompt turns.

    from acp_sdk import Client

    with Client.spawn(["my-agent", "--acp"]) as client:
        session = client.new_session(cwd=".")
        for update in session.prompt("Explain this repository"):
            print(update)

Many threads may share one `Client`. Handlers run in a worker pool, so a handler may call
back into the client. Ctrl-C during a prompt sends `session/cancel`, and the turn ends
with the agent's `cancelled` answer.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import logging
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import IO, Any, Final, Generic, TypeVar

from acp_sdk._client_common import (
    UpdateRouter,
    agent_capabilities,
    agent_info,
    default_initialize,
    log_agent_stderr,
    prompt_blocks,
)
from acp_sdk._generated.client_calls import ClientCalls
from acp_sdk._rows import Method, MethodTable, Notification, Row, Side
from acp_sdk._thread_endpoint import ThreadEndpoint
from acp_sdk.connection import Connection
from acp_sdk.errors import ConnectionClosed, RequestError
from acp_sdk.handlers import ClientHandlers, HandlerSet
from acp_sdk.methods import INITIALIZE, SESSION_PROMPT
from acp_sdk.schema import (
    AgentCapabilities,
    ContentBlock,
    Implementation,
    InitializeResponse,
    PromptRequest,
    PromptResponse,
    SessionNotification,
    SessionUpdate,
    StopReason,
)

__all__ = ["Client", "Session", "Turn"]

P = TypeVar("P")
R = TypeVar("R")
log = logging.getLogger("acp_sdk.client")
_END: Final[Any] = object()


class Turn:
    """One prompt turn: iterate the session updates; it ends with the prompt response.

    `for update in turn` yields every update in arrival order, all of those that arrived
    before the response included; afterwards `turn.response` / `turn.stop_reason` hold the
    answer. `turn.wait()` runs it to the end, calling `on_update` per update.
    """

    def __init__(
        self,
        client: Client,
        params: PromptRequest,
        on_update: Callable[[SessionUpdate], Any] | None = None,
    ) -> None:
        self._client = client
        self.params = params
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._on_update = on_update
        self._call: Any = None
        self._request_id: int | str | None = None
        self.response: PromptResponse | None = None
        self.received = 0
        """Updates routed to this turn so far (counted on the reader, as they arrive)."""

    @property
    def session_id(self) -> str:
        return self.params.session_id

    @property
    def stop_reason(self) -> StopReason | None:
        return self.response.stop_reason if self.response is not None else None

    def _start(self) -> None:
        if self._call is not None:
            return
        endpoint = self._client._endpoint_or_raise()
        self._client._router.open(self.session_id, self._deliver)
        try:
            self._request_id, self._call = endpoint.start_call(SESSION_PROMPT, self.params)
        except BaseException:
            self._client._router.close(self.session_id, self._deliver)
            raise
        self._call.add_done_callback(self._finished)

    def _deliver(self, update: SessionUpdate) -> None:
        self.received += 1
        self._queue.put(update)

    def _finished(self, _: Any) -> None:
        self._client._router.close(self.session_id, self._deliver)
        self._queue.put(_END)

    def __iter__(self) -> Iterator[SessionUpdate]:
        self._start()
        interrupted = False
        while True:
            try:
                item = self._queue.get()
            except KeyboardInterrupt:
                if interrupted:
                    raise
                interrupted = True
                self.cancel()
                continue
            if item is _END:
                assert self._call is not None
                self.response = self._call.result()  # raises the call's error, if any
                return
            yield item

    def cancel(self) -> None:
        """Ask the agent to stop (`session/cancel`); the turn still ends with its answer."""
        with contextlib.suppress(ConnectionClosed):
            self._client.cancel(session_id=self.session_id)

    def wait(self) -> PromptResponse:
        for update in self:
            if self._on_update is not None:
                self._on_update(update)
        assert self.response is not None
        return self.response


class Session(Generic[R]):
    """A session handle: its id, the response that opened it (`NewSessionResponse`,
    `LoadSessionResponse` or `ResumeSessionResponse`), and prompt turns in it."""

    def __init__(self, client: Client, session_id: str, response: R) -> None:
        self.client = client
        self.session_id = session_id
        self.response = response

    def prompt(
        self,
        prompt: str | ContentBlock | Sequence[ContentBlock],
        *,
        on_update: Callable[[SessionUpdate], Any] | None = None,
    ) -> Turn:
        """Start a turn with text or content blocks; iterate it, or call `.wait()`."""
        return Turn(
            self.client,
            PromptRequest(session_id=self.session_id, prompt=prompt_blocks(prompt)),
            on_update,
        )

    def cancel(self) -> None:
        self.client.cancel(session_id=self.session_id)


class Client(ClientCalls):
    """A blocking ACP client. Use `Client.spawn(argv)` or `Client.connect(reader, writer)`.

    Args:
        handlers: What the client serves to the agent (see `acp_sdk.handlers`); the
            capabilities advertised at initialize are derived from them.
        on_update: Called with each `session/update` outside a prompt turn.
        client_info: Sent at initialize (default: this SDK's name and version).
        initialize: False to skip the automatic handshake (call `initialize()` yourself).
        table: Method table (the stable protocol by default; extension rows welcome).
        request_timeout: Default seconds for requests other than prompts (None: wait).
        workers: Threads serving the agent's requests.
    """

    def __init__(
        self,
        *,
        handlers: ClientHandlers | Sequence[ClientHandlers] | None = None,
        on_update: Callable[[SessionNotification], Any] | None = None,
        client_info: Implementation | None = None,
        initialize: bool = True,
        table: MethodTable | None = None,
        request_timeout: float | None = None,
        workers: int = 8,
        _open: Callable[
            [], tuple[Callable[[int], bytes], Callable[[bytes], Any], Callable[[], Any]]
        ]
        | None = None,
    ) -> None:
        self._handlers = HandlerSet(handlers)
        self._router = UpdateRouter(on_update)
        self._client_info = client_info
        self._auto_initialize = initialize
        self._table = table
        self._timeout = request_timeout
        self._workers = workers
        self._open_streams = _open
        self._endpoint: ThreadEndpoint | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr_thread: threading.Thread | None = None
        self._close_grace = (2.0, 2.0)
        self._callbacks = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="acp-cb")
        self._callback_barrier: concurrent.futures.Future[None] | None = None
        self._callback_thread: int | None = None
        self.initialize_response: InitializeResponse | None = None

    # ------------------------------------------------------------------ construction

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Callable[[str], Any] | None = None,
        close_timeout: float = 2.0,
        terminate_timeout: float = 2.0,
        **options: Any,
    ) -> Client:
        """A client for an agent subprocess (started on `with` or `open()`).

        The environment is inherited unless `env` is given. The agent's stderr is always
        drained, line by line, to `stderr` (default: the `acp_sdk.agent.stderr` logger).
        Closing closes the agent's stdin, waits `close_timeout`, terminates, waits
        `terminate_timeout`, then kills, and always reaps the process.
        """
        client = cls(**options)

        def open_process() -> tuple[
            Callable[[int], bytes], Callable[[bytes], Any], Callable[[], Any]
        ]:
            process = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                bufsize=0,
                # Its own session: Ctrl-C in the terminal reaches us (we send
                # session/cancel), not the agent; closing still stops it.
                start_new_session=True,
            )
            client._process = process
            client._close_grace = (close_timeout, terminate_timeout)
            assert process.stdout is not None
            assert process.stdin is not None
            assert process.stderr is not None
            client._stderr_thread = threading.Thread(
                target=_drain_lines,
                args=(process.stderr, stderr or log_agent_stderr),
                name="acp-stderr",
                daemon=True,
            )
            client._stderr_thread.start()
            out_fd = process.stdout.fileno()
            stdin = process.stdin
            return (lambda n: os.read(out_fd, n)), _writer(stdin), stdin.close

        client._open_streams = open_process
        return client

    @classmethod
    def connect(cls, reader: IO[bytes], writer: IO[bytes], **options: Any) -> Client:
        """A client over any pair of binary streams (pipes, sockets' files, ...)."""

        def given() -> tuple[Callable[[int], bytes], Callable[[bytes], Any], Callable[[], Any]]:
            read1 = getattr(reader, "read1", None)
            return (read1 if read1 is not None else reader.read), _writer(writer), writer.close

        return cls(**options, _open=given)

    def open(self) -> Client:
        if self._open_streams is None:
            raise RuntimeError("use Client.spawn(...) or Client.connect(...)")
        read, write, close_writer = self._open_streams()
        connection = Connection(Side.CLIENT, table=self._table)
        self._endpoint = ThreadEndpoint(
            connection,
            read,
            write,
            close_writer,
            on_request=self._serve,
            on_notification=self._notified,
            workers=self._workers,
        )
        self._endpoint.start()
        if self._auto_initialize:
            try:
                self._request(INITIALIZE, default_initialize(self._handlers, self._client_info))
            except BaseException:
                self.close()
                raise
        return self

    def __enter__(self) -> Client:
        return self.open()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection, stop and reap the agent process, join the threads."""
        endpoint = self._endpoint
        if endpoint is not None:
            endpoint._shutdown()
        if self._process is not None:
            _stop_process(self._process, *self._close_grace)
        if endpoint is not None:
            endpoint.close(join_timeout=5)
        if self._stderr_thread is not None:
            self._stderr_thread.join(5)
        self._callbacks.shutdown(wait=threading.get_ident() != self._callback_thread)
        if self._process is not None:
            for stream in (self._process.stdout, self._process.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()

    def _endpoint_or_raise(self) -> ThreadEndpoint:
        if self._endpoint is None:
            raise ConnectionClosed("the client is not open: use `with`")
        return self._endpoint

    # ------------------------------------------------------------------ state

    @property
    def agent_capabilities(self) -> AgentCapabilities:
        """What the agent advertised at initialize (all defaults before that)."""
        return agent_capabilities(self._endpoint.connection if self._endpoint else None)

    @property
    def agent_info(self) -> Implementation | None:
        return agent_info(self._endpoint.connection if self._endpoint else None)

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        return self._process

    # ------------------------------------------------------------------ calls

    def request(self, row: Method[P, R], params: P, *, timeout: float | None = None) -> R:
        """Call any method row (core or extension) and wait for its typed result."""
        result = self._endpoint_or_raise().call(row, params, timeout=timeout)
        self._settle()
        return result

    def notify(self, row: Notification[P], params: P) -> None:
        self._endpoint_or_raise().notify(row, params)

    def _request(self, row: Method[P, R], params: P) -> R:
        result = self._endpoint_or_raise().call(row, params, timeout=self._timeout)
        self._settle()
        if row is INITIALIZE:
            self.initialize_response = result  # type: ignore[assignment] # R is InitializeResponse here
        return result

    def _notify(self, row: Notification[P], params: P) -> None:
        self._endpoint_or_raise().notify(row, params)

    def _open_session(self, row: Method[Any, R], params: Any) -> Session[R]:
        response = self._request(row, params)
        session_id = getattr(response, "session_id", None) or params.session_id
        return Session(self, session_id, response)

    def _start_turn(self, row: Method[Any, Any], params: Any) -> Turn:
        return Turn(self, params)

    def session(self, session_id: str) -> Session[None]:
        """A handle on an existing session, without a request."""
        return Session(self, session_id, None)

    # ------------------------------------------------------------------ inbound

    def _serve(self, row: Row, params: Any) -> Any:
        handler = self._handlers.get(row.handler_name)
        if handler is None:
            raise RequestError.method_not_found(row.wire)
        return handler(params)

    def _notified(self, row: Row, params: Any) -> None:
        # Runs on the reader: route to a turn here (ordering), run user code elsewhere.
        on_update = self._router.on_update
        if row.wire == "session/update" and not self._router.route(params) and on_update:
            self._callback(on_update, params)
        handler = self._handlers.get(row.handler_name)
        if handler is not None:
            self._callback(handler, params)

    def _callback(self, function: Callable[[Any], Any], params: Any) -> None:
        """Run user code for a notification in order, on the one callback thread."""

        def run() -> None:
            self._callback_thread = threading.get_ident()
            try:
                function(params)
            except Exception:
                log.exception("a notification callback failed")

        with contextlib.suppress(RuntimeError):  # shut down: we are closing
            self._callback_barrier = self._callbacks.submit(run)

    def _settle(self) -> None:
        """Wait until callbacks for notifications that came before an answer have run, so
        a call returns after them (unless called from a callback: it would wait on itself)."""
        barrier = self._callback_barrier
        if (
            barrier is not None
            and not barrier.done()
            and threading.get_ident() != self._callback_thread
        ):
            with contextlib.suppress(Exception):
                barrier.result()


def _writer(stream: IO[bytes]) -> Callable[[bytes], None]:
    def write(data: bytes) -> None:
        stream.write(data)
        stream.flush()

    return write


def _drain_lines(stream: IO[bytes], sink: Callable[[str], Any]) -> None:
    # The pipe is unbuffered (bufsize=0 keeps protocol writes prompt); buffer the reads, or
    # readline() would cost a system call per byte.
    buffered = io.BufferedReader(stream, 1 << 16) if isinstance(stream, io.RawIOBase) else stream
    with contextlib.suppress(OSError, ValueError), buffered:
        for line in iter(buffered.readline, b""):
            with contextlib.suppress(Exception):
                sink(line.decode("utf-8", errors="replace").rstrip("\n"))


def _stop_process(
    process: subprocess.Popen[bytes], close_timeout: float, terminate_timeout: float
) -> None:
    if process.stdin is not None:
        with contextlib.suppress(OSError, ValueError):
            process.stdin.close()
    for action, timeout in (
        (None, close_timeout),
        (process.terminate, terminate_timeout),
        (process.kill, None),
    ):
        if process.poll() is not None:
            return
        if action is not None:
            with contextlib.suppress(ProcessLookupError):
                action()
        try:
            process.wait(timeout)
            return
        except subprocess.TimeoutExpired:
            continue
