"""What the agent runtime does with a session store (`run_agent(agent, store=...)`).

One `SessionKeeper` per connection, over a store that may be shared between
connections. It:

- records, per session and in order, every prompt (as the user's message:
  one `user_message_chunk` per content block, before the agent's `prompt` runs) and every
  `session/update` the agent sends, each one *before* it is sent, so nothing the client
  saw can be missing after a crash (write-ahead); updates the runtime replays for
  `session/load` are not recorded again;
- serves the session methods the agent does not override: `session/new` (a fresh
  random id), `session/load` (replays every recorded update as `session/update`, then
  answers), `session/list` (cwd filter, cursor pages, title, `updatedAt`),
  `session/resume` (no replay), `session/close` (cancels the session's running turn as
  `session/cancel` does, waits for it, then answers) and `session/delete` (idempotent);
  a load, resume or close of an id the store does not hold is error -32002 (resource
  not found), never a fresh session;
- adds the capabilities of what it serves to the `initialize` answer, for the rows the
  connection's method table has (so the stable and the unstable table alike).

The write-ahead outbox. `send_update` hands the update to the keeper and returns at
once; one flusher task (owned by the keeper, which stops it when the connection
closes) takes everything queued meanwhile, appends it to the store (one `append` per session:
one commit for the batch), and only then queues the notifications, in order, to the
driver. So the agent streams at the speed of the wire while the store commits in
batches, and a byte reaches the client only after its update is durable. Anything
else the agent sends must not overtake updates still in the outbox: the answer to
every request, `ctx.request` (a permission question after its tool call) and other
notifications first wait until the updates queued before them are out (`flushed`; only
those, so one session streaming without pause holds back nobody else). At most `WINDOW`
updates wait; a sender past it waits for the flusher (the client's backpressure
reaches the agent through it).

The agent reads its sessions back through `AgentContext.history`, `load_data` and
`save_data`, which call the functions at the end of this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

import attrs
import orjson

from acp_sdk.agent._store import (
    SessionStore,
    StoredSession,
    decode_cursor,
    encode_cursor,
    mint_session_id,
    now,
)
from acp_sdk.protocol._codec import decode, to_json_value
from acp_sdk.protocol._errors import ConnectionClosed, DecodeError, RequestError
from acp_sdk.protocol._rows import Kind, Notification, Row, Side

if TYPE_CHECKING:
    from acp_sdk._driver.aio import AsyncDriver
    from acp_sdk.protocol._session_state import SessionState

__all__ = ["ConnectionSessions", "SessionKeeper"]

log = logging.getLogger("acp_sdk.agent")

RESOURCE_NOT_FOUND: Final = -32002
REPLAY_CHUNK: Final = 1000  # updates read from the store at a time while replaying
CLOSE_WAIT: Final = 5.0  # seconds session/close waits for a cancelled turn to end
WINDOW: Final = 1024  # updates queued in the outbox before `send_update` waits

# The session methods the keeper serves when the agent does not override them, and the
# capability each one advertises (None: none to advertise).
_SERVED: Final = {
    "new_session": None,
    "load_session": "load_session",
    "list_sessions": "list",
    "resume_session": "resume",
    "close_session": "close",
    "delete_session": "delete",
}

CallAgent = Callable[[Row, Any], Awaitable[Any]]


def _not_found(session_id: str) -> RequestError:
    return RequestError(RESOURCE_NOT_FOUND, "Session not found", {"sessionId": session_id})


def _models(row: Row) -> Any:
    """The namespace of the row's models (stable or unstable): answers are built from it."""
    return sys.modules[row.params_type.__module__]


