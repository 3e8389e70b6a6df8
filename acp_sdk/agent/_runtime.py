"""The agent side: subclass `Agent`, override what you support, run it over stdio.

    class Echo(Agent):
        async def new_session(self, params: NewSessionRequest, ctx: AgentContext
        ) -> NewSessionResponse:
            return NewSessionResponse(session_id="s1")

        async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
            await ctx.send_update(params.session_id, AgentMessageChunk(content=params.prompt[0]))
            return PromptResponse(stop_reason="end_turn")

    run_agent(Echo())

A method you do not override answers -32601 (method not found), never a fake success,
except `session/new`: without it the runtime opens sessions itself (a fresh id each,
kept for the connection; with a store, kept in the store). The capabilities in the
initialize response follow from what you override: `load_session`
advertises `loadSession`, `list_sessions` advertises `sessionCapabilities.list`, and so on.
`session/cancel` cancels the running `prompt` task; the turn then ends with stop reason
`cancelled`, whatever the handler does (the connection enforces it).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeAlias, TypeVar, overload

from acp_sdk._driver import flows
from acp_sdk._driver.aio import AsyncByteReader, AsyncByteWriter, AsyncDriver
from acp_sdk._driver.engine import Engine
from acp_sdk._driver.turn import deadline_after
from acp_sdk._driver.vocabulary import Limits
from acp_sdk.agent import _keeper, _stdio
from acp_sdk.agent._session import SessionHandle
from acp_sdk.agent._store import SessionStore
from acp_sdk.protocol._connection import Connection
from acp_sdk.protocol._errors import RequestError
from acp_sdk.protocol._generated.agent_calls import AgentCalls
from acp_sdk.protocol._generated.methods import SESSION_UPDATE
from acp_sdk.protocol._rows import Method, MethodTable, Notification, Row, Side
from acp_sdk.schema import (
    AgentAuthCapabilities,
    AgentCapabilities,
    AuthenticateRequest,
    AuthenticateResponse,
    AuthMethod,
    CancelNotification,
    ClientCapabilities,
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    LogoutCapabilities,
    LogoutRequest,
    LogoutResponse,
    McpCapabilities,
    NewSessionRequest,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptRequest,
    PromptResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionListCapabilities,
    SessionNotification,
    SessionResumeCapabilities,
    SessionUpdate,
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
)

if TYPE_CHECKING:
    from acp_sdk.protocol._session_state import SessionState

__all__ = [
    "Agent",
    "AgentContext",
    "Extension",
    "ExtensionHandler",
    "extension",
    "run_agent",
    "serve_agent",
]

P = TypeVar("P")
R = TypeVar("R")

log = logging.getLogger("acp_sdk.agent")
_SESSION_ENDS: Final = frozenset({"session/close", "session/delete"})
_DEFAULT_SESSIONS: Final = frozenset({"new_session", "prompt"})
ANSWER_GRACE: Final = 5.0
"""Seconds the handlers still running at the client's end of input get to answer."""


