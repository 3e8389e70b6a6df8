"""What both client facades share besides the driver: set-up, defaults, turns' state.

No protocol rule lives here (those are the connection's) and no endpoint rule (the
engine's); only the choices both facades make the same way: the initialize request they
send by default, which handler serves a request, which callbacks a notification runs,
and the state of sessions and turns that does not depend on how a caller waits.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar, cast

import attrs

from acp_sdk._driver.engine import Callback, Limits, Outcome, Sink
from acp_sdk._driver.flows import TurnClock
from acp_sdk._driver.process import AgentProcess, argv_of, log_agent_stderr
from acp_sdk._version import __version__
from acp_sdk.protocol._connection import SUPPORTED_PROTOCOL_VERSIONS, Connection
from acp_sdk.protocol._errors import RequestError
from acp_sdk.protocol._framing import DEFAULT_MAX_FRAME_SIZE
from acp_sdk.protocol._jsonrpc import RequestId
from acp_sdk.protocol._rows import Method, MethodTable, Row, Side

if TYPE_CHECKING:
    # The models, the method rows and the handlers load on first use (a client's
    # construction, or the first call): `from acp_sdk import Client` builds no model class.
    from typing_extensions import Self, Unpack

    from acp_sdk.client._options import ClientOptions
    from acp_sdk.handlers import HandlerSet
    from acp_sdk.protocol._session_state import SessionState, ToolCallView
    from acp_sdk.schema import (
        AgentCapabilities,
        ClientCapabilities,
        ContentBlock,
        Implementation,
        InitializeRequest,
        InitializeResponse,
        PromptRequest,
        PromptResponse,
        SessionNotification,
        SessionUpdate,
        StopReason,
    )

P = TypeVar("P")
R = TypeVar("R")
H = TypeVar("H")
C = TypeVar("C", bound="BaseClient[Any]")
_DEFAULTS = Limits()
CANCEL_GRACE: Final = 5.0
"""`prompt(timeout=...)`: seconds the agent gets, after `session/cancel`, to end the turn
with stop reason `cancelled` before the turn raises `RequestTimeout`."""


def default_initialize(
    handlers: HandlerSet, client_info: Implementation | None
) -> InitializeRequest:
    """The latest protocol version the connection speaks (initialization.mdx), and
    capabilities derived from the handlers actually supplied."""
    from acp_sdk.schema import Implementation, InitializeRequest

    capabilities: ClientCapabilities = handlers.capabilities()
    return InitializeRequest(
        protocol_version=max(SUPPORTED_PROTOCOL_VERSIONS),
        client_capabilities=capabilities,
        client_info=client_info
        or Implementation(name="acp-typed", title="acp_sdk client", version=__version__),
    )


def prompt_blocks(prompt: str | ContentBlock | Sequence[ContentBlock]) -> list[ContentBlock]:
    """A prompt as content blocks: text becomes one text block."""
    from acp_sdk.schema import TextContent

    if isinstance(prompt, str):
        return [TextContent(text=prompt)]
    if isinstance(prompt, (list, tuple)):
        return list(prompt)
    single: ContentBlock = prompt  # type: ignore[assignment] # not a str, list or tuple
    return [single]


@attrs.frozen(kw_only=True, order=False)
class SpawnSpec:
    """How to start an agent subprocess, and how long closing it may take."""

    argv: Sequence[str]
    env: Mapping[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None
    stderr: Callable[[str], Any] | None = None
    close_timeout: float = 2.0
    terminate_timeout: float = 2.0

    def start(self) -> AgentProcess:
        return AgentProcess(
            self.argv, env=self.env, cwd=self.cwd, stderr=self.stderr or log_agent_stderr
        )


@attrs.frozen(kw_only=True, order=False)
class RemoteSpec:
    """Where a remote agent listens (`connect_url`): ws(s):// or http(s)://."""

    url: str
    headers: Mapping[str, str] | None = None
    timeout: float = 30.0
    max_message_size: int = DEFAULT_MAX_FRAME_SIZE

    def transport(self) -> Any:
        from acp_sdk.remote._client import transport_for  # needs the ws or http extra

        return transport_for(self.url, self.headers, self.timeout, self.max_message_size)


