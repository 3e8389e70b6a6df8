"""The runtime's session store in-process (`serve_agent` over memory pipes, `AsyncClient`):
write-ahead order, a store shared between connections, what the agent overrides, the
agent's own reads, failures, and both stores' contract."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from acp_sdk import Agent, AgentContext, AsyncClient, RequestError
from acp_sdk.agent import (
    MemorySessionStore,
    SessionStore,
    SqliteSessionStore,
    StoredSession,
    serve_agent,
)
from acp_sdk.handlers import AsyncClientHandlers
from acp_sdk.schema import (
    AgentMessageChunk,
    CancelNotification,
    ListSessionsRequest,
    ListSessionsResponse,
    NewSessionRequest,
    NewSessionResponse,
    PermissionOption,
    Plan,
    PlanEntry,
    PromptRequest,
    PromptResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    SessionInfo,
    TextContent,
    ToolCall,
    ToolCallProgress,
    ToolCallUpdate,
)

pytestmark = pytest.mark.timeout(30)


class _Pipe:
    """An in-memory byte pipe with the halves asyncio streams have."""

    def __init__(self) -> None:
        self._data = asyncio.Queue[bytes]()

    async def read(self, n: int = -1) -> bytes:
        return await self._data.get()

    def write(self, data: bytes) -> None:
        self._data.put_nowait(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self._data.put_nowait(b"")


@asynccontextmanager
async def connected(
    agent: Agent, store: SessionStore | None, **options: Any
) -> AsyncIterator[AsyncClient]:
    to_agent, to_client = _Pipe(), _Pipe()
    server = asyncio.get_running_loop().create_task(
        serve_agent(agent, to_agent, to_client, store=store)
    )
    try:
        async with AsyncClient.connect(to_client, to_agent, **options) as client:
            yield client
    finally:
        to_agent.close()
        await asyncio.wait_for(server, 10)


def say(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(content=TextContent(text=text))


class Talker(Agent):
    """Answers a prompt with a tool call, a plan and the history it sees."""

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        sid = params.session_id
        await ctx.send_update(sid, ToolCall(tool_call_id="t1", title="Read", status="pending"))
        await ctx.session_update(  # the generated call: recorded as well
            session_id=sid,
            update=Plan(entries=[PlanEntry(content="x", priority="low", status="pending")]),
        )
        await ctx.send_update(sid, ToolCallProgress(tool_call_id="t1", status="completed"))
        state = await ctx.history(sid)
        roles = ",".join(m.role for m in state.messages)
        tool = state.tool_call("t1")
        await ctx.send_update(sid, say(f"{roles}|{tool.status if tool else None}"))
        return PromptResponse(stop_reason="end_turn")


def test_history_is_the_clients_reducer_over_the_recorded_session() -> None:
    async def go() -> list[str]:
        async with connected(Talker(), MemorySessionStore()) as client:
            session = await client.new_session(cwd="/w")
            first = [u async for u in session.prompt("one")]
            second = [u async for u in session.prompt("two")]
        return [u.content.text for u in (*first, *second) if isinstance(u, AgentMessageChunk)]  # type: ignore[union-attr]

    # The second turn sees the first turn's messages and its own prompt.
    assert asyncio.run(go()) == ["user|completed", "user,agent,user|completed"]


def test_a_store_shared_by_connections_and_a_fresh_store_per_test() -> None:
    store = MemorySessionStore()

    async def go() -> tuple[str, list[Any], list[str]]:
        async with connected(Talker(), store) as client:
            session = await client.new_session(cwd="/w")
            _ = [u async for u in session.prompt("one")]
        replayed: list[Any] = []
        async with connected(Talker(), store, on_update=replayed.append) as client:
            await client.load_session(session_id=session.session_id, cwd="/w")
            listed = await client.list_sessions()
        return session.session_id, replayed, [s.session_id for s in listed.sessions]

    session_id, replayed, listed = asyncio.run(go())
    assert listed == [session_id]
    kinds = [type(n.update).__name__ for n in replayed]
    assert kinds == [
        "UserMessageChunk",
        "ToolCall",
        "Plan",
        "ToolCallProgress",
        "AgentMessageChunk",
    ]


class Gate(MemorySessionStore):
    """A store whose appends wait until the test lets them finish."""

    def __init__(self) -> None:
        super().__init__()
        self.open = asyncio.Event()
        self.appending = asyncio.Event()

    async def append(self, session_id: str, updates: Sequence[Any], at: str) -> None:
        if any(u.get("sessionUpdate") == "agent_message_chunk" for u in updates):
            self.appending.set()
            await self.open.wait()
        await super().append(session_id, updates, at)


class Once(Agent):
    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        await ctx.send_update(params.session_id, say("kept first"))
        return PromptResponse(stop_reason="end_turn")


def test_an_update_is_sent_only_after_the_store_kept_it() -> None:
    async def go() -> tuple[int, int]:
        store = Gate()
        seen: list[Any] = []
        async with connected(Once(), store) as client:
            session = await client.new_session(cwd="/w")
            turn = session.prompt("go")
            collecting = asyncio.get_running_loop().create_task(_collect(turn, seen))
            await asyncio.wait_for(store.appending.wait(), 5)
            await asyncio.sleep(0.2)  # the update would have arrived by now if sent
            before = len(seen)
            store.open.set()
            await asyncio.wait_for(collecting, 5)
        return before, len(seen)

    assert asyncio.run(go()) == (0, 1)


async def _collect(turn: Any, into: list[Any]) -> None:
    async for update in turn:
        into.append(update)


class Failing(MemorySessionStore):
    async def append(self, session_id: str, updates: Sequence[Any], at: str) -> None:
        raise OSError("disk full")


def test_a_store_failing_mid_turn_does_not_end_the_turn(caplog: pytest.LogCaptureFixture) -> None:
    async def go() -> list[Any]:
        async with connected(Once(), Failing()) as client:
            session = await client.new_session(cwd="/w")
            updates = [u async for u in session.prompt("a")]
            updates += [u async for u in session.prompt("b")]
            return updates

    with caplog.at_level(logging.ERROR, logger="acp_sdk.agent"):
        assert len(asyncio.run(go())) == 2
    failures = [r for r in caplog.records if "session store failed" in r.getMessage()]
    assert len(failures) == 1  # said once, not per update


class OwnIds(Agent):
    """Makes its own ids and lists sessions itself; the store serves the rest."""

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"mine-{params.cwd}")

    async def list_sessions(
        self, params: ListSessionsRequest, ctx: AgentContext
    ) -> ListSessionsResponse:
        return ListSessionsResponse(sessions=[SessionInfo(session_id="listed-by-me", cwd="/")])

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        await ctx.send_update(params.session_id, say("hi"))
        return PromptResponse(stop_reason="end_turn")


def test_what_the_agent_overrides_stays_its_own() -> None:
    async def go() -> tuple[Any, ...]:
        store = MemorySessionStore()
        async with connected(OwnIds(), store) as client:
            caps = client.agent_capabilities
            session = await client.new_session(cwd="/w")
            _ = [u async for u in session.prompt("x")]
            listed = await client.list_sessions()
        kept = await store.get("mine-/w")
        return caps, session.session_id, listed, kept, await store.read("mine-/w", 0, 10)

    caps, session_id, listed, kept, updates = asyncio.run(go())
    assert session_id == "mine-/w"
    assert [s.session_id for s in listed.sessions] == ["listed-by-me"]
    assert kept is not None
    assert kept.cwd == "/w"  # recorded all the same
    assert [u["sessionUpdate"] for _, u in updates] == ["user_message_chunk", "agent_message_chunk"]
    assert caps.load_session is True
    assert caps.session_capabilities.list is not None


def test_the_agents_reads_need_a_store() -> None:
    class Reader(Agent):
        async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
            assert ctx.store is None
            with pytest.raises(RuntimeError, match="store="):
                await ctx.history(params.session_id)
            with pytest.raises(RuntimeError):
                await ctx.save_data(params.session_id, 1)
            return PromptResponse(stop_reason="end_turn")

    class Plain(Reader):
        async def new_session(
            self, params: NewSessionRequest, ctx: AgentContext
        ) -> NewSessionResponse:
            return NewSessionResponse(session_id="s")

    async def go() -> str:
        async with connected(Plain(), None) as client:
            assert client.agent_capabilities.load_session is False
            session = await client.new_session(cwd="/w")
            turn = session.prompt("x")
            _ = [u async for u in turn]
            assert turn.response is not None
            return turn.response.stop_reason

    assert asyncio.run(go()) == "end_turn"


# ---------------------------------------------------------------------- both stores


StoreFactory = Callable[[Path], SessionStore]
STORES: dict[str, StoreFactory] = {
    "memory": lambda _: MemorySessionStore(),
    "sqlite": lambda path: SqliteSessionStore(path / "s.db"),
}


Body = Callable[[SessionStore], Awaitable[None]]


def run_on(factory: StoreFactory, path: Path, body: Body) -> None:
    async def go() -> None:
        store = factory(path)
        try:
            await body(store)
        finally:
            await store.aclose()

    asyncio.run(go())


@pytest.mark.parametrize("kind", sorted(STORES))
def test_store_contract(kind: str, tmp_path: Path) -> None:
    async def body(store: SessionStore) -> None:
        assert await store.create(StoredSession(session_id="a", cwd="/w", updated_at="1"))
        assert not await store.create(StoredSession(session_id="a", cwd="/x", updated_at="9"))
        assert (await store.get("a")).cwd == "/w"  # type: ignore[union-attr]
        await store.create(StoredSession(session_id="b", cwd="/v", updated_at="2"))
        await store.append("a", [{"sessionUpdate": "session_info_update", "title": "T"}], "3")
        assert [s.session_id for s in await store.page(None, None, 10)] == ["a", "b"]
        assert (await store.get("a")).title == "T"  # type: ignore[union-attr]
        await store.append("a", [{"sessionUpdate": "session_info_update", "title": None}], "4")
        assert (await store.get("a")).title is None  # type: ignore[union-attr]
        await store.append("a", [{"sessionUpdate": "session_info_update"}], "5")
        assert (await store.get("a")).updated_at == "5"  # type: ignore[union-attr]
        first = await store.page(None, None, 1)
        rest = await store.page(None, (first[0].updated_at, first[0].session_id), 10)
        assert [s.session_id for s in rest] == ["b"]
        assert [s.session_id for s in await store.page("/v", None, 10)] == ["b"]
        await store.append("nobody", [{"sessionUpdate": "plan", "entries": []}], "6")
        assert await store.get("nobody") is None
        read = await store.read("a", 0, 2)
        assert len(read) == 2
        assert read[0][0] < read[1][0]
        assert len(await store.read("a", read[-1][0], 10)) == 1
        await store.save_data("a", {"model": "x", "n": [1, 2]})
        assert await store.load_data("a") == {"model": "x", "n": [1, 2]}
        assert await store.load_data("b") is None
        await store.delete("a")
        await store.delete("a")
        assert await store.get("a") is None
        assert await store.read("a", 0, 10) == []
        assert await store.load_data("a") is None

    run_on(STORES[kind], tmp_path, body)


def test_concurrent_appends_keep_each_sessions_order(tmp_path: Path) -> None:
    """Many tasks appending at once share commits (the worker batches them) and each
    session's updates stay in the order its task appended them."""

    async def body(store: SessionStore) -> None:
        async def stream(session_id: str) -> None:
            await store.create(StoredSession(session_id=session_id, cwd="/w", updated_at="0"))
            for index in range(100):
                await store.append(session_id, [{"i": index}], "1")

        await asyncio.gather(*(stream(f"s{n}") for n in range(8)))
        for n in range(8):
            got = [u["i"] for _, u in await store.read(f"s{n}", 0, 1000)]
            assert got == list(range(100))

    run_on(STORES["sqlite"], tmp_path, body)