class AgentContext(AgentCalls):
    """What an agent method can do besides returning: stream updates, call the client.

    Every typed call (`read_text_file`, `request_permission`, `create_terminal`, ...)
    checks the client's advertised capabilities first and raises
    `CapabilityNotNegotiated` without sending anything when they are missing.
    """

    __slots__ = ("_driver", "_keeper", "_remembered")

    def __init__(self, driver: AsyncDriver, keeper: _keeper.SessionKeeper | None = None) -> None:
        self._driver = driver
        self._keeper = keeper
        # Per session: its remembered permission answers (see acp_sdk.agent._session).
        self._remembered: dict[str, dict[str, PermissionOption]] = {}

    def session(self, session_id: str) -> SessionHandle:
        """A handle on one session: `say`, `think`, `plan`, `send`, and `tool_call`
        blocks that always finish (see `SessionHandle`)."""
        return SessionHandle(self, session_id)

    @property
    def client_capabilities(self) -> ClientCapabilities:
        """What the client advertised at initialize (empty until then)."""
        caps = self._driver.engine.connection.their_capabilities
        return caps if isinstance(caps, ClientCapabilities) else ClientCapabilities()

    @property
    def client_info(self) -> Implementation | None:
        """The client's name and version, if it sent them at initialize."""
        info = self._driver.engine.connection.their_info
        return info if isinstance(info, Implementation) else None

    def negotiate_version(self, requested: int) -> int:
        """The protocol version to answer `initialize` with (the connection's rule)."""
        return self._driver.engine.connection.negotiate_version(requested)

    async def send_update(self, session_id: str, update: SessionUpdate) -> None:
        """Stream one `session/update` to the client.

        Waits while more than `max_send_buffer` bytes wait for the client to read them;
        raises `ConnectionClosed` once the client is gone (the runtime then ends the
        turn quietly).
        """
        # What `session_update` does, one call shorter (the streaming hot path).
        notification = SessionNotification(session_id=session_id, update=update)
        if self._keeper is not None:  # kept before it is sent: the client never sees more
            await self._keeper.send(notification)
            return
        await self._driver.notify(SESSION_UPDATE, notification)

    async def request(self, row: Method[P, R], params: P) -> R:
        """Call any method row the client handles, including extension rows.

        Args:
            row: The method (`acp_sdk.methods.FS_READ_TEXT_FILE`, or a
                `Method.extension(...)` row of the connection's table).
            params: Its params, of the row's params type.

        Returns:
            The client's result, decoded as the row's result type.

        Raises:
            CapabilityNotNegotiated: The row is gated and the client did not advertise it.
            RequestError: The client answered with an error.
            ConnectionClosed: The client went away first.
        """
        if self._keeper is not None:  # after the updates sent before it
            await self._keeper.flushed()
        result: R = await self._driver.call(row, params)
        return result

    async def notify(self, row: Notification[P], params: P) -> None:
        """Send a notification row the client handles (no answer comes back).

        Raises:
            CapabilityNotNegotiated: The row is gated and the client did not advertise it.
            ConnectionClosed: The client went away first.
        """
        if self._keeper is not None:
            if row.wire == SESSION_UPDATE.wire:
                await self._keeper.send(params)
                return
            await self._keeper.flushed()
        await self._driver.notify(row, params)

    # -------------------------------------------------------------- the session store

    @property
    def store(self) -> SessionStore | None:
        """The session store the agent runs with (`run_agent(agent, store=...)`), or None."""
        return None if self._keeper is None else self._keeper.store

    async def history(self, session_id: str) -> SessionState:
        """The session as the store recorded it: every prompt and update so far (the
        running turn's prompt included), folded into a `SessionState` (messages with
        roles, merged tool calls, plan, mode), to rebuild the model's context from.

        Raises:
            RuntimeError: The agent runs without a store.
        """
        return await _keeper.history(self._keeper, session_id)

    async def load_data(self, session_id: str) -> Any:
        """The JSON value last saved for the session with `save_data`, or None.

        Raises:
            RuntimeError: The agent runs without a store.
        """
        return await _keeper.require_store(self._keeper).load_data(session_id)

    async def save_data(self, session_id: str, value: Any) -> None:
        """Keep one JSON value for the session in the store (its own conversation
        format, model settings), replacing the last one; deleted with the session.

        Raises:
            RuntimeError: The agent runs without a store.
        """
        await _keeper.require_store(self._keeper).save_data(session_id, value)

    async def _request(self, row: Method[Any, Any], params: Any) -> Any:
        return await self.request(row, params)

    async def _notify(self, row: Notification[Any], params: Any) -> None:
        await self.notify(row, params)


ExtensionHandler: TypeAlias = Callable[[Any, AgentContext], Awaitable[object]]
"""An extension method's handler: `async def handler(params, ctx) -> result`.

Its params are the extension row's params type, decoded; its result is encoded with the
row's result type. A plain (not `async`) function, or one without the `ctx` parameter,
is a type error."""


class Extension:
    """An extension row paired with its handler: make one with `extension(ROW, handler)`
    and pass a list of them as `run_agent(..., extensions=[...])`."""

    __slots__ = ("handler", "row")

    def __init__(self, row: Row, handler: ExtensionHandler) -> None:
        self.row = row
        self.handler = handler


@overload
def extension(
    row: Method[P, R], handler: Callable[[P, AgentContext], Awaitable[R]]
) -> Extension: ...
@overload
def extension(
    row: Notification[P], handler: Callable[[P, AgentContext], Awaitable[None]]
) -> Extension: ...
def extension(row: Row, handler: ExtensionHandler) -> Extension:
    """Pair an extension row with its handler, so a type checker compares them: the
    handler takes the row's params type (and the context) and returns its result type.

        ECHO = Method.extension("_acme/echo", handled_by=Side.AGENT,
                                params_type=EchoParams, result_type=EchoResult)

        async def echo(params: EchoParams, ctx: AgentContext) -> EchoResult: ...

        run_agent(MyAgent(), extensions=[extension(ECHO, echo)])

    Rows the agent's table lacks are added to it.
    """
    return Extension(row, handler)


