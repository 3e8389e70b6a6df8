"""`SqliteSessionStore`: sessions in one SQLite file (stdlib `sqlite3`).

Theory of operation:

- **The loop never waits on the file.** One worker thread owns the connection and runs
  every statement; the loop hands it jobs and awaits a future the worker settles through
  `call_soon_threadsafe`. Writes queued while the worker was busy run in one transaction
  (group commit), so many sessions streaming at once cost one commit per batch.
- **What the client saw survives a SIGKILL.** The runtime sends an update only after
  `append` returned, that is after its transaction committed. In WAL mode a commit is
  in the OS's hands once `COMMIT` returns, whatever then happens to the process; with
  `synchronous=NORMAL` (the default here) only a power loss or an OS crash can take the
  last commits back, and `durable=True` (`synchronous=FULL`) closes that too, at an
  fsync per commit.
- **Many processes, one file.** An editor starts one agent process per window. WAL lets
  readers and the writer proceed together; a writer takes the lock at `BEGIN IMMEDIATE`
  (never upgrading a read lock, which could fail with "database is locked") and waits up
  to `busy_timeout` for the other process. Positions come from one AUTOINCREMENT key and
  ids are random, so processes never collide.
- **A bad file is refused at open, never mid-turn.** Opening checks that the file is a
  SQLite database, that it carries this store's `application_id` (or is empty, and then
  becomes one) and a schema version we read, and runs `PRAGMA quick_check`; anything
  else raises `SessionStoreError` from the constructor.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import orjson

from acp_sdk.agent._store import (
    _NO_TITLE_CHANGE,
    DEFAULT_PAGE_SIZE,
    SessionStore,
    SessionStoreError,
    StoredSession,
    title_change,
)

__all__ = ["SqliteSessionStore"]

T = TypeVar("T")

APPLICATION_ID = 0x41435053  # "ACPS": marks the file as ours (`PRAGMA application_id`)
SCHEMA_VERSION = 1  # `PRAGMA user_version`
MAX_BATCH = 512  # jobs per worker round (one transaction for a run of writes)

_SCHEMA = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    directories TEXT NOT NULL DEFAULT '[]',
    title TEXT,
    updated_at TEXT NOT NULL
);
CREATE INDEX sessions_by_activity ON sessions (updated_at, id);
CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at, id);
CREATE TABLE updates (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX updates_by_session ON updates (session_id, position);
CREATE TABLE data (session_id TEXT PRIMARY KEY, body TEXT NOT NULL);
"""


