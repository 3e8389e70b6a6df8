"""Session stores: where `run_agent(agent, store=...)` keeps each session's conversation.

A store holds, per session: its cwd (and additional directories), its title, its last
activity time, every update of the conversation in order (the user's prompts as
`user_message_chunk`s and every `session/update` the agent sent, as wire JSON), and one
JSON value the agent owns (`load_data` / `save_data`). The runtime (`_keeper.py`) decides
what to record and when; a store only keeps it. Updates are kept as wire JSON, not
models, so a store is the same for the stable and the unstable protocol and a file
outlives the SDK version that wrote it.

Two stores ship: `MemorySessionStore` (a process's lifetime, for tests and in-process
servers) and `SqliteSessionStore` (`_sqlite_store.py`, a file, the embedded default).
Any other backend implements `SessionStore`'s abstract methods.
"""

from __future__ import annotations

import abc
import base64
import datetime
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import attrs
import orjson

__all__ = [
    "MemorySessionStore",
    "SessionStore",
    "SessionStoreError",
    "StoredSession",
]

DEFAULT_PAGE_SIZE = 50
"""Sessions per `session/list` page (the spec asks agents to bound pages)."""


class SessionStoreError(Exception):
    """The session store cannot be used: a file that is not a session store (corrupt,
    foreign, or written by a newer version), or one that cannot be opened.

    Raised when the store is opened, before the agent serves anyone.
    """


@attrs.frozen(kw_only=True, order=False)
class StoredSession:
    """What a store knows about one session besides its updates.

    Attributes:
        session_id: The session's id.
        cwd: Its working directory (absolute, as the client gave it).
        additional_directories: Its additional workspace roots, in order.
        title: The title from the latest `session_info_update` that set one, or None.
        updated_at: ISO 8601 UTC time of its last activity (creation, a prompt, an update).
    """

    session_id: str
    cwd: str
    additional_directories: tuple[str, ...] = ()
    title: str | None = None
    updated_at: str


class SessionStore(abc.ABC):
    """Where a runtime with `store=` keeps sessions. Implement the abstract methods to
    keep them elsewhere (every method is called from the event loop; a method that does
    I/O must not block it).

    Updates are JSON values (dicts), each one a `SessionUpdate` as on the wire. `append`
    must be durable when it returns: the runtime sends an update to the client only
    after `append` has returned, so whatever the client saw survives the process.

    Attributes:
        page_size: Sessions per `session/list` page.
    """

    page_size: int = DEFAULT_PAGE_SIZE

    @abc.abstractmethod
    async def create(self, session: StoredSession) -> bool:
        """Add a session. Returns False (and changes nothing) when the id exists."""

    @abc.abstractmethod
    async def get(self, session_id: str) -> StoredSession | None:
        """The session, or None if the store does not hold it (never created, deleted)."""

    @abc.abstractmethod
    async def append(self, session_id: str, updates: Sequence[Any], at: str) -> None:
        """Append updates (wire JSON) to the session's conversation, in order, and mark
        it active at `at`; a `session_info_update` carrying `title` sets (or, with
        null, clears) its title. Appending to a session the store does not hold does
        nothing."""

    @abc.abstractmethod
    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, Any]]:
        """Up to `limit` of the session's updates after position `after` (0 is the
        start), in order, as (position, update); positions only grow."""

    @abc.abstractmethod
    async def page(
        self, cwd: str | None, after: tuple[str, str] | None, limit: int
    ) -> list[StoredSession]:
        """Up to `limit` sessions, most recently active first (ties by id, descending),
        only those in `cwd` when given, strictly after the key `(updated_at,
        session_id)` when given."""

    @abc.abstractmethod
    async def delete(self, session_id: str) -> None:
        """Forget the session, its updates and its data; an unknown id is no error."""

    @abc.abstractmethod
    async def load_data(self, session_id: str) -> Any:
        """The JSON value last saved for the session with `save_data`, or None."""

    @abc.abstractmethod
    async def save_data(self, session_id: str, value: Any) -> None:
        """Keep one JSON value for the session (replacing the previous one)."""

    async def aclose(self) -> None:  # noqa: B027 - optional: most stores hold nothing to close
        """Release what the store holds (a file, a thread). The default does nothing."""