Extensions: TypeAlias = Sequence[Extension] | Mapping[str, ExtensionHandler]


def _bind_extensions(
    table: MethodTable | None, extensions: Extensions | None
) -> tuple[MethodTable | None, dict[str, ExtensionHandler]]:
    """The table to serve (extended with paired rows it lacks) and handlers by name."""
    if extensions is None:
        return table, {}
    if isinstance(extensions, Mapping):
        return table, dict(extensions)
    paired = list(extensions)
    if table is None:
        from acp_sdk.methods import TABLE

        table = TABLE
    missing = [pair.row for pair in paired if pair.row not in table.rows]
    if missing:
        table = table.extend(missing)
    return table, {pair.row.handler_name: pair.handler for pair in paired}


class Agent:
    """Base class of an ACP agent. Override the methods you support.

    Class attributes advertise what methods cannot express: `prompt_capabilities`,
    `mcp_capabilities`, `auth_methods`, `agent_info`, `additional_directories`.
    """

    prompt_capabilities: ClassVar[PromptCapabilities] = PromptCapabilities()
    mcp_capabilities: ClassVar[McpCapabilities] = McpCapabilities()
    auth_methods: ClassVar[Sequence[AuthMethod]] = ()
    agent_info: ClassVar[Implementation | None] = None
    additional_directories: ClassVar[bool] = False
    protocol_versions: ClassVar[Sequence[int]] = (1,)

    def _overrides(self, name: str) -> bool:
        return getattr(type(self), name) is not getattr(Agent, name)

    def capabilities(self) -> AgentCapabilities:
        """What this agent advertises, derived from the methods it overrides."""

        def present(name: str, value: Any) -> Any:
            return value if self._overrides(name) else None

        return AgentCapabilities(
            load_session=self._overrides("load_session"),
            prompt_capabilities=self.prompt_capabilities,
            mcp_capabilities=self.mcp_capabilities,
            session_capabilities=SessionCapabilities(
                list=present("list_sessions", SessionListCapabilities()),
                delete=present("delete_session", SessionDeleteCapabilities()),
                resume=present("resume_session", SessionResumeCapabilities()),
                close=present("close_session", SessionCloseCapabilities()),
                additional_directories=(
                    SessionAdditionalDirectoriesCapabilities()
                    if self.additional_directories
                    else None
                ),
            ),
            auth=AgentAuthCapabilities(logout=present("logout", LogoutCapabilities())),
        )

    async def initialize(self, params: InitializeRequest, ctx: AgentContext) -> InitializeResponse:
        """Answer the handshake; the default advertises `capabilities()`."""
        return InitializeResponse(
            protocol_version=ctx.negotiate_version(params.protocol_version),
            agent_capabilities=self.capabilities(),
            auth_methods=list(self.auth_methods),
            agent_info=self.agent_info,
        )

    async def authenticate(
        self, params: AuthenticateRequest, ctx: AgentContext
    ) -> AuthenticateResponse:
        """`authenticate`: log the client in with one of `auth_methods` (by `params.method_id`).

        Override when the agent advertises auth methods; raise
        `RequestError.auth_required()` from other methods until it succeeds."""
        raise RequestError.method_not_found("authenticate")

    async def logout(self, params: LogoutRequest, ctx: AgentContext) -> LogoutResponse:
        """`logout`: end the authenticated state. Overriding it advertises `auth.logout`."""
        raise RequestError.method_not_found("logout")

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        """`session/new`: create a session in `params.cwd` (with `params.mcp_servers`).

        Returns the new session's id (and optionally its modes and config options).
        Not overridden, the runtime answers it: a fresh unique id (`sess_<hex>`), kept
        in memory for the connection, so a prompt naming another session is -32002
        (unless you override `load_session` or `resume_session`); with a store, the
        store keeps it (see `run_agent`)."""
        raise RequestError.method_not_found("session/new")

    async def load_session(
        self, params: LoadSessionRequest, ctx: AgentContext
    ) -> LoadSessionResponse:
        """`session/load`: replay a stored session to the client, then answer.

        Stream its history with `ctx.send_update` before returning. Overriding it
        advertises `loadSession`."""
        raise RequestError.method_not_found("session/load")

    async def list_sessions(
        self, params: ListSessionsRequest, ctx: AgentContext
    ) -> ListSessionsResponse:
        """`session/list`: the sessions the client may load or resume (paged by `cursor`).

        Overriding it advertises `sessionCapabilities.list`."""
        raise RequestError.method_not_found("session/list")

    async def delete_session(
        self, params: DeleteSessionRequest, ctx: AgentContext
    ) -> DeleteSessionResponse:
        """`session/delete`: forget a stored session. Overriding it advertises
        `sessionCapabilities.delete`."""
        raise RequestError.method_not_found("session/delete")

    async def resume_session(
        self, params: ResumeSessionRequest, ctx: AgentContext
    ) -> ResumeSessionResponse:
        """`session/resume`: continue a session without replaying its history.

        Overriding it advertises `sessionCapabilities.resume`."""
        raise RequestError.method_not_found("session/resume")

    async def close_session(
        self, params: CloseSessionRequest, ctx: AgentContext
    ) -> CloseSessionResponse:
        """`session/close`: release a session's resources. Overriding it advertises
        `sessionCapabilities.close`."""
        raise RequestError.method_not_found("session/close")

    async def set_mode(
        self, params: SetSessionModeRequest, ctx: AgentContext
    ) -> SetSessionModeResponse:
        """`session/set_mode`: switch the session to one of the modes it offered."""
        raise RequestError.method_not_found("session/set_mode")

    async def set_config_option(
        self, params: SetSessionConfigOptionRequest, ctx: AgentContext
    ) -> SetSessionConfigOptionResponse:
        """`session/set_config_option`: change one of the session's config options;
        answer with every option's new state."""
        raise RequestError.method_not_found("session/set_config_option")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        """`session/prompt`: run one turn of the conversation.

        Stream progress with `ctx.send_update(session_id, update)` (message chunks, tool
        calls, plans), call the client through `ctx` (files, terminals, permission),
        and return the stop reason. On `session/cancel` the task running this method
        is cancelled; the client then receives stop reason `cancelled`."""
        raise RequestError.method_not_found("session/prompt")

    async def cancel(self, params: CancelNotification, ctx: AgentContext) -> None:
        """Called on `session/cancel`, after the running prompt task was cancelled."""