class _Job:
    """One piece of work for the worker, and where its result goes."""

    __slots__ = ("future", "loop", "run", "write")

    def __init__(
        self,
        run: Callable[[sqlite3.Connection], Any],
        write: bool,
        future: asyncio.Future[Any],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.run = run
        self.write = write  # runs in a write transaction (batched with its neighbours)
        self.future = future
        self.loop = loop  # the future's loop: results are handed over through it


class SqliteSessionStore(SessionStore):
    """Sessions in a SQLite file: the embedded default, for agents started by an editor.

    Opening checks the file and raises `SessionStoreError` when it is not a session
    store (corrupt, another program's database, a newer schema) or cannot be opened; a
    missing or empty file becomes a new store. Several agent processes may use one file
    at once. Call `aclose()` (or `close()`) when done; `run_agent` does so on exit.

    Args:
        path: The file (created if missing; its directory must exist).
        durable: Also survive a power loss or OS crash (fsync each commit). Without
            it, every committed update survives the agent process being killed.
        busy_timeout: Seconds to wait for another process's write to finish.
        page_size: Sessions per `session/list` page.

    Raises:
        SessionStoreError: The file cannot be used as a session store.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        durable: bool = False,
        busy_timeout: float = 30.0,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> None:
        self.path = os.fspath(path)
        self.page_size = page_size
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(
            target=self._work,
            args=(durable, busy_timeout),
            name="acp-session-store",
            daemon=True,  # an abandoned store must not keep the process alive
        )
        self._opened: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread.start()
        try:
            self._opened.result()
        except BaseException:
            self._thread.join(5)
            raise

    # ------------------------------------------------------------------ the worker

    def _work(self, durable: bool, busy_timeout: float) -> None:
        try:
            connection = _open(self.path, durable, busy_timeout)
        except BaseException as error:
            self._opened.set_exception(error)
            return
        self._opened.set_result(None)
        try:
            while True:
                job = self._jobs.get()
                if job is None:
                    return
                batch = [job]
                stop = False
                while len(batch) < MAX_BATCH:
                    try:
                        more = self._jobs.get_nowait()
                    except queue.Empty:
                        break
                    if more is None:
                        stop = True
                        break
                    batch.append(more)
                outcomes: list[_Outcome]
                try:
                    outcomes = _run_batch(connection, batch)
                except BaseException as error:  # a bug here must not leave waiters hanging
                    failure = SessionStoreError(f"the session store failed: {error!r}")
                    outcomes = [(job, None, failure) for job in batch]
                _settle(outcomes)
                if stop:
                    return
        finally:
            with contextlib.suppress(sqlite3.Error):
                connection.close()

    async def _submit(self, run: Callable[[sqlite3.Connection], T], *, write: bool) -> T:
        if self._closed:
            raise SessionStoreError(f"the session store {self.path} is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put(_Job(run=run, write=write, future=future, loop=loop))
        return await future

    def close(self) -> None:
        """Finish the queued work and close the file (idempotent; blocks until done)."""
        if self._closed:
            return
        self._closed = True
        self._jobs.put(None)
        self._thread.join()

    async def aclose(self) -> None:
        """`close()` without blocking the event loop."""
        if self._closed:
            return
        self._closed = True
        self._jobs.put(None)
        await asyncio.get_running_loop().run_in_executor(None, self._thread.join)

    # ------------------------------------------------------------------ the interface

    async def create(self, session: StoredSession) -> bool:
        directories = orjson.dumps(list(session.additional_directories)).decode()

        def run(db: sqlite3.Connection) -> bool:
            cursor = db.execute(
                "INSERT OR IGNORE INTO sessions (id, cwd, directories, title, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session.session_id, session.cwd, directories, session.title, session.updated_at),
            )
            return cursor.rowcount == 1

        return await self._submit(run, write=True)

    async def get(self, session_id: str) -> StoredSession | None:
        def run(db: sqlite3.Connection) -> StoredSession | None:
            row = db.execute(
                "SELECT id, cwd, directories, title, updated_at FROM sessions WHERE id = ?",
                (session_id,),
            ).fetchone()
            return None if row is None else _session(row)

        return await self._submit(run, write=False)

    async def append(self, session_id: str, updates: Sequence[Any], at: str) -> None:
        title = title_change(updates)

        def run(db: sqlite3.Connection) -> None:
            found = db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if found is None:
                return
            db.executemany(
                "INSERT INTO updates (session_id, body) VALUES (?, ?)",
                [(session_id, orjson.dumps(update).decode()) for update in updates],
            )
            if title is _NO_TITLE_CHANGE:
                db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (at, session_id))
            else:
                db.execute(
                    "UPDATE sessions SET updated_at = ?, title = ? WHERE id = ?",
                    (at, title, session_id),
                )

        await self._submit(run, write=True)

    async def read(self, session_id: str, after: int, limit: int) -> list[tuple[int, Any]]:
        def run(db: sqlite3.Connection) -> list[tuple[int, Any]]:
            rows = db.execute(
                "SELECT position, body FROM updates WHERE session_id = ? AND position > ?"
                " ORDER BY position LIMIT ?",
                (session_id, after, limit),
            ).fetchall()
            return [(position, orjson.loads(body)) for position, body in rows]

        return await self._submit(run, write=False)

    async def page(
        self, cwd: str | None, after: tuple[str, str] | None, limit: int
    ) -> list[StoredSession]:
        clauses: list[str] = []
        arguments: list[str] = []
        if cwd is not None:
            clauses.append("cwd = ?")
            arguments.append(cwd)
        if after is not None:
            clauses.append("(updated_at, id) < (?, ?)")
            arguments.extend(after)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        query = (  # fixed clauses; every value is bound
            f"SELECT id, cwd, directories, title, updated_at FROM sessions {where}"
            " ORDER BY updated_at DESC, id DESC LIMIT ?"
        )

        def run(db: sqlite3.Connection) -> list[StoredSession]:
            return [_session(row) for row in db.execute(query, (*arguments, limit))]

        return await self._submit(run, write=False)

    async def delete(self, session_id: str) -> None:
        def run(db: sqlite3.Connection) -> None:
            for table in ("updates", "data"):
                db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

        await self._submit(run, write=True)

    async def load_data(self, session_id: str) -> Any:
        def run(db: sqlite3.Connection) -> Any:
            row = db.execute("SELECT body FROM data WHERE session_id = ?", (session_id,)).fetchone()
            return None if row is None else orjson.loads(row[0])

        return await self._submit(run, write=False)

    async def save_data(self, session_id: str, value: Any) -> None:
        body = orjson.dumps(value).decode()  # a value JSON cannot hold fails here, not later

        def run(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO data (session_id, body) VALUES (?, ?)"
                " ON CONFLICT (session_id) DO UPDATE SET body = excluded.body",
                (session_id, body),
            )

        await self._submit(run, write=True)


def _session(row: tuple[Any, ...]) -> StoredSession:
    session_id, cwd, directories, title, updated_at = row
    return StoredSession(
        session_id=session_id,
        cwd=cwd,
        additional_directories=tuple(orjson.loads(directories)),
        title=title,
        updated_at=updated_at,
    )


_Outcome = tuple[_Job, Any, BaseException | None]


def _run_batch(db: sqlite3.Connection, batch: list[_Job]) -> list[_Outcome]:
    """Run jobs in order: each run of writes in one transaction (retried job by job if
    one of them fails, so only that one reports the error), each read on its own."""
    done: list[_Outcome] = []
    index = 0
    while index < len(batch):
        job = batch[index]
        if not job.write:
            done.append(_attempt(db, [job], transaction=False)[0])
            index += 1
            continue
        end = index
        while end < len(batch) and batch[end].write:
            end += 1
        writes = batch[index:end]
        outcomes = _attempt(db, writes, transaction=True)
        if len(writes) > 1 and any(error is not None for _, _, error in outcomes):
            outcomes = [_attempt(db, [one], transaction=True)[0] for one in writes]
        done.extend(outcomes)
        index = end
    return done


def _attempt(db: sqlite3.Connection, jobs: list[_Job], *, transaction: bool) -> list[_Outcome]:
    try:
        if transaction:
            db.execute("BEGIN IMMEDIATE")
        results = [job.run(db) for job in jobs]
        if transaction:
            db.execute("COMMIT")
    except Exception as error:
        if transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        return [(job, None, _store_error(error)) for job in jobs]
    return [(job, result, None) for job, result in zip(jobs, results, strict=True)]


def _store_error(error: Exception) -> BaseException:
    if isinstance(error, sqlite3.Error):
        return SessionStoreError(f"the session store failed: {error}")
    return error


def _settle(outcomes: list[_Outcome]) -> None:
    """Hand each result to its waiter: one wake-up per event loop for the whole batch."""
    by_loop: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
    for outcome in outcomes:
        by_loop.setdefault(outcome[0].loop, []).append(outcome)
    for loop, settled in by_loop.items():
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
            loop.call_soon_threadsafe(_settle_on_loop, settled)


def _settle_on_loop(outcomes: list[_Outcome]) -> None:
    for job, result, error in outcomes:
        future = job.future
        if future.done():  # its waiter was cancelled; the work is done all the same
            continue
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)


# ---------------------------------------------------------------------- opening


def _open(path: str, durable: bool, busy_timeout: float) -> sqlite3.Connection:
    try:
        db = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as error:
        raise SessionStoreError(f"cannot open the session store {path}: {error}") from None
    try:
        _prepare(db, path, durable)
    except BaseException:
        db.close()
        raise
    return db


def _prepare(db: sqlite3.Connection, path: str, durable: bool) -> None:
    try:
        application_id = db.execute("PRAGMA application_id").fetchone()[0]
        if application_id == 0 and _is_empty(db):
            _create_schema(db)
        else:
            _check(db, path)
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise SessionStoreError(
                f"the session store {path} cannot use write-ahead logging (journal mode {mode})"
            )
        db.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
    except sqlite3.DatabaseError as error:
        raise SessionStoreError(
            f"{path} is not a usable session store (corrupt, or not an SQLite database): {error}"
        ) from None


def _is_empty(db: sqlite3.Connection) -> bool:
    count: int = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    return count == 0


def _create_schema(db: sqlite3.Connection) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have made the file a store since we looked.
        if db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID:
            db.execute("ROLLBACK")
            return
        if not _is_empty(db):
            raise SessionStoreError("the file stopped being empty while it was opened")
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise


def _check(db: sqlite3.Connection, path: str) -> None:
    application_id = db.execute("PRAGMA application_id").fetchone()[0]
    if application_id != APPLICATION_ID:
        raise SessionStoreError(
            f"{path} is an SQLite database of another program (application_id"
            f" {application_id:#x}), not an acp_sdk session store"
        )
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version != SCHEMA_VERSION:
        raise SessionStoreError(
            f"{path} is a session store of schema version {version}; this acp_sdk reads"
            f" version {SCHEMA_VERSION}"
        )
    problems = [row[0] for row in db.execute("PRAGMA quick_check")]
    if problems != ["ok"]:
        raise SessionStoreError(f"the session store {path} is corrupt: {'; '.join(problems[:3])}")
