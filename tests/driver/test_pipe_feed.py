"""`PipeFeed`: a read pipe's bytes fed to the engine from `data_received`.

Unit tests over a fake transport (pieces, holding, pausing, the end of input), then end
to end over real pipes: the agent's stdin fed whole, byte by byte and in random chunks;
`AsyncClient` pausing its agent's stdout under backpressure and losing nothing; a
handler started by the feed (eagerly on Python 3.12+) runs in a task of its own.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from acp_sdk import AsyncClient
from acp_sdk._driver.feed import PipeFeed
from acp_sdk._driver.flows import READ_CHUNK

pytestmark = pytest.mark.timeout(60)
STREAM_AGENT = [sys.executable, str(Path(__file__).with_name("stream_agent.py"))]
SCENARIO = [sys.executable, "-m", "acp_sdk", "agent"]


class FakeReadTransport:
    def __init__(self) -> None:
        self.paused = False
        self.pauses = 0

    def pause_reading(self) -> None:
        assert not self.paused
        self.paused = True
        self.pauses += 1

    def resume_reading(self) -> None:
        assert self.paused
        self.paused = False

    def is_closing(self) -> bool:
        return False


class Consumer:
    """Takes pieces while `room` lasts (counted in pieces)."""

    def __init__(self, room: int = 1 << 30) -> None:
        self.pieces: list[bytes] = []
        self.room = room
        self.paused = 0

    def feed(self, piece: bytes) -> bool:
        self.pieces.append(piece)
        self.room -= 1
        return self.room > 0

    def on_pause(self) -> None:
        self.paused += 1

    @property
    def data(self) -> bytes:
        return b"".join(self.pieces)


def attached(consumer: Consumer) -> tuple[PipeFeed, FakeReadTransport]:
    feed = PipeFeed()
    transport = FakeReadTransport()
    feed.connection_made(transport)  # type: ignore[arg-type] # a fake
    feed.attach(consumer.feed, consumer.on_pause)
    return feed, transport


def splits(data: bytes, how: str) -> list[bytes]:
    if how == "whole":
        return [data]
    if how == "bytewise":
        return [data[i : i + 1] for i in range(len(data))]
    rng = random.Random(24)
    out, start = [], 0
    while start < len(data):
        size = rng.choice([1, 7, 100, READ_CHUNK - 1, READ_CHUNK + 3, 3 * READ_CHUNK])
        out.append(data[start : start + size])
        start += size
    return out


@pytest.mark.parametrize("how", ["whole", "bytewise", "random"])
def test_every_byte_reaches_the_consumer_in_order_in_pieces_of_at_most_a_read(how: str) -> None:
    data = bytes(random.Random(1).getrandbits(8) for _ in range(5 * READ_CHUNK + 17))
    consumer = Consumer()
    feed, transport = attached(consumer)
    for chunk in splits(data, how):
        feed.data_received(chunk)
    assert consumer.data == data
    assert max(len(piece) for piece in consumer.pieces) <= READ_CHUNK
    assert not transport.paused


def test_a_consumer_that_says_stop_pauses_the_pipe_and_the_rest_waits() -> None:
    consumer = Consumer(room=2)
    feed, transport = attached(consumer)
    data = b"x" * (4 * READ_CHUNK)
    feed.data_received(data)
    # Two pieces fed (the check follows each, as the read loop's precedes each read).
    assert len(consumer.pieces) == 2
    assert transport.paused
    assert consumer.paused == 1
    feed.data_received(b"late")  # a callback already on its way is held too
    assert len(consumer.pieces) == 2
    consumer.room = 1
    feed.resume()  # one more piece, then stop again
    assert len(consumer.pieces) == 3
    assert transport.paused
    consumer.room = 100
    feed.resume()
    assert transport.paused is False
    assert consumer.data == data + b"late"


async def _the_input_ends_only_once_everything_held_was_fed() -> None:
    consumer = Consumer(room=1)
    feed, transport = attached(consumer)
    feed.data_received(b"a" * (2 * READ_CHUNK))
    assert transport.paused
    feed.eof_received()
    feed.connection_lost(None)
    ended = feed.ended
    await asyncio.sleep(0)
    assert not ended.done()  # a piece still waits for the consumer
    consumer.room = 10
    feed.resume()
    await asyncio.wait_for(ended, 5)
    assert consumer.data == b"a" * (2 * READ_CHUNK)


def test_bytes_before_a_consumer_attaches_are_held_and_reading_pauses_past_a_read() -> None:
    feed = PipeFeed()
    transport = FakeReadTransport()
    feed.connection_made(transport)  # type: ignore[arg-type] # a fake
    feed.data_received(b"a" * READ_CHUNK)
    assert not transport.paused
    feed.data_received(b"b")
    assert transport.paused
    consumer = Consumer()
    feed.attach(consumer.feed, consumer.on_pause)
    assert consumer.data == b"a" * READ_CHUNK + b"b"
    assert not transport.paused


# ---------------------------------------------------------------------- over real pipes


def _frame(message: dict[str, Any]) -> bytes:
    return orjson.dumps(message) + b"\n"


@pytest.mark.parametrize("how", ["whole", "bytewise", "random"])
def test_the_agents_stdin_frames_the_same_however_it_is_written(how: str) -> None:
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": "/", "mcpServers": []},
        },
        {"jsonrpc": "2.0", "id": 2, "method": "authenticate", "params": {"methodId": "x" * 300}},
    ]
    agent = subprocess.Popen(SCENARIO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert agent.stdin is not None
    assert agent.stdout is not None
    cut = (lambda d: splits(d, how)) if how != "random" else _small_random
    try:
        for chunk in cut(_frame(requests[0])):  # the handshake first, then the rest
            agent.stdin.write(chunk)
        answers = [orjson.loads(agent.stdout.readline())]
        for chunk in cut(b"".join(_frame(r) for r in requests[1:])):
            agent.stdin.write(chunk)
        agent.stdin.close()
        answers += [orjson.loads(line) for line in agent.stdout.read().splitlines()]
    finally:
        agent.wait(30)
        agent.stdout.close()
    assert sorted(a.get("id") for a in answers) == [0, 1, 2]
    by_id = {a["id"]: a for a in answers}
    assert "result" in by_id[0]
    assert "sessionId" in by_id[1]["result"]
    assert "error" in by_id[2] or "result" in by_id[2]  # answered either way, once


def _small_random(data: bytes) -> list[bytes]:
    rng = random.Random(7)
    out, start = [], 0
    while start < len(data):
        size = rng.randint(1, 40)
        out.append(data[start : start + size])
        start += size
    return out


async def _async_client_pauses_its_agents_stdout_under_backpressure_and_loses_nothing() -> None:
    count = 20_000
    async with AsyncClient.spawn(STREAM_AGENT, max_buffered_updates=64) as client:
        session = await client.new_session(cwd="/tmp")
        turn = session.prompt(f"stream {count}")
        driver: Any = client._driver
        pipe = driver._pipe
        assert isinstance(pipe, PipeFeed)
        for _ in range(500):  # the client stops reading while nobody iterates
            await asyncio.sleep(0.01)
            if pipe._paused:
                break
        assert pipe._paused
        buffered = turn._sink.received
        await asyncio.sleep(0.2)
        # Still held back: what arrived is at most a read's worth past the bound.
        assert turn._sink.received == buffered
        assert buffered < 64 + READ_CHUNK // 50
        texts = [update.content.text async for update in turn]  # type: ignore[union-attr]
    assert texts == [f"chunk {i} " for i in range(count)]


async def _a_huge_line_from_the_agent_is_refused_and_the_connection_goes_on() -> None:
    # The scenario agent's `echo-huge` is not available: the stream agent, then a huge
    # stray line written to the client's feed directly, through the pipe's own path.
    async with AsyncClient.spawn(STREAM_AGENT) as client:
        driver: Any = client._driver
        limit = client.connection._framer.max_frame_size  # type: ignore[union-attr]
        driver._pipe.data_received(b"x" * (limit + 10) + b"\n")
        session = await client.new_session(cwd="/tmp")
        assert [u async for u in session.prompt("stream 3")]


HANDLER_AGENT = r"""
import asyncio
from acp_sdk import Agent, run_agent
from acp_sdk.schema import AuthenticateResponse, NewSessionResponse