class SessionKeeper:
    """Records a connection's sessions in a store and serves the session methods."""

    __slots__ = (
        "_agent",
        "_driver",
        "_error",
        "_failed",
        "_flusher",
        "_outbox",
        "_queued",
        "_replaying",
        "_room",
        "_running",
        "_sent",
        "_update_row",
        "_waiters",
        "store",
    )

    def __init__(self, store: SessionStore, agent: Any, driver: AsyncDriver) -> None:
        self.store = store
        self._agent = agent
        self._driver = driver
        self._running: dict[str, set[asyncio.Task[Any]]] = {}  # prompt turns by session
        self._replaying: set[str] = set()  # sessions the agent replays itself (its load)
        self._failed = False  # a failed write was logged (once)
        self._outbox: list[tuple[str, Any, Any]] = []  # (session id, notification, JSON)
        self._flusher: asyncio.Task[None] | None = None
        self._error: BaseException | None = None  # how sending ended (the client left)
        self._room = asyncio.Event()  # set when the outbox has room again
        self._queued = 0  # updates ever put in the outbox
        self._sent = 0  # of those, handed to the driver (or dropped: the client left)
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []  # (count, woken at)
        row = driver.engine.connection.table.get(Side.CLIENT, "session/update", Kind.NOTIFICATION)
        assert isinstance(row, Notification)
        self._update_row: Notification[Any] = row

    # ------------------------------------------------------------------ the outbox

    async def send(self, notification: Any) -> None:
        """Keep a `session/update` notification, then send it: returns once it is queued
        (waiting first while the outbox is full; cancelled there, it is not sent); it
        leaves when the agent next awaits anything. The store has it before the client
        does."""
        if self._error is not None:
            raise self._error
        session_id: str = notification.session_id
        if session_id in self._replaying:  # the agent replays its own load: kept already
            await self.flushed()
            await self._driver.notify(self._update_row, notification)
            return
        # An update the client may not receive (a notice it did not advertise) is refused
        # here, to the agent's code, before it is kept: the store keeps what was sent.
        self._driver.engine.check_outbound(self._update_row, notification)
        # Wait for room before queueing, never after: a send cancelled while it waits
        # (the turn was cancelled) must not reach the client, as without a store (a
        # tool call whose announcement was cancelled would stay open for good).
        # (A flusher that stopped emptied the outbox: this cannot wait forever.)
        while len(self._outbox) >= WINDOW:
            self._room.clear()
            await self._room.wait()
            if self._error is not None:
                raise self._error
        # The whole notification is encoded (and checked) here, not only the update: a
        # wrong-typed one raises EncodeError to the sender now, never in the flusher.
        kept = to_json_value(notification)["update"]
        self._outbox.append((session_id, notification, kept))
        self._queued += 1
        if self._flusher is None:
            self._flusher = asyncio.get_running_loop().create_task(self._flush())
        # No yield per update: the flusher runs when the agent next awaits anything, and
        # takes everything queued by then as one batch (one commit).

    async def flushed(self) -> None:
        """Wait until every update put in the outbox before this call is kept and queued
        to the driver (not for later ones: a session streaming without pause must not
        hold back another request's answer)."""
        target = self._queued
        if self._sent < target and self._error is None:
            woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append((target, woken))
            await woken
        if self._error is not None:
            raise self._error

    def _wake(self) -> None:
        """Wake the barriers whose updates are all out (all of them once sending ended)."""
        ended = self._error is not None
        waiting: list[tuple[int, asyncio.Future[None]]] = []
        for target, woken in self._waiters:
            if woken.done():  # its waiter was cancelled
                continue
            if ended or self._sent >= target:
                woken.set_result(None)
            else:
                waiting.append((target, woken))
        self._waiters = waiting

    async def _flush(self) -> None:
        try:
            while self._outbox:
                batch, self._outbox = self._outbox, []
                self._room.set()
                by_session: dict[str, list[Any]] = {}
                for session_id, _, body in batch:
                    by_session.setdefault(session_id, []).append(body)
                for session_id, bodies in by_session.items():
                    await self._append(session_id, bodies)
                for _, notification, _ in batch:
                    try:
                        await self._driver.notify(self._update_row, notification)
                    except ConnectionClosed:
                        raise
                    except Exception:  # this update only (it was encoded once already)
                        log.exception("a session/update could not be sent")
                    self._sent += 1
                self._wake()
        except (ConnectionClosed, asyncio.CancelledError) as error:  # the client left; closing
            closed = ConnectionClosed("the connection closed")
            self._error = error if isinstance(error, ConnectionClosed) else closed
            self._outbox.clear()
        finally:
            self._flusher = None
            self._room.set()
            self._wake()

    async def aclose(self) -> None:
        """Stop the flusher (the connection is closing; nobody reads what is left)."""
        flusher = self._flusher
        if flusher is not None:
            flusher.cancel()
            with contextlib.suppress(BaseException):
                await flusher

    async def _append(self, session_id: str, updates: list[Any]) -> None:
        try:
            await self.store.append(session_id, updates, now())
        except Exception:
            # A full disk must not end the turn: the client still gets its updates.
            if not self._failed:
                self._failed = True
                log.exception("the session store failed; sessions are not being recorded")

    # ------------------------------------------------------------------ serving

    def serves(self, name: str) -> bool:
        """Whether the keeper answers this handler for the agent."""
        return name in _SERVED and not self._agent._overrides(name)

    async def serve(self, row: Row, params: Any, call_agent: CallAgent) -> Any:
        """Answer one request: the keeper's own session methods, or the agent's with
        what the store needs recorded around them. The answer waits for the outbox, so
        it never overtakes the updates sent before it."""
        try:
            result = await self._serve(row, params, call_agent)
        except BaseException:
            with contextlib.suppress(Exception):
                await self.flushed()
            raise
        await self.flushed()
        return result

    async def _serve(self, row: Row, params: Any, call_agent: CallAgent) -> Any:
        name = row.handler_name
        if name == "prompt":
            return await self._prompt(row, params, call_agent)
        if name == "initialize":
            return self._advertise(await call_agent(row, params))
        if not self.serves(name):
            return await self._around_agent(row, params, call_agent)
        served: Callable[[Row, Any], Awaitable[Any]] = getattr(self, f"_{name}")
        return await served(row, params)

    async def _around_agent(self, row: Row, params: Any, call_agent: CallAgent) -> Any:
        name = row.handler_name
        if name == "load_session":
            # The agent replays the session itself: those updates are kept already.
            self._replaying.add(params.session_id)
            try:
                result = await call_agent(row, params)
            finally:
                self._replaying.discard(params.session_id)
            await self._adopt(params.session_id, params)
            return result
        result = await call_agent(row, params)
        if name == "new_session":
            await self._adopt(result.session_id, params)
        elif name == "resume_session":
            await self._adopt(params.session_id, params)
        return result

    async def _adopt(self, session_id: str, params: Any) -> None:
        """Keep a session the agent made or opened itself (a no-op if kept already)."""
        await self.store.create(_stored(session_id, params))

    async def _prompt(self, row: Row, params: Any, call_agent: CallAgent) -> Any:
        session_id: str = params.session_id
        task = asyncio.current_task()
        assert task is not None
        running = self._running.setdefault(session_id, set())
        running.add(task)
        try:
            message_id = getattr(params, "message_id", None)
            chunks: list[dict[str, Any]] = []
            for block in params.prompt:
                chunk: dict[str, Any] = {
                    "sessionUpdate": "user_message_chunk",
                    "content": to_json_value(block),
                }
                if isinstance(message_id, str):
                    chunk["messageId"] = message_id
                chunks.append(chunk)
            await self._append(session_id, chunks)
            return await call_agent(row, params)
        finally:
            running.discard(task)
            if not running and self._running.get(session_id) is running:
                del self._running[session_id]

    def _advertise(self, response: Any) -> Any:
        """The agent's `initialize` answer with the capabilities of what the keeper serves
        added (for the rows the connection's table has)."""
        caps = getattr(response, "agent_capabilities", None)
        if caps is None:
            return response
        table = self._driver.engine.connection.table
        models = sys.modules[type(caps).__module__]
        served = {
            capability
            for name, capability in _SERVED.items()
            if capability is not None
            and self.serves(name)
            and any(row.handler_name == name for row in table.handled_by(Side.AGENT))
        }
        sessions = caps.session_capabilities or models.SessionCapabilities()
        changes = {
            field: getattr(models, f"Session{field.title()}Capabilities")()
            for field in ("list", "resume", "close", "delete")
            if field in served and getattr(sessions, field) is None
        }
        caps = attrs.evolve(
            caps,
            load_session=caps.load_session or "load_session" in served,
            session_capabilities=attrs.evolve(sessions, **changes),
        )
        return attrs.evolve(response, agent_capabilities=caps)

    # ------------------------------------------------------------------ the served methods

    async def _new_session(self, row: Row, params: Any) -> Any:
        while True:  # an id collision is all but impossible; a retry costs nothing
            session_id = mint_session_id()
            if await self.store.create(_stored(session_id, params)):
                break
        return _models(row).NewSessionResponse(session_id=session_id)

    async def _load_session(self, row: Row, params: Any) -> Any:
        session_id: str = params.session_id
        if await self.store.get(session_id) is None:
            raise _not_found(session_id)
        await self.flushed()  # what the agent sent before goes first
        update_row = self._update_row
        notification_type = update_row.params_type
        position = 0
        while True:
            chunk = await self.store.read(session_id, position, REPLAY_CHUNK)
            for _, body in chunk:
                try:
                    notification = decode(
                        {"sessionId": session_id, "update": body},
                        notification_type,
                    )
                except DecodeError as error:  # as `session_history` does: skip, go on
                    log.warning("skipped a stored update of %s: %s", session_id, error)
                    continue
                # Straight to the driver: a replayed update is not recorded again.
                await self._driver.notify(update_row, notification)
            if len(chunk) < REPLAY_CHUNK:
                break
            position = chunk[-1][0]
        return _models(row).LoadSessionResponse()

    async def _resume_session(self, row: Row, params: Any) -> Any:
        if await self.store.get(params.session_id) is None:
            raise _not_found(params.session_id)
        return _models(row).ResumeSessionResponse()

    async def _list_sessions(self, row: Row, params: Any) -> Any:
        after = None
        if params.cursor is not None:
            after = decode_cursor(params.cursor)
            if after is None:
                raise RequestError.invalid_params({"cursor": "not a cursor of this agent"})
        limit = max(1, self.store.page_size)
        found = await self.store.page(params.cwd, after, limit + 1)
        page = found[:limit]
        models = _models(row)
        sessions = [
            models.SessionInfo(
                session_id=session.session_id,
                cwd=session.cwd,
                additional_directories=list(session.additional_directories) or None,
                title=session.title,
                updated_at=session.updated_at,
            )
            for session in page
        ]
        next_cursor = encode_cursor(page[-1]) if len(found) > limit else None
        return models.ListSessionsResponse(sessions=sessions, next_cursor=next_cursor)

    async def _close_session(self, row: Row, params: Any) -> Any:
        session_id: str = params.session_id
        if session_id not in self._running and await self.store.get(session_id) is None:
            raise _not_found(session_id)
        # The connection already cancelled its running turn as `session/cancel` would
        # (acp_sdk.protocol._connection); wait for it to end before freeing the session.
        await self._stop(session_id, cancel=False)
        return _models(row).CloseSessionResponse()

    async def _delete_session(self, row: Row, params: Any) -> Any:
        await self._stop(params.session_id, cancel=True)
        await self.store.delete(params.session_id)
        return _models(row).DeleteSessionResponse()

    async def _stop(self, session_id: str, *, cancel: bool) -> None:
        """Cancel the session's running turns exactly as `session/cancel` does (the
        connection answers them with stop reason `cancelled` and the agent's `cancel`
        runs) unless that was done already, then wait for them to end."""
        tasks = self._running.get(session_id)
        if not tasks:
            return
        if not cancel:
            with contextlib.suppress(Exception):
                await asyncio.wait(set(tasks), timeout=CLOSE_WAIT)
            return
        cancel_frame = orjson.dumps(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
        )
        self._driver.engine.feed_message(cancel_frame)
        with contextlib.suppress(Exception):
            await asyncio.wait(set(tasks), timeout=CLOSE_WAIT)


