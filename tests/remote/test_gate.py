"""What waits between an HTTP connection and its agent: `Gate` (a waiter that is
cancelled leaves the others waiting: several HTTP POSTs of one connection wait on the
agent's full input, and the one whose client went away must not take the others down with
CancelledError), and the connection's output once it has ended."""

from __future__ import annotations

import asyncio

from acp_sdk.remote._backends import INPUT_BUFFER, Gate, _Input
from acp_sdk.remote._server import _Connection


def test_a_cancelled_waiter_leaves_the_others_waiting() -> None:
    async def main() -> None:
        gate = Gate()
        first = asyncio.ensure_future(gate.wait())
        second = asyncio.ensure_future(gate.wait())
        await asyncio.sleep(0)
        first.cancel()
        await asyncio.sleep(0)
        assert first.cancelled()
        assert not second.done()
        gate.open()
        await asyncio.wait_for(second, 1)
        third = asyncio.ensure_future(gate.wait())  # a new wait after a cancelled one
        await asyncio.sleep(0)
        gate.open()
        await asyncio.wait_for(third, 1)

    asyncio.run(main())


def test_puts_waiting_for_room_survive_one_of_them_being_cancelled() -> None:
    async def main() -> None:
        queued = _Input()
        await queued.put(b"x" * (INPUT_BUFFER + 1))  # full: the next puts wait
        puts = [asyncio.ensure_future(queued.put(b"%d\n" % i)) for i in range(3)]
        await asyncio.sleep(0)
        puts[0].cancel()
        await asyncio.sleep(0)
        assert not puts[1].done()
        assert not puts[2].done()
        assert len(await queued.read(-1)) == INPUT_BUFFER + 1
        await asyncio.wait_for(asyncio.gather(puts[1], puts[2]), 1)
        assert await queued.read(-1) == b"1\n2\n"

    asyncio.run(main())


def test_an_ended_http_connection_holds_nothing_the_agent_still_sends() -> None:
    """Until the agent sees its input end it may go on sending; the connection has
    ended, so nobody reads that: it is dropped, not queued without a bound."""

    async def main() -> None:
        connection = _Connection(server=None, backend=None, kind="http")  # type: ignore[arg-type]
        update = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}'
        await connection.route(update)
        assert connection.buffered == len(update)
        connection.closed = True
        for _ in range(1000):
            await connection.route(update)
        assert connection.buffered == len(update)

    asyncio.run(asyncio.wait_for(main(), 10))