async def serve_agent(
    agent: Agent,
    reader: AsyncByteReader,
    writer: AsyncByteWriter,
    *,
    table: MethodTable | None = None,
    extensions: Extensions | None = None,
    max_send_buffer: int = Limits().max_send_buffer,
    store: SessionStore | None = None,
) -> None:
    """Serve `agent` over a pair of asyncio byte streams until the client hangs up.

    When the client ends its input, every running handler is cancelled (a prompt turn's
    `ctx.send_update` then raises `ConnectionClosed`, which ends the turn quietly), the
    answers still owed are flushed for a few seconds, and this returns.

    Args:
        extensions: `[extension(ROW, handler), ...]` (rows the table lacks are added),
            or handlers for extension rows of `table` by handler name.
        max_send_buffer: Bytes queued for the client before `send_update` and calls wait
            for it to read (memory stays bounded when the client stops reading).
        store: Record sessions there and serve the session methods the agent does not
            override (see `run_agent`). One store may serve many connections; it is
            left open.
    """
    table, handlers = _bind_extensions(table, extensions)
    connection = Connection(Side.AGENT, table=table, protocol_versions=agent.protocol_versions)
    context: list[AgentContext] = []
    keeper: list[_keeper.SessionKeeper] = []

    async def call_agent(row: Row, params: Any) -> Any:
        if row.handler_name in handlers:
            return await handlers[row.handler_name](params, context[0])
        method: ExtensionHandler | None = getattr(agent, row.handler_name, None)
        if method is None or not callable(method):
            raise RequestError.method_not_found(row.wire)
        return await method(params, context[0])

    async def serve_around(row: Row, params: Any) -> Any:
        try:
            if keeper:
                return await keeper[0].serve(row, params, call_agent)
            return await call_agent(row, params)
        finally:
            if row.wire in _SESSION_ENDS:
                # The session's remembered permission answers go with it (bounded memory).
                context[0]._remembered.pop(str(getattr(params, "session_id", "")), None)

    sessions = (
        _keeper.ConnectionSessions(agent)
        if store is None and not agent._overrides("new_session")
        else None
    )

    def serve(row: Row, params: Any) -> Any:
        # Most requests: the handler's own coroutine, for the driver to await, rather
        # than two of ours awaiting it (two coroutine frames fewer per request). An
        # exception raised here is answered as one raised in the coroutine would be.
        if keeper or row.wire in _SESSION_ENDS:
            return serve_around(row, params)
        name = row.handler_name
        if sessions is not None and name in _DEFAULT_SESSIONS:
            if name == "new_session":
                return sessions.new_session(row, params)
            sessions.check_prompt(params)
        if name in handlers:
            outcome = handlers[name](params, context[0])
        else:
            method: ExtensionHandler | None = getattr(agent, name, None)
            if method is None or not callable(method):
                raise RequestError.method_not_found(row.wire)
            outcome = method(params, context[0])
        return outcome if inspect.isawaitable(outcome) else _awaited(outcome)

    def callbacks(row: Row, params: Any) -> list[Callable[[Any], Any]]:
        handler = handlers.get(row.handler_name) or getattr(agent, row.handler_name, None)
        if handler is None or not callable(handler):
            return []
        return [lambda p: handler(p, context[0])]

    driver = AsyncDriver(
        connection,
        reader,
        writer,
        serve=serve,
        notification_callbacks=callbacks,
        limits=Limits(max_send_buffer=max_send_buffer),
    )
    if store is not None:
        keeper.append(_keeper.SessionKeeper(store, agent, driver))
    context.append(AgentContext(driver, keeper[0] if keeper else None))
    driver.start()
    try:
        await driver.run(_end_of_service(driver.engine, ANSWER_GRACE))
    finally:
        if keeper:
            await keeper[0].aclose()
        await driver.aclose(reason="the client closed the connection")


