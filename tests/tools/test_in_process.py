"""`acp_sdk.testing.connect_in_process` / `aconnect_in_process`: our clients talk to an
agent object in this process, with handlers for files and terminals, and leave nothing
behind (no thread, descriptor or task)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from agent_fs_terminal import Worker  # examples/agent_fs_terminal.py

from acp_sdk import Agent, AgentContext, RequestError, Side
from acp_sdk.agent import extension
from acp_sdk.handlers import LocalFileSystem, LocalTerminals
from acp_sdk.methods import Method
from acp_sdk.schema import (
    AgentMessageChunk,
    InitializeRequest,
    InitializeResponse,
    TextContent,
)
from acp_sdk.testing import aconnect_in_process, connect_in_process

pytestmark = pytest.mark.timeout(60)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.fixture
def no_leaks() -> Iterator[None]:
    threads, fds = set(threading.enumerate()), open_fds()
    yield
    # A pool thread may still be returning from its last job when close() returns: give
    # it a bounded moment, then whatever is left is a leak.
    deadline = time.monotonic() + 5.0
    while not set(threading.enumerate()) <= threads and time.monotonic() < deadline:
        time.sleep(0.01)
    assert set(threading.enumerate()) <= threads
    assert open_fds() <= fds


def text_of(update: object) -> str:
    assert isinstance(update, AgentMessageChunk)
    assert isinstance(update.content, TextContent)
    return update.content.text


@pytest.mark.usefixtures("no_leaks")
def test_files_and_terminals_through_the_blocking_client(tmp_path: Path) -> None:
    handlers = [LocalFileSystem(tmp_path), LocalTerminals()]
    with connect_in_process(Worker(), handlers=handlers) as client:
        [message] = list(client.new_session(cwd=str(tmp_path)).prompt("count"))
    assert text_of(message).startswith("First lines: ['one', 'two']; wc says: 3")
    assert (tmp_path / "notes.txt").read_text() == "one\ntwo\nthree\n"


@pytest.mark.usefixtures("no_leaks")
def test_files_and_terminals_through_the_asyncio_client(tmp_path: Path) -> None:
    async def scenario() -> str:
        handlers = [LocalFileSystem(tmp_path), LocalTerminals()]
        async with aconnect_in_process(Worker(), handlers=handlers) as client:
            session = await client.new_session(cwd=str(tmp_path))
            [message] = [u async for u in session.prompt("count")]
        current = asyncio.current_task()
        assert [t for t in asyncio.all_tasks() if t is not current] == []
        return text_of(message)

    assert asyncio.run(scenario()).startswith("First lines: ['one', 'two']; wc says: 3")


def test_capabilities_follow_the_handlers() -> None:
    with connect_in_process(Worker()) as bare:
        [refusal] = list(bare.new_session(cwd="/tmp").prompt("count"))
    assert "fs.writeTextFile" in text_of(refusal)


@attrs.frozen(kw_only=True, order=False)
class Ping:
    text: str


PING = Method.extension("_test/ping", handled_by=Side.AGENT, params_type=Ping, result_type=Ping)


async def ping(params: Ping, ctx: AgentContext) -> Ping:
    return Ping(text=params.text.upper())


def test_extensions_are_served_and_known_to_the_client() -> None:
    with connect_in_process(Worker(), extensions=[extension(PING, ping)]) as client:
        assert client.request(PING, Ping(text="hi")) == Ping(text="HI")

    async def scenario() -> Ping:
        async with aconnect_in_process(Worker(), extensions=[extension(PING, ping)]) as client:
            return await client.request(PING, Ping(text="ho"))

    assert asyncio.run(scenario()) == Ping(text="HO")


class Refuses(Agent):
    async def initialize(self, params: InitializeRequest, ctx: AgentContext) -> InitializeResponse:
        raise RequestError.invalid_params({"why": "no"})


@pytest.mark.usefixtures("no_leaks")
def test_a_failed_handshake_raises_and_leaves_nothing_behind() -> None:
    with pytest.raises(RequestError), connect_in_process(Refuses()):
        pass

    async def scenario() -> None:
        async with aconnect_in_process(Refuses()):
            pass

    with pytest.raises(RequestError):
        asyncio.run(scenario())
