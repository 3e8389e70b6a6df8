"""The spec's session rules, served by the runtime's session store, over real stdio.

The agent (`store_agent.py`) overrides only `prompt`; every session method it answers is
the store's. Each test drives it with `Client` and with `AsyncClient`.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from acp_sdk import RequestError
from acp_sdk.schema import AgentMessageChunk, SessionNotification, TextContent, UserMessageChunk
from tests.client.facades import AsyncFacade, SyncFacade

pytestmark = pytest.mark.timeout(60)

AGENT = str(Path(__file__).with_name("store_agent.py"))
Facade = SyncFacade | AsyncFacade


def argv(path: Path | str, *extra: str) -> list[str]:
    return [sys.executable, AGENT, str(path), *extra]


class Seen:
    """The client's `on_update`: every notification received outside a turn."""

    def __init__(self) -> None:
        self.notifications: list[SessionNotification] = []
        self.lock = threading.Lock()

    def __call__(self, notification: SessionNotification) -> None:
        with self.lock:
            self.notifications.append(notification)

    def texts(self) -> list[str]:
        with self.lock:
            updates = [n.update for n in self.notifications]
        return [u.content.text for u in updates if isinstance(u.content, TextContent)]  # type: ignore[union-attr]


@pytest.fixture(params=["sync", "async"])
def facade(request: pytest.FixtureRequest) -> type[Facade]:
    return SyncFacade if request.param == "sync" else AsyncFacade


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


@pytest.fixture
def opened() -> Iterator[list[Facade]]:
    drivers: list[Facade] = []
    yield drivers
    for driver in reversed(drivers):
        driver.__exit__(None, None, None)


def start(
    facade: type[Facade], opened: list[Facade], path: Path | str, *extra: str, **options: Any
) -> Facade:
    driver = facade(argv(path, *extra), **options)
    driver.__enter__()
    opened.append(driver)
    return driver


def texts(updates: list[Any]) -> list[str]:
    return [u.content.text for u in updates if isinstance(u, AgentMessageChunk)]  # type: ignore[union-attr]


def test_capabilities_are_exactly_the_served_methods(
    facade: type[Facade], opened: list[Facade], db: Path
) -> None:
    caps = start(facade, opened, db).agent_capabilities
    assert caps.load_session is True
    sessions = caps.session_capabilities
    assert sessions is not None
    served = {f: getattr(sessions, f) is not None for f in ("list", "resume", "close", "delete")}
    assert served == {"list": True, "resume": True, "close": True, "delete": True}
    assert sessions.additional_directories is None


def test_load_replays_the_whole_conversation_then_answers(
    facade: type[Facade], opened: list[Facade], db: Path
) -> None:
    first = start(facade, opened, db)
    session = first.new_session("/project/a")
    first.prompt(session, "hello")
    first.prompt(session, "stream 3")
    first.close()
    seen = Seen()
    second = start(facade, opened, db, on_update=seen)
    response = second.call("load_session", session_id=session.session_id, cwd="/project/a")
    assert response.session_id == session.session_id
    # Every update was delivered by the time load returned: the agent answered last.
    updates = [n.update for n in seen.notifications]
    assert [type(u).__name__ for u in updates] == [
        "UserMessageChunk",
        "AgentMessageChunk",
        "UserMessageChunk",
        "AgentMessageChunk",
        "AgentMessageChunk",
        "AgentMessageChunk",
    ]
    assert seen.texts() == ["hello", "hello", "stream 3", "tick 0", "tick 1", "tick 2"]
    assert {n.session_id for n in seen.notifications} == {session.session_id}
    # The session goes on where it was.
    updates_now, reply = second.prompt(second.client.session(session.session_id), "history")
    assert texts(updates_now) == ["5 messages, first: hello"]
    assert reply.stop_reason == "end_turn"