class BaseClient(Generic[H]):
    """The facade-independent half of a client: options, handlers, the agent process,
    and what initialize told us. `Client` and `AsyncClient` add how callers wait.

    Args:
        handlers: What the client serves to the agent (see `acp_sdk.handlers`); the
            capabilities advertised at initialize are derived from them. Without a
            permission policy, permission requests are rejected (with a warning).
        on_update: Called with each `session/update` outside a prompt turn.
        client_info: Sent at initialize (default: this SDK's name and version).
        initialize: False to skip the automatic handshake (call `initialize()` yourself).
        table: Method table (the stable protocol by default; extension rows welcome).
        request_timeout: Default seconds for requests other than prompts (None: wait).
        workers: Threads running plain (not `async`) handlers; the agent's further
            requests wait in line (it can cancel them).
        max_send_buffer: Bytes queued for the agent before calls wait for it to read.
        max_buffered_updates: Updates received but not yet consumed before the client
            stops reading (backpressure: one turn nobody iterates stalls the connection).
        track_state: Keep what sessions said: `session.state` (a `SessionState`),
            `turn.text` and `turn.tool_calls`. Off by default, because it holds every
            session's whole content in memory, which a peer decides the size of.
    """

    _driver: Any
    _remote: RemoteSpec | None = None  # set by connect_url

    def __init__(
        self,
        *,
        handlers: H | Sequence[H] | None = None,
        on_update: Callable[[SessionNotification], object] | None = None,
        client_info: Implementation | None = None,
        initialize: bool = True,
        table: MethodTable | None = None,
        request_timeout: float | None = None,
        workers: int = 8,
        max_send_buffer: int = _DEFAULTS.max_send_buffer,
        max_buffered_updates: int = _DEFAULTS.max_buffered_updates,
        track_state: bool = False,
    ) -> None:
        from acp_sdk.handlers import HandlerSet

        self._handlers = HandlerSet(handlers)  # type: ignore[arg-type] # H is a handler type
        self.track_state = track_state
        self._on_update = on_update
        self._client_info = client_info
        self._auto_initialize = initialize
        self._table = table
        self._timeout = request_timeout
        self._workers = workers
        self._limits = Limits(
            max_send_buffer=max_send_buffer, max_buffered_updates=max_buffered_updates
        )
        self._spawn: SpawnSpec | None = None
        self._streams: Any = None  # what `connect` was given
        self._process: AgentProcess | None = None
        self._connection: Connection | None = None
        self._driver = None
        self.initialize_response: InitializeResponse | None = None

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
        **options: Unpack[ClientOptions[H]],
    ) -> Self:
        """A client for an agent subprocess (started on `with`/`async with` or `open()`).

        The agent runs in its own process group, with the environment inherited unless
        `env` is given. Its stderr is always drained, line by line (a line over 16 KiB
        is cut, with a marker), to `stderr` (default: the `acp_sdk.agent.stderr`
        logger); the last 64 KiB are kept in `stderr_tail`. Closing closes the agent's
        stdin, waits `close_timeout`, sends SIGTERM to its process group, waits
        `terminate_timeout`, then SIGKILL; it always reaps, and returns within
        close_timeout + terminate_timeout + 2 seconds.
        """
        client = cls(**options)
        client._spawn = SpawnSpec(
            argv=argv_of(argv),
            env=env,
            cwd=cwd,
            stderr=stderr,
            close_timeout=close_timeout,
            terminate_timeout=terminate_timeout,
        )
        return client

    @classmethod
    def connect_url(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        max_message_size: int = DEFAULT_MAX_FRAME_SIZE,
        **options: Unpack[ClientOptions[H]],
    ) -> Self:
        """A client for a remote agent (connected on `with`/`async with` or `open()`).

        `ws://` and `wss://` URLs use WebSocket (the `ws` extra: `websockets`);
        `http://` and `https://` use Streamable HTTP with server-sent events (the `http`
        extra: `httpx`). Everything works as over stdio: sessions, turns, handlers,
        cancel. `headers` go on every request and the WebSocket upgrade (e.g.
        `{"Authorization": "Bearer ..."}`); `timeout` bounds connecting and each HTTP
        request (never an open event stream); messages over `max_message_size` bytes
        are refused. Nothing is replayed after a dropped connection: see
        `acp_sdk.client.reconnect`. The other options are `BaseClient`'s.
        """
        client = cls(**options)
        client._remote = RemoteSpec(
            url=url, headers=headers, timeout=timeout, max_message_size=max_message_size
        )
        return client

    def _attach(self, engine: Any) -> None:
        """Called by `open()` with the driver's engine: fold each session's updates into
        its `SessionState` (read through `session.state`)."""
        if self.track_state:
            engine.fold = _fold_updates
        self._handlers.bind(self._state_of)

    def _before_open(self, row: Method[Any, Any], params: Any) -> None:
        """`session/load` replays the whole history: its state starts afresh."""
        if row.wire == "session/load" and self._driver is not None:
            self._driver.engine.forget_state(params.session_id)

    def _state_of(self, session_id: str) -> SessionState:
        """The session's state (empty when not tracked or not open)."""
        if self._driver is None or not self.track_state:
            from acp_sdk.protocol._session_state import SessionState

            return SessionState()
        state: SessionState = self._driver.engine.state_of(session_id)
        return state

    def _new_connection(self) -> Connection:
        self._connection = Connection(Side.CLIENT, table=self._table)
        return self._connection

    def _initialize_request(self) -> InitializeRequest:
        return default_initialize(self._handlers, self._client_info)

    def _on_table(self, row: Method[P, R]) -> Method[P, R]:
        """The row a typed call (written against the stable rows) goes through: the
        client's table's row of the same name. So a client on another protocol table
        (`unstable.TABLE`) negotiates, gates and decodes with that protocol end to end;
        the params encode the same either way."""
        table = self._table
        if table is None:
            return row
        found = table.get(row.handled_by, row.wire, row.kind)
        # The same method in the table's schema: its params and result are that schema's.
        return cast("Method[P, R]", found) if isinstance(found, Method) else row

    def _record(self, row: Method[Any, R], result: R) -> R:
        if row.wire == "initialize":
            # The table's schema decoded it (on `unstable.TABLE`, the unstable class).
            self.initialize_response = cast("InitializeResponse", result)
        return result

    def _close_grace(self) -> tuple[float, float]:
        spec = self._spawn
        return (spec.close_timeout, spec.terminate_timeout) if spec else (2.0, 2.0)

    def _handler_for(self, row: Row) -> Callable[[Any], Any]:
        handler = self._handlers.get(row.handler_name)
        if handler is None:
            raise RequestError.method_not_found(row.wire)
        return handler

    def _notification_callbacks(self, row: Row, params: Any) -> list[Callback]:
        handler = self._handlers.get(row.handler_name)
        return [handler] if handler is not None else []

    # ------------------------------------------------------------------ state

    @property
    def connection(self) -> Connection | None:
        """The sans-IO connection underneath (None before `open`): its state, ids and
        the capabilities both sides advertised."""
        return self._connection

    @property
    def agent_capabilities(self) -> AgentCapabilities:
        """What the agent advertised at initialize (all defaults before that)."""
        from acp_sdk.schema import AgentCapabilities

        caps = self._connection.their_capabilities if self._connection else None
        # A client's peer advertised agent capabilities, decoded by the table's schema:
        # on `unstable.TABLE` the unstable class (see docs/unstable.md).
        return cast("AgentCapabilities", caps) if caps is not None else AgentCapabilities()

    @property
    def agent_info(self) -> Implementation | None:
        """The agent's name and version from its initialize answer (None before, or
        if it sent none)."""
        # `Implementation` is one class in both schemas (the unstable one reuses it).
        return self._connection.their_info if self._connection else None

    @property
    def stderr_tail(self) -> str:
        """The most recent lines of the agent's stderr (about 64 KiB; "" when not spawned)."""
        return self._process.stderr.text if self._process is not None else ""


