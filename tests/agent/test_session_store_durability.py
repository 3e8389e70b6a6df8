"""The SQLite session store under crashes, sharing and bad files, over real stdio:
SIGKILL mid-turn loses nothing the client saw, two agent processes share one file, and a
corrupt or foreign file is refused at start."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from acp_sdk import Client
from acp_sdk.agent import SessionStoreError, SqliteSessionStore
from acp_sdk.schema import AgentMessageChunk, TextContent
from tests.agent.test_session_store_rules import Seen, argv
from tests.client.facades import AsyncFacade, SyncFacade

pytestmark = pytest.mark.timeout(90)


def _text(update: Any) -> str | None:
    if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContent):
        return update.content.text
    return None


@pytest.mark.parametrize("facade", [SyncFacade, AsyncFacade], ids=["sync", "async"])
def test_sigkill_mid_turn_then_reload_has_every_update_the_client_received(
    facade: type[SyncFacade | AsyncFacade], tmp_path: Path
) -> None:
    db = tmp_path / "s.db"
    received: list[str] = []
    with facade(argv(db)) as driver:
        session: Any = driver.new_session("/w")
        driver.prompt(session, "before")
        popen = driver.client.process
        assert popen is not None
        # As fast as the agent can stream: the kill lands wherever the writes are.
        if isinstance(driver, SyncFacade):
            turn = session.prompt("stream 1000000")
            for update in turn:
                received.append(_text(update) or "")
                if len(received) == 500:
                    os.kill(popen.pid, signal.SIGKILL)
                    break
        else:

            async def go() -> None:
                turn = session.prompt("stream 1000000")
                async for update in turn:
                    received.append(_text(update) or "")
                    if len(received) == 500:
                        os.kill(popen.pid, signal.SIGKILL)
                        break

            driver.run(go)
        popen.wait(10)
        assert popen.returncode == -signal.SIGKILL
    seen = Seen()
    with SyncFacade(argv(db), on_update=seen) as driver:
        driver.call("load_session", session_id=session.session_id, cwd="/w")
    replayed = seen.texts()
    assert replayed[:3] == ["before", "before", "stream 1000000"]
    assert replayed[3 : 3 + len(received)] == received  # every one, in order
    assert received == [f"tick {i}" for i in range(500)]


def test_two_agent_processes_share_one_file(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    created: dict[str, list[str]] = {"a": [], "b": []}
    errors: list[BaseException] = []

    def window(name: str, client: Client) -> None:
        try:
            for _ in range(8):
                session = client.new_session(cwd=f"/{name}")
                created[name].append(session.session_id)
                assert len(list(session.prompt("stream 40"))) == 40
        except BaseException as error:
            errors.append(error)

    with Client.spawn(argv(db)) as a, Client.spawn(argv(db)) as b:
        threads = [
            threading.Thread(target=window, args=(name, client))
            for name, client in (("a", a), ("b", b))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == []
        everything = set(created["a"]) | set(created["b"])
        assert len(everything) == 16  # no id minted twice
        for client in (a, b):
            listed = client.list_sessions()
            assert {s.session_id for s in listed.sessions} == everything
        seen = Seen()
        with Client.spawn(argv(db), on_update=seen) as c:
            c.load_session(session_id=created["a"][3], cwd="/a")
        assert seen.texts() == ["stream 40"] + [f"tick {i}" for i in range(40)]
    with contextlib.closing(sqlite3.connect(db)) as check, check:
        assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_ids_are_unique_across_processes(tmp_path: Path) -> None:
    """Two processes on two files (nothing shared to check against) still never mint the
    same id: ids are random, not counters."""
    ids: list[str] = []
    for name in ("one", "two"):
        with Client.spawn(argv(tmp_path / f"{name}.db")) as client:
            ids.extend(client.new_session(cwd="/w").session_id for _ in range(5))
    assert len(set(ids)) == 10
    assert all(i.startswith("sess_") and len(i) == 37 for i in ids)


# ---------------------------------------------------------------------- bad files


def _damaged_store(path: Path) -> None:
    async def fill() -> None:
        from acp_sdk.agent import StoredSession

        store = SqliteSessionStore(path)
        for index in range(200):
            session_id = f"s{index}"
            await store.create(StoredSession(session_id=session_id, cwd="/w", updated_at="t"))
            await store.append(session_id, [{"sessionUpdate": "plan", "entries": []}] * 5, "t")
        await store.aclose()

    asyncio.run(fill())
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    data[3 * page : 6 * page] = os.urandom(3 * page)  # b-tree pages, not the header
    path.write_bytes(bytes(data))


def _foreign(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE notes (body TEXT)")


def _newer(path: Path) -> None:
    SqliteSessionStore(path).close()
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("PRAGMA user_version = 99")


BAD_FILES: dict[str, tuple[Callable[[Path], object], str]] = {
    "random bytes": (lambda p: p.write_bytes(os.urandom(10_000)), "not a usable session store"),
    "text": (lambda p: p.write_text("hello\n" * 100), "not a usable session store"),
    "foreign database": (_foreign, "another program"),
    "newer schema": (_newer, "schema version 99"),
    "damaged store": (_damaged_store, "session store"),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_a_bad_file_is_refused_when_the_store_opens(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    make, message = BAD_FILES[kind]
    make(path)
    with pytest.raises(SessionStoreError, match=message) as refused:
        SqliteSessionStore(path)
    assert str(path) in str(refused.value)


@pytest.mark.parametrize("kind", ["random bytes", "foreign database"])
def test_an_agent_on_a_bad_file_fails_at_start_not_mid_turn(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    BAD_FILES[kind][0](path)
    before = path.read_bytes()
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize"}
    initialize["params"] = {"protocolVersion": 1}
    result = subprocess.run(
        argv(path), input=orjson.dumps(initialize) + b"\n", capture_output=True, timeout=30
    )
    assert result.returncode != 0
    assert result.stdout == b""  # it never served
    assert b"SessionStoreError" in result.stderr
    assert path.read_bytes() == before  # and left the file as it was


def test_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SessionStoreError, match="cannot open"):
        SqliteSessionStore(tmp_path / "nowhere" / "s.db")