def test_load_on_the_wire_every_update_precedes_the_answer(db: Path) -> None:
    """Raw frames: the `session/load` answer is the last line, after all the replay."""
    with SyncFacade(argv(db)) as driver:
        session = driver.new_session("/w")
        driver.prompt(session, "stream 20")
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    initialize["params"] = {"protocolVersion": 1}
    load = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/load",
        "params": {"sessionId": session.session_id, "cwd": "/w", "mcpServers": []},
    }
    process = subprocess.Popen(
        argv(db), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(orjson.dumps(initialize) + b"\n")
        process.stdin.flush()
        answered = process.stdout.readline()  # initialized: the load may come now
        process.stdin.write(orjson.dumps(load) + b"\n")
        process.stdin.flush()
        lines = [orjson.loads(answered)]
        while lines[-1].get("id") != 1:  # bounded by the test's timeout
            lines.append(orjson.loads(process.stdout.readline()))
    finally:
        process.kill()
        process.communicate(timeout=5)
    assert [line.get("id") for line in lines] == [0, *[None] * 21, 1], lines
    assert lines[-1]["result"] == {}
    assert lines[1]["params"]["update"]["sessionUpdate"] == "user_message_chunk"


def test_list_shows_every_live_session_with_pages_and_cwd_filter(
    facade: type[Facade], opened: list[Facade], db: Path
) -> None:
    driver = start(facade, opened, db, "--page-size", "2")
    ids = [driver.new_session("/a" if i % 2 else "/b").session_id for i in range(5)]
    driver.prompt(driver.client.session(ids[0]), "title First one")
    listed, cursor, pages = [], None, 0
    while True:
        page = driver.call("list_sessions", cursor=cursor)
        pages += 1
        assert len(page.sessions) <= 2
        listed.extend(page.sessions)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3
    assert sorted(s.session_id for s in listed) == sorted(ids)
    assert listed[0].session_id == ids[0]  # most recently active first
    assert listed[0].title == "First one"
    assert all(s.updated_at and s.updated_at.endswith("Z") for s in listed)
    in_a = driver.call("list_sessions", cwd="/a")
    assert {s.session_id for s in in_a.sessions} == {ids[1], ids[3]}
    assert {s.cwd for s in in_a.sessions} == {"/a"}
    assert driver.call("list_sessions", cwd="/nowhere").sessions == []
    with pytest.raises(RequestError) as bad:
        driver.call("list_sessions", cursor="not-a-cursor")
    assert bad.value.code == -32602


def test_resume_does_not_replay(facade: type[Facade], opened: list[Facade], db: Path) -> None:
    first = start(facade, opened, db)
    session = first.new_session("/w")
    first.prompt(session, "hello")
    first.close()
    seen = Seen()
    second = start(facade, opened, db, on_update=seen)
    second.call("resume_session", session_id=session.session_id, cwd="/w")
    updates, _ = second.prompt(second.client.session(session.session_id), "history")
    assert seen.notifications == []
    assert texts(updates) == ["3 messages, first: hello"]


def test_nonexistent_session_is_an_error_never_a_fresh_one(
    facade: type[Facade], opened: list[Facade], db: Path
) -> None:
    driver = start(facade, opened, db)
    for method in ("load_session", "resume_session"):
        with pytest.raises(RequestError) as missing:
            driver.call(method, session_id="sess_nope", cwd="/w")
        assert missing.value.code == -32002
    with pytest.raises(RequestError) as closing:
        driver.call("close_session", session_id="sess_nope")
    assert closing.value.code == -32002
    assert driver.call("list_sessions").sessions == []


def test_delete_is_idempotent_and_removes_from_list(
    facade: type[Facade], opened: list[Facade], db: Path
) -> None:
    driver = start(facade, opened, db)
    keep, gone = driver.new_session("/w"), driver.new_session("/w")
    driver.call("delete_session", session_id=gone.session_id)
    driver.call("delete_session", session_id=gone.session_id)  # again: silently fine
    driver.call("delete_session", session_id="sess_never_was")
    assert [s.session_id for s in driver.call("list_sessions").sessions] == [keep.session_id]
    with pytest.raises(RequestError):
        driver.call("load_session", session_id=gone.session_id, cwd="/w")


def test_close_cancels_the_running_turn(
    facade: type[Facade], opened: list[Facade], db: Path
) -> None:
    driver = start(facade, opened, db)
    session: Any = driver.new_session("/w")
    if isinstance(driver, SyncFacade):
        turn = session.prompt("forever")
        updates = []
        for update in turn:
            updates.append(update)
            if len(updates) == 3:
                closer = threading.Thread(
                    target=driver.client.close_session, kwargs={"session_id": session.session_id}
                )
                closer.start()
        closer.join(10)
        stop = turn.response.stop_reason if turn.response else None
    else:

        async def go() -> str | None:
            turn = session.prompt("forever")
            closing: asyncio.Task[Any] | None = None
            count = 0
            async for _ in turn:
                count += 1
                if count == 3:
                    closing = asyncio.get_running_loop().create_task(
                        driver.client.close_session(session_id=session.session_id)
                    )
            assert closing is not None
            await closing
            reason: str | None = turn.response.stop_reason if turn.response else None
            return reason

        stop = driver.run(go)
    assert stop == "cancelled"
    # Closed is not deleted: it is still listed and loads.
    assert [s.session_id for s in driver.call("list_sessions").sessions] == [session.session_id]


def test_history_and_agent_data_persist(
    facade: type[Facade], opened: list[Facade], db: Path
) -> None:
    first = start(facade, opened, db)
    session = first.new_session("/w")
    first.prompt(session, "save 42")
    first.close()
    second = start(facade, opened, db)
    second.call("resume_session", session_id=session.session_id, cwd="/w")
    updates, _ = second.prompt(second.client.session(session.session_id), "load")
    assert texts(updates) == ["{'value': '42'}"]


def test_memory_store_and_unstable_table(
    facade: type[Facade], opened: list[Facade], db: Path
) -> None:
    """A MemorySessionStore serves the same rules; an agent on the unstable table gets
    them too (every session method is stable in this schema, so both tables have them)."""
    from acp_sdk import unstable

    driver = start(facade, opened, ":memory:", "--unstable", table=unstable.TABLE)
    caps = driver.agent_capabilities
    assert caps.load_session is True
    new = unstable.NewSessionRequest(cwd="/w", mcp_servers=[])
    created = driver.request(unstable.SESSION_NEW, new)
    listed = driver.request(unstable.SESSION_LIST, unstable.ListSessionsRequest())
    assert [s.session_id for s in listed.sessions] == [created.session_id]
    assert isinstance(listed, unstable.ListSessionsResponse)
    updates, reply = driver.prompt(driver.client.session(created.session_id), "history")
    kinds: list[object] = [type(u) for u in updates]  # unstable models on this table
    assert kinds == [unstable.AgentMessageChunk]
    assert reply.stop_reason == "end_turn"


def test_user_message_is_recorded_as_sent(db: Path) -> None:
    with SyncFacade(argv(db)) as driver:
        session = driver.new_session("/w")
        driver.prompt(session, [TextContent(text="a"), TextContent(text="b")])
    seen = Seen()
    with SyncFacade(argv(db), on_update=seen) as driver:
        driver.call("load_session", session_id=session.session_id, cwd="/w")
    users = [n.update for n in seen.notifications if isinstance(n.update, UserMessageChunk)]
    assert [u.content.text for u in users] == ["a", "b"]  # type: ignore[union-attr]
