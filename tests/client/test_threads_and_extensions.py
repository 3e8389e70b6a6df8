"""What only one facade can show: many threads on one Client, timeouts, extension rows."""

from __future__ import annotations

import asyncio
import sys
import threading

import attrs
import pytest

from acp_sdk import Agent, AgentContext, AsyncClient, Client, RequestTimeout, Side
from acp_sdk.agent import serve_agent
from acp_sdk.methods import TABLE, Method
from acp_sdk.schema import AgentMessageChunk
from tests.client.facades import SCENARIO

pytestmark = pytest.mark.timeout(60)


def test_32_threads_share_one_client() -> None:
    errors: list[BaseException] = []
    counts: list[int] = []
    with Client.spawn(SCENARIO) as client:

        def work() -> None:
            try:
                session = client.new_session(cwd="/tmp")
                turn = session.prompt("stream 20")
                updates = list(turn)
                assert turn.stop_reason == "end_turn"
                assert all(isinstance(u, AgentMessageChunk) for u in updates)
                counts.append(len(updates))
            except BaseException as error:  # collected and re-raised below
                errors.append(error)

        threads = [threading.Thread(target=work) for _ in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert errors == []
    assert counts == [20] * 32


SLOW_AGENT = [sys.executable, "-c", "import time, sys; sys.stdin.read()"]


def test_request_timeout_sync() -> None:
    from acp_sdk.methods import INITIALIZE
    from acp_sdk.schema import InitializeRequest

    with (
        Client.spawn(SLOW_AGENT, initialize=False, close_timeout=0.1) as client,
        pytest.raises(RequestTimeout),
    ):
        client.request(INITIALIZE, InitializeRequest(protocol_version=1), timeout=0.2)


def test_request_timeout_async() -> None:
    async def go() -> None:
        from acp_sdk.methods import INITIALIZE
        from acp_sdk.schema import InitializeRequest

        async with AsyncClient.spawn(SLOW_AGENT, initialize=False, close_timeout=0.1) as client:
            with pytest.raises(RequestTimeout):
                await client.request(INITIALIZE, InitializeRequest(protocol_version=1), timeout=0.2)

    asyncio.run(go())


# ------------------------------------------------------------------ extension methods


@attrs.frozen(kw_only=True, order=False)
class Ping:
    text: str


@attrs.frozen(kw_only=True, order=False)
class Pong:
    text: str
    length: int


PING = Method.extension("_acme/ping", handled_by=Side.AGENT, params_type=Ping, result_type=Pong)
EXTENDED = TABLE.extend([PING])


class PingAgent(Agent):
    pass


def test_extension_method_round_trip_over_memory_streams() -> None:
    async def go() -> Pong:
        client_to_agent = _Pipe()
        agent_to_client = _Pipe()

        async def ping(params: Ping, ctx: AgentContext) -> Pong:
            return Pong(text=params.text.upper(), length=len(params.text))

        server = asyncio.get_running_loop().create_task(
            serve_agent(
                PingAgent(),
                client_to_agent,
                agent_to_client,
                table=EXTENDED,
                extensions={"ext_acme_ping": ping},
            )
        )
        async with AsyncClient.connect(agent_to_client, client_to_agent, table=EXTENDED) as client:
            result = await client.request(PING, Ping(text="hello"))
        client_to_agent.close()
        await asyncio.wait_for(server, 5)
        return result

    assert asyncio.run(go()) == Pong(text="HELLO", length=5)


class _Pipe:
    """An in-memory byte pipe with the reader and writer halves asyncio streams have."""

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


SLOW = Method.extension("_acme/slow", handled_by=Side.AGENT, params_type=Ping, result_type=Pong)


def test_cancelling_an_awaiting_task_sends_cancel_request() -> None:
    """The agent's handler is cancelled and the request is answered -32800."""

    async def go() -> list[str]:
        client_to_agent, agent_to_client = _Pipe(), _Pipe()
        events: list[str] = []

        async def slow(params: Ping, ctx: AgentContext) -> Pong:
            events.append("started")
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                events.append("cancelled")
                raise
            return Pong(text="late", length=0)

        table = TABLE.extend([SLOW])
        server = asyncio.get_running_loop().create_task(
            serve_agent(
                PingAgent(),
                client_to_agent,
                agent_to_client,
                table=table,
                extensions={"ext_acme_slow": slow},
            )
        )
        async with AsyncClient.connect(agent_to_client, client_to_agent, table=table) as client:
            call = asyncio.get_running_loop().create_task(client.request(SLOW, Ping(text="x")))
            while "started" not in events:
                await asyncio.sleep(0.01)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            for _ in range(200):
                if "cancelled" in events:
                    break
                await asyncio.sleep(0.01)
        client_to_agent.close()
        await asyncio.wait_for(server, 5)
        return events

    assert asyncio.run(go()) == ["started", "cancelled"]


def test_a_client_on_the_unstable_table_streams_unstable_models() -> None:
    from acp_sdk import unstable

    with Client.spawn(SCENARIO, table=unstable.TABLE) as client:
        session = client.request(
            unstable.SESSION_NEW, unstable.NewSessionRequest(cwd="/tmp", mcp_servers=[])
        )
        turn = client.session(session.session_id).prompt("echo hi")
        # Statically a turn yields stable updates; on the unstable table they are the
        # unstable schema's classes (documented in docs/unstable.md).
        updates: list[object] = list(turn)
    assert [type(u) for u in updates] == [unstable.AgentMessageChunk]
    assert turn.stop_reason == "end_turn"


STUBBORN_AGENT = [
    sys.executable,
    "-c",
    "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: time.sleep(1)",
]


def test_close_escalates_to_kill_and_reaps() -> None:
    client = Client.spawn(
        STUBBORN_AGENT, initialize=False, close_timeout=0.2, terminate_timeout=0.2
    )
    client.open()
    process = client.process
    assert process is not None
    client.close()
    assert process.returncode is not None  # reaped
    assert process.returncode < 0  # killed by a signal: it ignored stdin EOF and SIGTERM


def test_async_close_escalates_to_kill_and_reaps() -> None:
    async def go() -> int | None:
        client = AsyncClient.spawn(
            STUBBORN_AGENT, initialize=False, close_timeout=0.2, terminate_timeout=0.2
        )
        async with client:
            process = client.process
        assert process is not None
        return process.returncode

    code = asyncio.run(go())
    assert code is not None
    assert code < 0


def test_client_connect_over_plain_binary_streams() -> None:
    import subprocess

    process = subprocess.Popen(SCENARIO, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None
    assert process.stdout is not None
    with Client.connect(process.stdout, process.stdin) as client:
        session = client.new_session(cwd="/tmp")
        assert session.prompt("echo via streams").wait().stop_reason == "end_turn"
    process.wait(10)
    process.stdout.close()
    assert process.returncode == 0


def test_a_callback_may_call_back_into_the_blocking_client() -> None:
    seen: list[int] = []
    holder: list[Client] = []

    def on_update(notification: object) -> None:
        seen.append(len(holder[0].list_sessions().sessions))  # a request from a callback

    with Client.spawn(SCENARIO, on_update=on_update) as client:
        holder.append(client)
        session = client.new_session(cwd="/tmp")
        session.prompt("echo one two").wait()
        client.load_session(session_id=session.session_id, cwd="/tmp")  # replays 3 updates
        # A call returns only after the callbacks of earlier notifications have run.
        assert seen == [1, 1, 1]


def test_an_async_callback_may_await_the_client() -> None:
    async def go() -> list[int]:
        seen: list[int] = []
        holder: list[AsyncClient] = []

        async def on_update(notification: object) -> None:
            seen.append(len((await holder[0].list_sessions()).sessions))

        async with AsyncClient.spawn(SCENARIO, on_update=on_update) as client:
            holder.append(client)
            session = await client.new_session(cwd="/tmp")
            await session.prompt("echo one two")
            await client.load_session(session_id=session.session_id, cwd="/tmp")
            return list(seen)  # settled: the replay's callbacks ran before the call returned

    assert asyncio.run(go()) == [1, 1, 1]