def test_a_closed_sqlite_store_refuses_work(tmp_path: Path) -> None:
    from acp_sdk.agent import SessionStoreError

    async def go() -> None:
        store = SqliteSessionStore(tmp_path / "s.db")
        await store.aclose()
        await store.aclose()
        with pytest.raises(SessionStoreError, match="closed"):
            await store.get("a")

    asyncio.run(go())


def test_close_of_a_listed_session_that_is_not_running_succeeds() -> None:
    async def go() -> None:
        async with connected(Once(), MemorySessionStore()) as client:
            session = await client.new_session(cwd="/w")
            await client.close_session(session_id=session.session_id)
            with pytest.raises(RequestError):
                await client.close_session(session_id="nope")

    asyncio.run(go())


class Slow(MemorySessionStore):
    """Each append takes a while: updates pile up in the runtime's outbox."""

    async def append(self, session_id: str, updates: Sequence[Any], at: str) -> None:
        await asyncio.sleep(0.002)
        await super().append(session_id, updates, at)


class Asker(Agent):
    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        for index in range(300):
            await ctx.send_update(params.session_id, say(f"u{index}"))
        if params.prompt and getattr(params.prompt[0], "text", "") == "ask":
            await ctx.request_permission(
                session_id=params.session_id,
                tool_call=ToolCallUpdate(tool_call_id="t"),
                options=[PermissionOption(option_id="ok", name="OK", kind="allow_once")],
            )
        return PromptResponse(stop_reason="end_turn")


