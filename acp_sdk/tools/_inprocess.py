"""Test an agent in-process: our clients connected to an `Agent` object, no subprocess.

    def test_my_agent() -> None:
        with connect_in_process(MyAgent(), handlers=[AllowOnce()]) as client:
            turn = client.new_session(cwd="/project").prompt("hello")
            assert "hello" in "".join(...)

    async def test_my_agent_async() -> None:
        async with aconnect_in_process(MyAgent(), handlers=[AllowOnce()]) as client:
            ...

Theory of operation: `aconnect_in_process` runs `serve_agent` as a task of the caller's
event loop, over two in-memory byte pipes (bounded: a writer waits while 1 MiB is unread,
as over a real pipe). `connect_in_process` runs the agent's event loop in a thread of its
own, over two `os.pipe()`s, because the blocking `Client` blocks its caller's thread.
Either way the agent is served exactly as `run_agent` serves it (same runtime, same
framing, same capability checks; `store=`, `extensions=`, the agent's send buffer), and
leaving the block closes the client, which ends the agent's input: the agent's task or
thread is then awaited or joined (within `STOP_TIMEOUT`), its pipes closed, and an
exception that escaped the agent's runtime is raised there. Nothing outlives the block
(but a `store=` passed in, which stays open).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncGenerator, Generator
from typing import Any, Final

from typing_extensions import Unpack

from acp_sdk._driver.vocabulary import Limits
from acp_sdk.agent import _stdio
from acp_sdk.agent._runtime import ANSWER_GRACE, Agent, Extensions, _bind_extensions, serve_agent
from acp_sdk.agent._store import SessionStore
from acp_sdk.client._aio import AsyncClient
from acp_sdk.client._options import ClientOptions
from acp_sdk.client._sync import Client
from acp_sdk.handlers import AnyHandlers, ClientHandlers

__all__ = ["STOP_TIMEOUT", "aconnect_in_process", "connect_in_process"]

STOP_TIMEOUT: Final = ANSWER_GRACE + 5.0
"""Seconds the agent gets to stop once the client closed (its runtime gives handlers
still running `ANSWER_GRACE` seconds to answer)."""

_PIPE_LIMIT: Final = 1 << 20
_AGENT_SEND_BUFFER: Final = Limits().max_send_buffer


class _MemoryPipe:
    """One direction of an in-memory byte stream: `read` for one end, `write` + `drain`
    + `close` for the other. `drain` waits while more than `_PIPE_LIMIT` bytes are
    unread, so a peer that stops reading holds the writer back, as a real pipe does."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._closed = False
        self._readable = asyncio.Event()
        self._writable = asyncio.Event()
        self._writable.set()

    async def read(self, n: int = -1, /) -> bytes:
        while not self._buffer and not self._closed:
            self._readable.clear()
            await self._readable.wait()
        size = len(self._buffer) if n < 0 else min(n, len(self._buffer))
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        if len(self._buffer) <= _PIPE_LIMIT:
            self._writable.set()
        return data

    def write(self, data: bytes, /) -> None:
        if self._closed:
            raise BrokenPipeError("the in-process pipe is closed")
        self._buffer += data
        self._readable.set()
        if len(self._buffer) > _PIPE_LIMIT:
            self._writable.clear()

    async def drain(self) -> None:
        await self._writable.wait()

    def close(self) -> None:
        self._closed = True
        self._readable.set()
        self._writable.set()