class A(Agent):
    async def new_session(self, params, ctx):
        return NewSessionResponse(session_id="s")

    async def authenticate(self, params, ctx):
        task = asyncio.current_task()
        assert task is not None
        # The handler's own task: a timeout inside it cancels only the handler's wait.
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(5)
        except TimeoutError:
            pass
        assert asyncio.current_task() is task
        return AuthenticateResponse()

run_agent(A())
"""


async def _a_handler_started_by_the_feed_runs_in_a_task_of_its_own(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(HANDLER_AGENT)
    async with AsyncClient.spawn([sys.executable, str(script)]) as client:
        for _ in range(3):
            await asyncio.wait_for(client.authenticate(method_id="x"), 10)


def test_the_input_ends_only_once_everything_held_was_fed() -> None:
    asyncio.run(_the_input_ends_only_once_everything_held_was_fed())


def test_async_client_pauses_its_agents_stdout_under_backpressure_and_loses_nothing() -> None:
    asyncio.run(_async_client_pauses_its_agents_stdout_under_backpressure_and_loses_nothing())


def test_a_huge_line_from_the_agent_is_refused_and_the_connection_goes_on() -> None:
    asyncio.run(_a_huge_line_from_the_agent_is_refused_and_the_connection_goes_on())


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.timeout is 3.11+")
def test_a_handler_started_by_the_feed_runs_in_a_task_of_its_own(tmp_path: Path) -> None:
    asyncio.run(_a_handler_started_by_the_feed_runs_in_a_task_of_its_own(tmp_path))
