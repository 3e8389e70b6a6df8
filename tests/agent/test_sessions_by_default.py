"""An agent that overrides only `prompt` serves `session/new`: fresh unique ids, kept for
the connection; with a store, the store keeps them (as before). docs/agents.md's `Fixer`
and `Cleaner` work under `python -m acp_sdk chat`; `connect_in_process` and
`aconnect_in_process` take `store=`. On both clients."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from acp_sdk import Agent, AgentContext, CapabilityNotNegotiated, RequestError
from acp_sdk.agent import MemorySessionStore
from acp_sdk.schema import AgentMessageChunk, PromptRequest, PromptResponse, TextContent
from acp_sdk.testing import aconnect_in_process, connect_in_process

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[2]


class OnlyPrompt(Agent):
    """Says which session it runs in."""

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        await ctx.session(params.session_id).say(f"in {params.session_id}")
        return PromptResponse(stop_reason="end_turn")


class SyncWay:
    """The blocking `Client` over `connect_in_process`."""

    def __init__(self, agent: Agent, **options: Any) -> None:
        self._context: AbstractContextManager[Any] = connect_in_process(agent, **options)

    def __enter__(self) -> SyncWay:
        self.client = self._context.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._context.__exit__(*exc)

    def new_session(self) -> str:
        session_id: str = self.client.new_session(cwd="/project").session_id
        return session_id

    def prompt(self, session_id: str, text: str) -> list[Any]:
        return list(self.client.session(session_id).prompt(text))

    def call(self, name: str, **params: Any) -> Any:
        return getattr(self.client, name)(**params)


class AsyncWay:
    """The `AsyncClient` over `aconnect_in_process`, in a loop of this test's own."""

    def __init__(self, agent: Agent, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._context = aconnect_in_process(agent, **options)

    def __enter__(self) -> AsyncWay:
        self.client = self._loop.run_until_complete(self._context.__aenter__())
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._loop.run_until_complete(self._context.__aexit__(*exc))
        finally:
            self._loop.close()

    def new_session(self) -> str:
        async def go() -> str:
            session = await self.client.new_session(cwd="/project")
            session_id: str = session.session_id
            return session_id

        return self._loop.run_until_complete(go())

    def prompt(self, session_id: str, text: str) -> list[Any]:
        async def go() -> list[Any]:
            return [u async for u in self.client.session(session_id).prompt(text)]

        return self._loop.run_until_complete(go())

    def call(self, name: str, **params: Any) -> Any:
        return self._loop.run_until_complete(getattr(self.client, name)(**params))


WAYS: dict[str, Callable[..., SyncWay | AsyncWay]] = {"sync": SyncWay, "async": AsyncWay}


@pytest.fixture(params=sorted(WAYS))
def way(request: pytest.FixtureRequest) -> Callable[..., SyncWay | AsyncWay]:
    return WAYS[request.param]


def said(updates: list[Any]) -> str:
    [update] = updates
    assert isinstance(update, AgentMessageChunk)
    assert isinstance(update.content, TextContent)
    return update.content.text


def test_session_new_is_served_with_fresh_ids(way: Callable[..., SyncWay | AsyncWay]) -> None:
    with way(OnlyPrompt()) as client:
        first, second = client.new_session(), client.new_session()
        assert first != second
        assert first.startswith("sess_")
        assert said(client.prompt(first, "hi")) == f"in {first}"
        assert said(client.prompt(second, "hi")) == f"in {second}"


def test_a_session_this_connection_never_opened_is_not_found(
    way: Callable[..., SyncWay | AsyncWay],
) -> None:
    with way(OnlyPrompt()) as client:
        with pytest.raises(RequestError) as caught:
            client.prompt("sess_made_up", "hi")
        assert caught.value.code == -32002
        assert caught.value.data == {"sessionId": "sess_made_up"}
        # ...and another connection's sessions are not this one's.
        with way(OnlyPrompt()) as other:
            theirs = other.new_session()
        with pytest.raises(RequestError):
            client.prompt(theirs, "hi")


def test_without_a_store_nothing_else_is_advertised(
    way: Callable[..., SyncWay | AsyncWay],
) -> None:
    with way(OnlyPrompt()) as client:
        caps = client.client.agent_capabilities
        assert caps.load_session is False
        sessions = caps.session_capabilities
        assert (sessions.list, sessions.resume, sessions.close, sessions.delete) == (None,) * 4
        refused: list[tuple[str, dict[str, Any]]] = [
            ("load_session", {"session_id": "s", "cwd": "/project", "mcp_servers": []}),
            ("list_sessions", {}),
            ("close_session", {"session_id": "s"}),
        ]
        for name, params in refused:
            with pytest.raises(CapabilityNotNegotiated):
                client.call(name, **params)


def test_with_a_store_the_store_keeps_the_sessions(
    way: Callable[..., SyncWay | AsyncWay],
) -> None:
    store = MemorySessionStore()
    with way(OnlyPrompt(), store=store) as client:
        session_id = client.new_session()
        client.prompt(session_id, "hi")
        assert client.client.agent_capabilities.load_session is True
    # The store outlives the connection: a second one loads the session from it.
    stored = asyncio.run(store.get(session_id))
    assert stored is not None
    assert stored.cwd == "/project"
    with way(OnlyPrompt(), store=store) as again:
        listed = again.call("list_sessions")
        assert [s.session_id for s in listed.sessions] == [session_id]


# ------------------------------------------------------------------ the guide's agents


def guide_agent(name: str) -> str:
    """The `name` example of docs/agents.md, as a program that runs it."""
    guide = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    blocks: list[str] = re.findall(r"```python\n(.*?)```", guide, re.S)
    [block] = [b for b in blocks if f"class {name}(" in b]
    return block + f"\n\nfrom acp_sdk import run_agent\n\nrun_agent({name}())\n"


def chat(source: str, tmp_path: Path, lines: str) -> subprocess.CompletedProcess[str]:
    agent = tmp_path / "my_agent.py"
    agent.write_text(source, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "acp_sdk", "chat", "--yes", "--", sys.executable, str(agent)],
        input=lines,
        capture_output=True,
        text=True,
        timeout=45,
        check=False,
    )


def test_the_guides_cleaner_chats(tmp_path: Path) -> None:
    result = chat(guide_agent("Cleaner"), tmp_path, "clean up\nagain\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("Deleted build/.") == 2
    assert "-32601" not in result.stderr


def test_the_guides_fixer_chats(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text("print('teh end')\n", encoding="utf-8")
    source = guide_agent("Fixer").replace("/project/app.py", str(app))
    result = chat(source, tmp_path, "fix it\n")
    assert result.returncode == 0, result.stderr
    assert "Fix the typo" in result.stdout
    assert "-32601" not in result.stderr


@pytest.fixture(autouse=True)
def _no_leftover_loops() -> Iterator[None]:
    yield
    asyncio.set_event_loop(None)