class TurnHandle(Generic[C]):
    """A prompt turn's state, whatever the facade: its request, its sink, how it ended,
    and what it said (`text`, `tool_calls`)."""

    def __init__(
        self,
        client: C,
        params: PromptRequest,
        on_update: Callable[[Any], Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        from acp_sdk.protocol._session_state import SessionState

        self._client = client
        self.params = params
        self._on_update = on_update
        self._timeout = timeout
        self._clock: TurnClock | None = None
        self._sink: Sink | None = None
        self._pending: deque[Any] = deque()  # taken from the sink, not yet handed out
        self._texts: list[str] = []
        self._tools = SessionState()
        self.request_id: RequestId | None = None
        self.response: PromptResponse | None = None

    def _begin(self) -> TurnClock | None:
        """The turn's clock, started before the prompt is sent: its timeout covers
        sending too (an agent that does not read)."""
        if self._timeout is not None:
            self._clock = TurnClock(self._timeout, CANCEL_GRACE)
        return self._clock

    def _started(self, started: tuple[RequestId, Sink]) -> Sink:
        self.request_id, self._sink = started
        if self._clock is not None:
            self._clock.request_id = self.request_id
        return self._sink

    def _saw(self, update: SessionUpdate) -> SessionUpdate:
        """Note an update as it is handed out (for `text` and `tool_calls`)."""
        if not self._client.track_state:
            return update
        # Once per update: importing the module (loaded by now) is the cheap form of import.
        import acp_sdk.schema as m

        if isinstance(update, m.AgentMessageChunk) and isinstance(update.content, m.TextContent):
            self._texts.append(update.content.text)
        elif isinstance(update, (m.ToolCall, m.ToolCallUpdate)):
            self._tools = self._tools.apply(update)
        return update

    @property
    def text(self) -> str:
        """The agent's message text of this turn, so far (all of it once it ended).
        Needs `track_state=True` on the client."""
        _require_tracking(self._client)
        return "".join(self._texts)

    @property
    def tool_calls(self) -> Mapping[str, ToolCallView]:
        """The tool calls this turn touched, by id, each merged from its updates. Needs
        `track_state=True` on the client."""
        _require_tracking(self._client)
        return self._tools.tool_calls

    @property
    def session_id(self) -> str:
        """The id of the session this turn runs in."""
        return self.params.session_id

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the turn ended (`end_turn`, `cancelled`, ...); None while it runs."""
        return self.response.stop_reason if self.response is not None else None

    @property
    def received(self) -> int:
        """Updates routed to this turn so far (counted as they arrive)."""
        return self._sink.received if self._sink is not None else 0

    def _ended(self, outcome: Outcome[Any] | None) -> None:
        """The turn ended: keep the response, or raise how it failed (again on a second
        iteration: a finished turn ends the same way every time, without replay)."""
        assert outcome is not None
        if outcome.error is not None:
            raise outcome.error
        self.response = outcome.value


class SessionHandle(Generic[C, R]):
    """A session handle: its client, its id, and the response that opened it
    (`NewSessionResponse`, `LoadSessionResponse` or `ResumeSessionResponse`)."""

    def __init__(self, client: C, session_id: str, response: R) -> None:
        self.client = client
        self.session_id = session_id
        self.response = response

    @property
    def state(self) -> SessionState:
        """The session as every update received so far left it: messages, merged tool
        calls, plan, mode, commands, config options, usage, title (see `SessionState`).
        Updated before an update is handed to you, so a consumer or `on_update` sees it
        included; a `load_session` replay builds it too. Needs `track_state=True` on
        the client."""
        _require_tracking(self.client)
        return self.client._state_of(self.session_id)


def session_id_of(response: Any, params: Any) -> str:
    session_id: str = getattr(response, "session_id", None) or params.session_id
    return session_id


def prompt_request(
    session_id: str, prompt: str | ContentBlock | Sequence[ContentBlock]
) -> PromptRequest:
    from acp_sdk.schema import PromptRequest

    return PromptRequest(session_id=session_id, prompt=prompt_blocks(prompt))


def _fold_updates(state: SessionState | None, updates: list[Any]) -> SessionState:
    from acp_sdk.protocol._session_state import SessionState

    return (state if state is not None else SessionState()).apply_all(updates)


def _require_tracking(client: BaseClient[Any]) -> None:
    if not client.track_state:
        raise RuntimeError(
            "session state is not kept: create the client with track_state=True "
            "(it holds every session's content in memory)"
        )
