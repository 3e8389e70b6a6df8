"""What both client facades share besides the driver: set-up, defaults, turns' state.

No protocol rule lives here (those are the connection's) and no endpoint rule (the
engine's); only the choices both facades make the same way: the initialize request they
send by default, which handler serves a request, which callbacks a notification runs,
and the state of sessions and turns that does not depend on how a caller waits.
"""

from __future__ import annotations

import io
import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeVar, cast

import attrs

from acp_sdk._driver.engine import Callback
from acp_sdk._driver.process import AgentProcess, argv_of, log_agent_stderr
from acp_sdk._driver.turn import Sink
from acp_sdk._driver.vocabulary import Limits, Outcome
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
MAX_TURN_TEXT: Final = 4 << 20
"""Default `max_turn_text`: characters of agent message text a turn keeps for `text`."""
MAX_TURN_TOOL_CALLS: Final = 4096
"""Tool calls a turn keeps for `tool_calls`; later new ids are dropped (`truncated`)."""
INITIALIZE_TIMEOUT: Final = 60.0
"""Default `initialize_timeout`: seconds `initialize` may take (an agent that installs
itself first, `npx`/`uvx`, needs some), so a program that is not an agent, or one that
hangs, fails instead of waiting forever."""
_SESSION_ENDS: Final = frozenset({"session/close", "session/delete"})
"""Answered with success, these drop the session's state."""


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
        request_timeout: Default seconds for requests other than prompts and
            `initialize` (None: wait).
        initialize_timeout: Seconds `initialize` may take (default 60; None: wait). Its
            `RequestTimeout` names `initialize` and what the agent printed on stdout
            that was not JSON-RPC, if anything.
        workers: Threads running plain (not `async`) handlers; the agent's further
            requests wait in line (it can cancel them).
        max_send_buffer: Bytes queued for the agent before calls wait for it to read.
        max_buffered_updates: Updates received but not yet consumed before the client
            stops reading (backpressure: one turn nobody iterates stalls the connection).
        track_state: Keep each session's whole state: `session.state` (a
            `SessionState`). Off by default, because it holds every session's whole
            content in memory, which a peer decides the size of. (`turn.text` and
            `turn.tool_calls` need no flag: each turn keeps its own, bounded.)
        max_turn_text: Characters of agent message text a turn keeps for `turn.text`
            (default 4 Mi); past them `turn.truncated` is True.
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
        initialize_timeout: float | None = INITIALIZE_TIMEOUT,
        workers: int = 8,
        max_send_buffer: int = _DEFAULTS.max_send_buffer,
        max_buffered_updates: int = _DEFAULTS.max_buffered_updates,
        track_state: bool = False,
        max_turn_text: int = MAX_TURN_TEXT,
    ) -> None:
        from acp_sdk.handlers import HandlerSet

        self._handlers = HandlerSet(handlers)  # type: ignore[arg-type] # H is a handler type
        self._callbacks_of: dict[str, tuple[Callback, ...]] = {}
        self.track_state = track_state
        self.max_turn_text = max_turn_text
        self._on_update = on_update
        self._client_info = client_info
        self._auto_initialize = initialize
        self._table = table
        self._timeout = request_timeout
        self._initialize_timeout = initialize_timeout
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

    def _abandon_steps(self) -> Iterator[float]:
        """Sleeps (yielded) after `open` failed before a driver ran: no driver, and a
        started agent is stopped (`AgentProcess.abandon_steps`)."""
        self._driver = None
        if self._process is not None and self._spawn is not None:
            yield from self._process.abandon_steps(self._spawn.terminate_timeout)

    def _driver_or_raise(self) -> Any:
        raise NotImplementedError  # each facade's, typed with its driver

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

    def _answered(self, row: Row, params: Any, result: R) -> R:
        """After a call's success answer: a closed or deleted session's state is dropped,
        so a client that has seen many sessions holds the state of the open ones only."""
        if row.wire in _SESSION_ENDS and self._driver is not None:
            self._driver.engine.forget_state(params.session_id)
        return result

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

    def _timeout_of(self, row: Row) -> float | None:
        """The default timeout of a typed call: `initialize` has its own."""
        return self._initialize_timeout if row.wire == "initialize" else self._timeout

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

    def _notification_callbacks(self, row: Row, params: Any) -> Sequence[Callback]:
        # Once per update: the handler set never changes, so each row's answer is kept.
        found = self._callbacks_of.get(row.handler_name)
        if found is None:
            handler = self._handlers.get(row.handler_name)
            found = self._callbacks_of[row.handler_name] = () if handler is None else (handler,)
        return found

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
    """A prompt turn's state, whatever the facade: its request, its sink in the engine
    (updates, outcome, clock), and what it said (`text`, `tool_calls`).

    Constructing one starts the turn: the prompt is queued before the constructor
    returns, so a `cancel()` at any moment after it reaches the agent after the prompt.
    """

    def __init__(
        self,
        client: C,
        params: PromptRequest,
        on_update: Callable[[Any], Any] | None = None,
        *,
        timeout: float | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        from acp_sdk.methods import SESSION_PROMPT

        if _chunk_class is None:
            _load_kinds()
        self._client = client
        self.params = params
        self._on_update = on_update
        engine = client._driver_or_raise().engine
        self._engine = engine
        # The turn's clock (`_driver/turn.py`) counts from here, queueing included.
        self._sink: Sink = engine.begin_turn(
            client._on_table(SESSION_PROMPT), params, timeout=timeout, idle_timeout=idle_timeout
        )
        self.request_id: RequestId = self._sink.request_id
        self._pending: deque[Any] = deque()  # taken from the sink, not yet handed out
        self._text = io.StringIO()  # not a list of chunks: 1-character chunks cost 50x
        self._text_left = client.max_turn_text
        self._tools: dict[str, ToolCallView] = {}
        self._truncated = False
        self.response: PromptResponse | None = None

    def _saw(self, update: SessionUpdate) -> SessionUpdate:
        """Note an update as it is handed out: this turn's `text` and `tool_calls`, and
        the session's state (the caller's view: exactly the updates handed out)."""
        # Once per update, on the streaming path: module globals, the common case inline.
        seen: Any = update  # the classes are module globals of type Any (loaded lazily)
        if isinstance(seen, _chunk_class):
            content: Any = seen.content
            if isinstance(content, _text_class):
                text: str = content.text
                if len(text) <= self._text_left:
                    self._text.write(text)
                    self._text_left -= len(text)
                else:
                    self._keep_text(text)
        elif isinstance(seen, _tool_classes):
            self._keep_tool_call(seen)
        if self._engine.fold is not None:
            self._engine.handed_out(self.params.session_id, update)
        return update

    def _keep_text(self, text: str) -> None:
        if len(text) > self._text_left:
            text = text[: self._text_left]
            self._truncated = True
        if text:
            self._text.write(text)
            self._text_left -= len(text)

    def _keep_tool_call(self, update: Any) -> None:
        from acp_sdk.protocol._session_state import ToolCallView, _updated, _view_of
        from acp_sdk.schema import ToolCall

        known = self._tools.get(update.tool_call_id)
        if known is None and len(self._tools) >= MAX_TURN_TOOL_CALLS:
            self._truncated = True
            return
        if isinstance(update, ToolCall):
            self._tools[update.tool_call_id] = _view_of(update)
        else:
            base = ToolCallView(tool_call_id=update.tool_call_id) if known is None else known
            self._tools[update.tool_call_id] = _updated(base, update)

    @property
    def text(self) -> str:
        """The agent's message text of this turn, as handed out so far (all of it once
        the turn was iterated to its end or waited for); at most `max_turn_text`
        characters (see `truncated`). No flag needed."""
        return self._text.getvalue()

    @property
    def tool_calls(self) -> Mapping[str, ToolCallView]:
        """The tool calls this turn touched, by id, each merged from the updates handed
        out so far (at most 4096; see `truncated`). No flag needed."""
        return MappingProxyType(self._tools)

    @property
    def truncated(self) -> bool:
        """True once `text` reached `max_turn_text` (or `tool_calls` its cap) and the
        rest was not kept. Iterating still hands out every update."""
        return self._truncated

    @property
    def timed_out(self) -> Literal["timeout", "idle_timeout"] | None:
        """Which limit made the client cancel the turn: "timeout" (the whole turn) or
        "idle_timeout" (silence between updates); None when neither passed. A turn the
        agent then ended has `stop_reason == "cancelled"`; one it did not end within the
        grace raised `RequestTimeout`."""
        reason = self._sink.timed_out
        return "timeout" if reason == "timeout" else "idle_timeout" if reason else None

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
        return self._sink.received

    @property
    def done(self) -> bool:
        """True once the agent ended the turn (or it failed); updates may still wait to
        be handed out."""
        return self._sink.outcome is not None

    def _ended(self, outcome: Outcome[Any] | None) -> None:
        """The turn ended: keep the response, or raise how it failed (again on a second
        iteration: a finished turn ends the same way every time, without replay)."""
        assert outcome is not None
        if outcome.error is not None:
            raise outcome.error
        self.response = outcome.value


_chunk_class: Any = None
_text_class: Any = None
_tool_classes: Any = ()


def _load_kinds() -> None:
    """The update classes `_saw` checks, loaded with the first turn (the models load
    lazily: `from acp_sdk import Client` builds none)."""
    global _chunk_class, _text_class, _tool_classes
    import acp_sdk.schema as m

    _chunk_class, _text_class = m.AgentMessageChunk, m.TextContent
    _tool_classes = (m.ToolCall, m.ToolCallUpdate)


class SessionHandle(Generic[C, R]):
    """A session handle: its client, its id, and the response that opened it
    (`NewSessionResponse`, `LoadSessionResponse` or `ResumeSessionResponse`)."""

    def __init__(self, client: C, session_id: str, response: R) -> None:
        self.client = client
        self.session_id = session_id
        self.response = response

    @property
    def state(self) -> SessionState:
        """The session as the updates handed out so far left it: messages, merged tool
        calls, plan, mode, commands, config options, usage, title (see `SessionState`).

        The caller's view: an update is folded in as it is handed to you (by iterating
        a turn, or to `on_update`), so `for update in turn: render(session.state)` sees
        each step once, and never an update you have not been handed yet. Updates with
        nobody to take them (no running turn, no `on_update`) are folded on arrival; a
        `load_session` replay builds it too. Needs `track_state=True` on the client."""
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