class ConnectionSessions:
    """The sessions of one connection, for an agent without a store that does not
    override `new_session`: the runtime answers `session/new` with a fresh id (the same
    kind a store mints) and keeps the ids it gave in memory until the connection ends.
    When the agent opens no session itself (it overrides neither `load_session` nor
    `resume_session`), a prompt naming a session this connection never opened is error
    -32002 (resource not found), as a store answers for an unknown id. The other session
    methods stay the agent's: without a store nothing is advertised for them, so the
    connection refuses them (-32601)."""

    __slots__ = ("ids", "strict")

    def __init__(self, agent: Any) -> None:
        self.ids: set[str] = set()
        self.strict = not (agent._overrides("load_session") or agent._overrides("resume_session"))

    def new_session(self, row: Row, params: Any) -> Any:
        while True:  # a collision is all but impossible; a retry costs nothing
            session_id = mint_session_id()
            if session_id not in self.ids:
                break
        self.ids.add(session_id)
        return _models(row).NewSessionResponse(session_id=session_id)

    def check_prompt(self, params: Any) -> None:
        if self.strict and params.session_id not in self.ids:
            raise _not_found(params.session_id)


def _stored(session_id: str, params: Any) -> StoredSession:
    directories = getattr(params, "additional_directories", None) or ()
    return StoredSession(
        session_id=session_id,
        cwd=params.cwd,
        additional_directories=tuple(directories),
        updated_at=now(),
    )