@contextlib.asynccontextmanager
async def aconnect_in_process(
    agent: Agent,
    *,
    extensions: Extensions | None = None,
    store: SessionStore | None = None,
    agent_max_send_buffer: int = _AGENT_SEND_BUFFER,
    **options: Unpack[ClientOptions[AnyHandlers]],
) -> AsyncGenerator[AsyncClient, None]:
    """An open, initialized `AsyncClient` talking to `agent`, served in this event loop.

    Args:
        agent: The agent object to serve (as `run_agent(agent)` would).
        extensions: The agent's extension handlers (as for `serve_agent`); their rows are
            added to the client's table too.
        store: The agent's session store, as for `run_agent(agent, store=...)`: sessions
            are recorded there and the runtime serves the session methods the agent
            does not override. Left open, so a test can open a second connection on it
            (`session/load`) or look inside.
        agent_max_send_buffer: The agent's `max_send_buffer` (`max_send_buffer` is the
            client's).
        **options: The client's options (`handlers`, `track_state`, `request_timeout`,
            `table`: both sides', ...), as for `AsyncClient.connect`.

    Raises:
        RuntimeError: The agent did not stop within `STOP_TIMEOUT` after the client closed.
    """
    table, _ = _bind_extensions(options.get("table"), extensions)
    options["table"] = table
    to_agent, to_client = _MemoryPipe(), _MemoryPipe()
    server = asyncio.get_running_loop().create_task(
        serve_agent(
            agent,
            to_agent,
            to_client,
            table=table,
            extensions=extensions,
            store=store,
            max_send_buffer=agent_max_send_buffer,
        )
    )
    try:
        async with AsyncClient.connect(to_client, to_agent, **options) as client:
            yield client
    finally:
        to_agent.close()  # the agent's end of input, also when opening failed
        done, _ = await asyncio.wait({server}, timeout=STOP_TIMEOUT)
        to_client.close()
        if not done:
            server.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await server
            raise RuntimeError(f"the agent did not stop within {STOP_TIMEOUT} s")
    server.result()  # what escaped the agent's runtime, if anything


@contextlib.contextmanager
def connect_in_process(
    agent: Agent,
    *,
    extensions: Extensions | None = None,
    store: SessionStore | None = None,
    agent_max_send_buffer: int = _AGENT_SEND_BUFFER,
    **options: Unpack[ClientOptions[ClientHandlers]],
) -> Generator[Client, None, None]:
    """An open, initialized `Client` talking to `agent`, served in a thread of its own.

    Args:
        agent: The agent object to serve (as `run_agent(agent)` would), on an event loop
            in a new thread; keep what the test shares with it thread-safe.
        extensions: The agent's extension handlers (as for `serve_agent`); their rows are
            added to the client's table too.
        store: The agent's session store, as for `run_agent(agent, store=...)`: sessions
            are recorded there and the runtime serves the session methods the agent
            does not override. Left open, so a test can open a second connection on it
            (`session/load`) or look inside; the agent's event loop uses it from its
            thread (both stores that ship allow that).
        agent_max_send_buffer: The agent's `max_send_buffer` (`max_send_buffer` is the
            client's).
        **options: The client's options (`handlers`, `track_state`, `request_timeout`,
            `table`: both sides', ...), as for `Client.connect`.

    Raises:
        RuntimeError: The agent did not stop within `STOP_TIMEOUT` after the client closed.
    """
    table, _ = _bind_extensions(options.get("table"), extensions)
    options["table"] = table
    agent_in, client_out = os.pipe()
    client_in, agent_out = os.pipe()
    failure: list[BaseException] = []

    def serve() -> None:
        try:
            served = _serve_fds(
                agent, agent_in, agent_out, table, extensions, store, agent_max_send_buffer
            )
            asyncio.run(served)
        except BaseException as error:  # handed to the test's thread below
            failure.append(error)
        finally:
            os.close(agent_out)  # the client's end of input

    thread = threading.Thread(target=serve, name="acp-in-process-agent", daemon=True)
    thread.start()
    reader = os.fdopen(client_in, "rb")
    writer = os.fdopen(client_out, "wb")
    try:
        with Client.connect(reader, writer, **options) as client:
            yield client
    finally:
        writer.close()  # the agent's end of input, also when opening failed
        thread.join(STOP_TIMEOUT)
        reader.close()
        if thread.is_alive():
            raise RuntimeError(f"the agent did not stop within {STOP_TIMEOUT} s")
        os.close(agent_in)
    if failure:
        raise failure[0]


async def _serve_fds(
    agent: Agent,
    in_fd: int,
    out_fd: int,
    table: Any,
    extensions: Extensions | None,
    store: SessionStore | None,
    max_send_buffer: int,
) -> None:
    reader, writer, transports = await _stdio.open_fd_streams(in_fd, out_fd)
    try:
        await serve_agent(
            agent,
            reader,
            writer,
            table=table,
            extensions=extensions,
            store=store,
            max_send_buffer=max_send_buffer,
        )
    finally:
        for transport in transports:
            transport.close()