async def _awaited(outcome: Any) -> Any:
    """`await outcome`, as `call_agent` does: a handler that is not `async` fails the same
    way (TypeError, answered as an internal error), never succeeds."""
    return await outcome


def _end_of_service(engine: Engine[Any], grace: float) -> flows.Flow[None]:
    """`flows.end_of_service`, but waiting for the end of input on the engine's `clock`
    signal rather than `may_read`. Every answer notifies `may_read`, which woke this
    task once per request (a loop iteration, a future and a check each, about a tenth
    of a no-op request's cost in the agent). The end of input and every close notify all
    of the engine's signals; `clock` otherwise only marks a clocked turn beginning, and
    an agent begins none."""
    yield flows.Until(engine.peer_gone, engine.clock, None)
    yield flows.Until(lambda: engine.serving == 0, engine.may_read, deadline_after(grace))


def run_agent(
    agent: Agent,
    *,
    table: MethodTable | None = None,
    extensions: Extensions | None = None,
    max_send_buffer: int = Limits().max_send_buffer,
    store: SessionStore | None = None,
) -> None:
    """Serve `agent` over this process's stdin/stdout until stdin closes.

    While it runs, stdout carries protocol frames only: `print` and logging that write to
    `sys.stdout` (or file descriptor 1) go to stderr instead. Returns (exit code 0) when
    the client ends its input, after cancelling running turns (see `serve_agent`).

    Args:
        table: A method table with extension rows (`TABLE.extend([...])`).
        extensions: `[extension(ROW, handler), ...]`, type-checked pairs (rows the
            table lacks are added); or handlers by handler name,
            `{ROW.handler_name: handler}`, for the rows of `table`.
        max_send_buffer: Bytes queued for the client before `send_update` waits.
        store: A `SessionStore` (`SqliteSessionStore(path)`, `MemorySessionStore()`):
            every prompt and update is recorded there, per session, before it is sent,
            and the runtime serves `session/new`, `session/load` (replay, then answer),
            `session/list`, `session/resume`, `session/close` and `session/delete` for
            the agent, unless it overrides them, and advertises them. Closed on return.
    """
    protocol_out = _stdio.reserve_stdout_for_protocol()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_stdio(agent, protocol_out, table, extensions, max_send_buffer, store))


async def _serve_stdio(
    agent: Agent,
    out_fd: int,
    table: MethodTable | None,
    extensions: Extensions | None,
    max_send_buffer: int,
    store: SessionStore | None,
) -> None:
    reader, writer, transports = await _stdio.open_fd_streams(sys.stdin.fileno(), out_fd)
    try:
        await serve_agent(
            agent,
            reader,
            writer,
            table=table,
            extensions=extensions,
            max_send_buffer=max_send_buffer,
            store=store,
        )
    finally:
        if store is not None:
            await store.aclose()
        for transport in transports:
            transport.close()
        if _stdio.fd_is_open(out_fd):
            os.close(out_fd)