# ---------------------------------------------------------------------- the agent's reads


def require_store(keeper: SessionKeeper | None) -> SessionStore:
    if keeper is None:
        raise RuntimeError("no session store: run the agent with run_agent(agent, store=...)")
    return keeper.store


async def history(keeper: SessionKeeper | None, session_id: str) -> SessionState:
    """`AgentContext.history`: the session as kept, with every update sent so far."""
    store = require_store(keeper)
    assert keeper is not None
    await keeper.flushed()
    return await session_history(store, session_id)


async def session_history(store: SessionStore, session_id: str) -> SessionState:
    """The session as recorded so far, folded by the clients' reducer (the current
    turn's prompt included)."""
    from acp_sdk.protocol._session_state import SessionState
    from acp_sdk.schema import SessionUpdate

    state = SessionState()
    position = 0
    while True:
        chunk = await store.read(session_id, position, REPLAY_CHUNK)
        updates: list[SessionUpdate] = []
        for _, body in chunk:
            try:
                updates.append(decode(body, SessionUpdate))
            except DecodeError as error:  # kept by another program or a custom store
                log.warning("skipped a stored update of %s: %s", session_id, error)
        state = state.apply_all(updates)
        if len(chunk) < REPLAY_CHUNK:
            return state
        position = chunk[-1][0]