def test_nothing_the_agent_sends_overtakes_updates_still_being_kept() -> None:
    """The turn's answer and a permission request both reach the client after every
    update sent before them, however slowly the store keeps them."""

    class Count(AsyncClientHandlers):
        seen_at_question: int | None = None

        async def request_permission(
            self, params: RequestPermissionRequest
        ) -> RequestPermissionResponse:
            Count.seen_at_question = len(updates)
            return RequestPermissionResponse(outcome=SelectedPermissionOutcome(option_id="ok"))

    updates: list[Any] = []
    stray: list[Any] = []

    async def go() -> None:
        async with connected(Asker(), Slow(), handlers=Count(), on_update=stray.append) as client:
            session = await client.new_session(cwd="/w")
            for text in ("go", "ask"):
                updates.clear()
                async for update in session.prompt(text):
                    updates.append(update)
                assert len(updates) == 300

    asyncio.run(go())
    assert stray == []  # none arrived after its turn's answer
    assert Count.seen_at_question == 300


class Forever(Agent):
    def __init__(self) -> None:
        self.cancelled: list[str] = []
        self.started = asyncio.Event()

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        while True:
            await ctx.send_update(params.session_id, say("tick"))
            self.started.set()
            await asyncio.sleep(0.01)

    async def cancel(self, params: CancelNotification, ctx: AgentContext) -> None:
        self.cancelled.append(params.session_id)


