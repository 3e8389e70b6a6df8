"""The blocking, thread-based client: `Client`, its sessions and prompt turns.

    from acp_sdk import Client

    with Client.spawn(["my-agent", "--acp"]) as client:
        session = client.new_session(cwd="/abs/project")
        for update in session.prompt("Explain this repository"):
            print(update)

Many threads may share one `Client`. Handlers run in a bounded worker pool, so a handler
may call back into the client. Ctrl-C during a prompt sends `session/cancel`, and the
turn ends with the agent's `cancelled` answer; a second Ctrl-C stops waiting.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, TypeVar

from acp_sdk._driver import flows
from acp_sdk._driver.threads import StreamTransport, ThreadDriver, refuse_awaitable
from acp_sdk._driver.vocabulary import Limits
from acp_sdk.client._common import (
    BaseClient,
    SessionHandle,
    TurnHandle,
    prompt_request,
)
from acp_sdk.client._common import session_id_of as _session_id_of
from acp_sdk.protocol._errors import ACPError, ConnectionClosed
from acp_sdk.protocol._generated.client_calls import ClientCalls
from acp_sdk.protocol._rows import Method, Notification

if TYPE_CHECKING:  # models, rows and handlers load on first use (see _common)
    import subprocess

    from typing_extensions import Self, Unpack

    from acp_sdk.client._options import ClientOptions
    from acp_sdk.handlers import ClientHandlers
    from acp_sdk.schema import (
        ContentBlock,
        LoadSessionResponse,  # noqa: F401 - named (quoted) in the class's bases
        NewSessionResponse,  # noqa: F401 - named (quoted) in the class's bases
        PromptResponse,
        ResumeSessionResponse,  # noqa: F401 - named (quoted) in the class's bases
        SessionUpdate,
    )

__all__ = ["Client", "Session", "Turn"]

P = TypeVar("P")
R = TypeVar("R")
_DEFAULTS = Limits()


class Turn(TurnHandle["Client"]):
    """One prompt turn, already started: iterate the session updates; it ends with the
    prompt response.

    The prompt was sent (or queued, while the agent is not reading) before
    `session.prompt()` returned, and the turn runs whether or not anyone iterates it: its
    updates wait (up to `max_buffered_updates`, then the client stops reading from the
    agent) and `for update in turn` later yields every one in arrival order.
    Afterwards `turn.response` / `turn.stop_reason` hold the answer. A finished turn
    iterated again yields nothing and ends the same way. `turn.wait()` runs it to the
    end, calling `on_update` per update.
    """

    _interrupted = False  # a first Ctrl-C cancelled the turn; the next one stops waiting

    def __iter__(self) -> Iterator[SessionUpdate]:
        driver = self._client._driver_or_raise()
        sink, pending = self._sink, self._pending
        while True:
            while pending:
                yield self._saw(pending.popleft())
            try:
                pending.extend(driver.run(flows.next_updates(driver.engine, sink)))
            except KeyboardInterrupt:
                self._interrupt()
                continue
            if not pending:
                self._ended(sink.outcome)
                return

    def cancel(self) -> None:
        """Ask the agent to stop (`session/cancel`), whether or not the turn was iterated
        yet; the turn still ends with its answer, `cancelled`. Does nothing once the turn
        ended."""
        if self.done:
            return
        with contextlib.suppress(ACPError):
            self._client.cancel(session_id=self.session_id)

    def _interrupt(self) -> None:
        """Ctrl-C while the turn runs: the first cancels it (the turn goes on until the
        agent answers `cancelled`), the next one stops waiting."""
        if self._interrupted:
            raise KeyboardInterrupt
        self._interrupted = True
        self.cancel()

    def wait(self) -> PromptResponse:
        """Run the turn to its end (calling `on_update` per update); the response.

        Ctrl-C, also while `on_update` runs, cancels the turn as while iterating."""
        for update in self:
            if self._on_update is not None:
                try:
                    refuse_awaitable(self._on_update(update), "an async on_update")
                except KeyboardInterrupt:
                    self._interrupt()
        assert self.response is not None
        return self.response


class Session(SessionHandle["Client", R]):
    """A session handle (see `SessionHandle`) that starts prompt turns."""

    def prompt(
        self,
        prompt: str | ContentBlock | Sequence[ContentBlock],
        *,
        on_update: Callable[[SessionUpdate], Any] | None = None,
        timeout: float | None = None,
        idle_timeout: float | None = None,
    ) -> Turn:
        """Start a turn with text or content blocks: the prompt is sent (or queued, while
        the agent is not reading) before this returns. Iterate the turn, or `.wait()`.

        One turn runs per session at a time: while the previous turn runs (also after
        its `cancel()`, until the agent answers `cancelled`), this raises
        `LocalProtocolError`; let it end first (`turn.wait()`).

        Args:
            on_update: Called per update by `turn.wait()`.
            timeout: Seconds for the whole turn.
            idle_timeout: Seconds the agent may stay silent: each of its updates in the
                session, and each request it makes in it, starts them again; it does
                not run while we answer such a request or are not reading.

        When a limit passes, the client sends `session/cancel`; the agent then has 5
        seconds to end the turn (it ends `cancelled`, with `turn.timed_out` saying
        which limit), else the turn raises `RequestTimeout` (a `TimeoutError`).
        """
        request = prompt_request(self.session_id, prompt)
        return Turn(self.client, request, on_update, timeout=timeout, idle_timeout=idle_timeout)

    def cancel(self) -> None:
        """Send `session/cancel` for this session: the running turn ends with `cancelled`
        (also when it was not iterated yet, or the agent has not read the prompt yet)."""
        self.client.cancel(session_id=self.session_id)


class Client(
    BaseClient["ClientHandlers"],
    ClientCalls[
        Session["NewSessionResponse"],
        Session["LoadSessionResponse"],
        Session["ResumeSessionResponse"],
        Turn,
    ],
):
    """A blocking ACP client. Use `Client.spawn(argv)`, `Client.connect(reader, writer)` or
    `Client.connect_url(url)`;
    the options are `BaseClient`'s. Handlers run in a pool of `workers` threads."""

    _driver: ThreadDriver | None

    # ------------------------------------------------------------------ construction

    @classmethod
    def connect(
        cls, reader: IO[bytes], writer: IO[bytes], **options: Unpack[ClientOptions[ClientHandlers]]
    ) -> Self:
        """A client over any pair of binary streams (pipes, sockets' files, ...)."""
        client = cls(**options)
        client._streams = (reader, writer)
        return client

    def open(self) -> Self:
        """Start the agent (or attach to the streams) and initialize. Idempotent."""
        if self._driver is not None:
            return self
        try:
            self._start()
        except BaseException:
            for delay in self._abandon_steps():
                time.sleep(delay)
            raise
        if self._auto_initialize:
            from acp_sdk.methods import INITIALIZE

            try:
                self._request(INITIALIZE, self._initialize_request())
            except BaseException:
                self.close()
                raise
        return self

    def _start(self) -> None:
        """Start the agent (or attach to the streams) and the driver."""
        if self._spawn is not None:
            self._process = self._spawn.start()
            transport = StreamTransport.of_process(self._process)
        elif self._streams is not None:
            transport = StreamTransport.of_files(*self._streams)
        elif self._remote is not None:
            from acp_sdk.remote._client import bridge_to_threads

            transport = bridge_to_threads(self._remote.transport(), self._remote.timeout)
        else:
            raise RuntimeError("use Client.spawn(...) or Client.connect(...)")
        self._driver = ThreadDriver(
            self._new_connection(),
            transport,
            serve=self._serve,
            notification_callbacks=self._notification_callbacks,
            on_update=self._on_update,
            limits=self._limits,
            workers=self._workers,
        )
        self._attach(self._driver.engine)
        self._driver.start()

    def __enter__(self) -> Self:
        return self.open()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Fail what is pending, stop the agent's process group, join the threads.

        Returns within close_timeout + terminate_timeout + 2 seconds; idempotent.
        """
        if self._driver is not None:
            self._driver.close(*self._close_grace(), reason="the client was closed")
        self._handlers.close()

    def _driver_or_raise(self) -> ThreadDriver:
        if self._driver is None:
            raise ConnectionClosed("the client is not open: use `with`")
        return self._driver

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The agent's `Popen` once started by `spawn` (None for `connect`, or before `open`)."""
        return self._process.popen if self._process is not None else None

    # ------------------------------------------------------------------ calls

    def request(self, row: Method[P, R], params: P, *, timeout: float | None = None) -> R:
        """Call any method row (core or extension) and wait for its typed result.

        `timeout` covers queueing, sending and waiting (`RequestTimeout`, a TimeoutError).
        """
        driver = self._driver_or_raise()
        return self._answered(
            row, params, driver.run(flows.call(driver.engine, row, params, timeout))
        )

    def notify(self, row: Notification[P], params: P, *, timeout: float | None = None) -> None:
        """Send a notification; waits (up to `timeout`) while the agent is not reading."""
        driver = self._driver_or_raise()
        driver.run(flows.notify(driver.engine, row, params, timeout))

    def _request(self, row: Method[P, R], params: P) -> R:
        row = self._on_table(row)
        return self._record(row, self.request(row, params, timeout=self._timeout_of(row)))

    def _notify(self, row: Notification[P], params: P) -> None:
        self.notify(row, params, timeout=self._timeout)

    def _open_session(self, row: Method[Any, R], params: Any) -> Session[R]:
        self._before_open(row, params)
        response = self._request(row, params)
        return Session(self, _session_id_of(response, params), response)

    def _start_turn(self, row: Method[Any, Any], params: Any) -> Turn:
        return Turn(self, params)  # started: the prompt is queued

    def session(self, session_id: str) -> Session[None]:
        """A handle on an existing session, without a request."""
        return Session(self, session_id, None)

    def _serve(self, row: Any, params: Any) -> Any:
        result = self._handler_for(row)(params)
        refuse_awaitable(result, "an async handler callback")
        return result
