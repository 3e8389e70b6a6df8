"""A wrong-typed send from the agent runtime raises `EncodeError` in the handler, and the
connection goes on (issue 28): `send_update` raises before anything is written or kept in
the store, and a handler's wrong-typed result is answered as an internal error (-32603).
In process, through both client facades' in-process helpers, with and without a store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from acp_sdk import Agent, AgentContext, AsyncClient, EncodeError, RequestError
from acp_sdk.agent import MemorySessionStore, serve_agent
from acp_sdk.schema import (
    AgentMessageChunk,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    TextContent,
)
from acp_sdk.testing import aconnect_in_process, connect_in_process
from tests.memory_pipe import MemoryPipe

pytestmark = pytest.mark.timeout(30)


class Sloppy(Agent):
    """Tries a wrong-typed update (and reports what it caught), or returns a wrong-typed
    result, as the prompt's text asks."""

    def __init__(self) -> None:
        self.sessions = 0

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        self.sessions += 1
        return NewSessionResponse(session_id=f"s{self.sessions}")

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        block = params.prompt[0]
        assert isinstance(block, TextContent)
        sid = params.session_id
        if block.text == "bad result":
            return PromptResponse(stop_reason="finished")  # type: ignore[arg-type]
        for bad in (
            AgentMessageChunk(content=TextContent(text=42)),  # type: ignore[arg-type]
            AgentMessageChunk(content=TextContent(text="x"), message_id=7),  # type: ignore[arg-type]
        ):
            try:
                await ctx.send_update(sid, bad)
            except EncodeError as error:
                await ctx.send_update(sid, AgentMessageChunk(content=TextContent(text=str(error))))
        try:
            await ctx.send_update(5, AgentMessageChunk(content=TextContent(text="x")))  # type: ignore[arg-type]
        except EncodeError as error:
            await ctx.send_update(sid, AgentMessageChunk(content=TextContent(text=str(error))))
        return PromptResponse(stop_reason="end_turn")


# Paths from the notification's params, as the client's errors are from theirs.
SAID = [
    "update.content.text: expected a string, got an integer",
    "update.messageId: expected a string, got an integer",
    "sessionId: expected a string, got an integer",
]


def texts(updates: list[Any]) -> list[str]:
    return [
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    ]


def test_the_blocking_client_in_process() -> None:
    with connect_in_process(Sloppy()) as client:
        session = client.new_session(cwd="/")
        assert texts(list(session.prompt("go"))) == SAID
        with pytest.raises(RequestError) as caught:
            session.prompt("bad result").wait()
        assert caught.value.code == -32603
        assert texts(list(session.prompt("again"))) == SAID


def test_the_asyncio_client_in_process() -> None:
    async def scenario() -> None:
        async with aconnect_in_process(Sloppy()) as client:
            session = await client.new_session(cwd="/")
            assert texts([u async for u in session.prompt("go")]) == SAID
            with pytest.raises(RequestError) as caught:
                await session.prompt("bad result")
            assert caught.value.code == -32603
            assert texts([u async for u in session.prompt("again")]) == SAID

    asyncio.run(scenario())


@asynccontextmanager
async def with_store(store: MemorySessionStore) -> AsyncIterator[AsyncClient]:
    to_agent, to_client = MemoryPipe(), MemoryPipe()
    server = asyncio.get_running_loop().create_task(
        serve_agent(Sloppy(), to_agent, to_client, store=store)
    )
    try:
        async with AsyncClient.connect(to_client, to_agent) as client:
            yield client
    finally:
        to_agent.close()
        await asyncio.wait_for(server, 10)


def test_with_a_store_nothing_wrong_is_kept() -> None:
    async def scenario() -> None:
        store = MemorySessionStore()
        async with with_store(store) as client:
            session = await client.new_session(cwd="/")
            assert texts([u async for u in session.prompt("go")]) == SAID
            assert texts([u async for u in session.prompt("again")]) == SAID
        kept = await store.get(session.session_id)
        assert kept is not None

    asyncio.run(scenario())