def now() -> str:
    """The current time as the store writes it: ISO 8601 UTC with microseconds, one
    fixed width, so the text sorts as the time does."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def mint_session_id() -> str:
    """A session id no other process mints: 122 random bits."""
    return f"sess_{uuid.uuid4().hex}"


_NO_TITLE_CHANGE = object()


def title_change(updates: Iterable[Any]) -> Any:
    """The title the last `session_info_update` with a `title` sets (None clears it), or
    `_NO_TITLE_CHANGE` when none of the updates carries one."""
    title: Any = _NO_TITLE_CHANGE
    for update in updates:
        if not isinstance(update, Mapping):
            continue
        fields = cast("Mapping[str, Any]", update)
        if fields.get("sessionUpdate") == "session_info_update" and "title" in fields:
            value = fields["title"]
            title = value if value is None or isinstance(value, str) else title
    return title


def encode_cursor(session: StoredSession) -> str:
    """The opaque `nextCursor` after this session: its sort key."""
    key = orjson.dumps([session.updated_at, session.session_id])
    return base64.urlsafe_b64encode(key).decode("ascii")


def decode_cursor(cursor: str) -> tuple[str, str] | None:
    """The sort key in a cursor of ours, or None if it is not one."""
    try:
        key = orjson.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
    except (ValueError, UnicodeEncodeError, orjson.JSONDecodeError):
        return None
    if not isinstance(key, list):
        return None
    parts = cast("list[object]", key)
    if len(parts) == 2 and isinstance(parts[0], str) and isinstance(parts[1], str):
        return parts[0], parts[1]
    return None


class _Held:
    """One session of a `MemorySessionStore`: what it is and its updates (JSON text)."""

    __slots__ = ("session", "updates")

    def __init__(self, session: StoredSession) -> None:
        self.session = session
        self.updates: list[tuple[int, bytes]] = []


class MemorySessionStore(SessionStore):
    """Sessions kept in this process's memory: for tests, and for an in-process server
    that shares one store between connections (`serve_agent(..., store=store)`).

    Args:
        page_size: Sessions per `session/list` page.
    """

    def __init__(self, *, page_size: int = DEFAULT_PAGE_SIZE) -> None:
        self.page_size = page_size
        self._sessions: dict[str, _Held] = {}
        self._data: dict[str, bytes] = {}
        self._position = 0

    async def create(self, session: StoredSession) -> bool:
        if session.session_id in self._sessions:
            return False
        self._sessions[session.session_id] = _Held(session=session)
        return True

    async def get(self, session_id: str) -> StoredSession | None:
        held = self._sessions.get(session_id)
        return None if held is None else held.session

    async def append(self, session_id: str, updates: Sequence[Any], at: str) -> None:
        held = self._sessions.get(session_id)
        if held is None:
            return
        for update in updates:
            self._position += 1
            # Kept as JSON text, as a file keeps it: later changes to the caller's
            # objects cannot reach the history.
            held.updates.append((self._position, orjson.dumps(update)))
        title = title_change(updates)
        session = attrs.evolve(held.session, updated_at=at)
        if title is not _NO_TITLE_CHANGE:
            session = attrs.evolve(session, title=title)
        held.session = session

    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, Any]]:
        held = self._sessions.get(session_id)
        if held is None:
            return []
        found = [(position, body) for position, body in held.updates if position > after]
        return [(position, orjson.loads(body)) for position, body in found[:limit]]

    async def page(
        self, cwd: str | None, after: tuple[str, str] | None, limit: int
    ) -> list[StoredSession]:
        sessions = [
            held.session
            for held in self._sessions.values()
            if cwd is None or held.session.cwd == cwd
        ]
        sessions.sort(key=lambda s: (s.updated_at, s.session_id), reverse=True)
        if after is not None:
            sessions = [s for s in sessions if (s.updated_at, s.session_id) < after]
        return sessions[:limit]

    async def delete(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._data.pop(session_id, None)

    async def load_data(self, session_id: str) -> Any:
        body = self._data.get(session_id)
        return None if body is None else orjson.loads(body)

    async def save_data(self, session_id: str, value: Any) -> None:
        self._data[session_id] = orjson.dumps(value)  # a value JSON cannot hold fails here