@pytest.mark.parametrize("method", ["close_session", "delete_session"])
def test_close_and_delete_cancel_the_turn_as_session_cancel_does(method: str) -> None:
    agent = Forever()

    async def go() -> tuple[str | None, str, list[str]]:
        store = MemorySessionStore()
        async with connected(agent, store) as client:
            session = await client.new_session(cwd="/w")
            await client.new_session(cwd="/w")  # another session: its turns are not touched
            turn = session.prompt("go")
            draining = asyncio.get_running_loop().create_task(_collect(turn, []))
            await asyncio.wait_for(agent.started.wait(), 5)
            await getattr(client, method)(session_id=session.session_id)
            await asyncio.wait_for(draining, 5)
            assert turn.response is not None
            listed = [s.session_id for s in (await client.list_sessions()).sessions]
        return turn.response.stop_reason, session.session_id, listed

    stop, session_id, listed = asyncio.run(go())
    assert stop == "cancelled"
    assert agent.cancelled == [session_id]  # the agent's cancel ran, for that session only
    assert len(listed) == (2 if method == "close_session" else 1)
    assert (session_id in listed) == (method == "close_session")


class Torrent(Agent):
    """Streams without a pause (it yields only when the outbox is full) until cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        while True:
            await ctx.send_update(params.session_id, say("x"))
            self.started.set()


def test_a_session_streaming_without_pause_does_not_hold_back_other_answers() -> None:
    agent = Torrent()

    async def go() -> int:
        async with connected(agent, MemorySessionStore()) as client:
            session = await client.new_session(cwd="/w")
            turn = session.prompt("go")
            seen: list[Any] = []
            draining = asyncio.get_running_loop().create_task(_collect(turn, seen))
            await asyncio.wait_for(agent.started.wait(), 5)
            listed = await asyncio.wait_for(client.list_sessions(), 10)
            await session.cancel()
            await asyncio.wait_for(draining, 10)
            return len(listed.sessions)

    assert asyncio.run(go()) == 1
