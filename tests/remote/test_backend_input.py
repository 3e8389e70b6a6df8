"""An in-process agent reads its input in pieces of at most the size it asks for, so the
runtime's `max_inflight` still bounds the handlers a burst starts (one read of everything
queued started thousands at once)."""

from __future__ import annotations

import asyncio

import orjson

from acp_sdk import Agent, AgentContext
from acp_sdk.remote._backends import AgentBackend, _Input
from acp_sdk.schema import AuthenticateRequest, AuthenticateResponse


def test_read_takes_at_most_n_bytes_but_at_least_one_chunk() -> None:
    async def main() -> None:
        queued = _Input()
        for _ in range(10):
            await queued.put(b"x" * 100)
        await queued.put(b"y" * 1000)
        assert await queued.read(250) == b"x" * 200
        assert await queued.read(10) == b"x" * 100  # one chunk even when larger than n
        assert await queued.read(-1) == b"x" * 700 + b"y" * 1000
        queued.end()
        assert await queued.read(10) == b""

    asyncio.run(main())


def test_a_burst_starts_no_more_handlers_than_max_inflight_allows() -> None:
    running = 0
    most = 0

    class Slow(Agent):
        async def authenticate(
            self, params: AuthenticateRequest, ctx: AgentContext
        ) -> AuthenticateResponse:
            nonlocal running, most
            running += 1
            most = max(most, running)
            try:
                await asyncio.sleep(0.05)
            finally:
                running -= 1
            return AuthenticateResponse()

    async def main() -> None:
        backend = AgentBackend(Slow(), 1 << 20)
        await backend.start()
        init = {"protocolVersion": 1, "clientCapabilities": {}}
        await backend.send(
            orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        )
        assert await asyncio.wait_for(backend.recv(), 10)
        count = 3000
        for i in range(1, count + 1):
            message = {
                "jsonrpc": "2.0",
                "id": i,
                "method": "authenticate",
                "params": {"methodId": "m"},
            }
            await backend.send(orjson.dumps(message))
        for _ in range(count):
            assert await asyncio.wait_for(backend.recv(), 30)
        await backend.aclose()

    asyncio.run(main())
    # max_inflight (256) plus what one read (READ_CHUNK, 64 KiB) can hold.
    assert most <= 256 + (1 << 16) // 60, most
