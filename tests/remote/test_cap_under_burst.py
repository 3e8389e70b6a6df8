"""max_connections holds under a burst of concurrent connection attempts, on both
transports: exactly the cap is admitted, every other attempt is refused with 503 (not
reset, not left hanging), the admitted connections keep working, and a connection that
ends frees its place. bench/remote_load.py measures the same at 1,000 connections."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import orjson
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from acp_sdk.remote import asgi_app
from acp_sdk.tools._scenario_agent import ScenarioAgent
from tests.remote.server import running

pytestmark = pytest.mark.timeout(60)

CAP = 8
ATTEMPTS = 40
STEP = 20.0
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}},
}
NEW = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "session/new",
    "params": {"cwd": "/tmp", "mcpServers": []},
}


async def ws_attempt(url: str) -> ClientConnection | int:
    """An open, initialized WebSocket, or the HTTP status that refused the upgrade."""
    try:
        ws = await connect(url, compression=None, open_timeout=STEP)
    except InvalidStatus as refused:
        return refused.response.status_code
    await ws.send(orjson.dumps(INIT).decode())
    assert orjson.loads(await asyncio.wait_for(ws.recv(), STEP))["id"] == 0
    return ws


async def ws_works(ws: ClientConnection) -> bool:
    await ws.send(orjson.dumps(NEW).decode())
    answer = orjson.loads(await asyncio.wait_for(ws.recv(), STEP))
    return answer["id"] == 1 and "sessionId" in answer["result"]


def test_the_cap_holds_under_a_burst_of_websocket_upgrades() -> None:
    with running(asgi_app(ScenarioAgent, max_connections=CAP)) as address:
        url = f"ws://{address}/acp"

        async def main() -> None:
            outcomes = await asyncio.wait_for(
                asyncio.gather(*(ws_attempt(url) for _ in range(ATTEMPTS))), STEP
            )
            admitted = [o for o in outcomes if not isinstance(o, int)]
            refused = [o for o in outcomes if isinstance(o, int)]
            try:
                assert len(admitted) == CAP
                assert refused == [503] * (ATTEMPTS - CAP)
                assert all(await asyncio.gather(*(ws_works(ws) for ws in admitted)))
            finally:
                await asyncio.gather(*(ws.close() for ws in admitted))
            # the places are free again once the agents have stopped (bounded wait)
            deadline = time.monotonic() + STEP
            while isinstance(again := await ws_attempt(url), int):
                assert again == 503
                assert time.monotonic() < deadline, "no place freed after closing"
                await asyncio.sleep(0.05)
            assert await ws_works(again)
            await again.close()

        asyncio.run(main())


def test_the_cap_holds_under_a_burst_of_http_initializes() -> None:
    with running(asgi_app(ScenarioAgent, max_connections=CAP)) as address:
        url = f"http://{address}/acp"
        json = {"Content-Type": "application/json"}

        async def main() -> None:
            limits = httpx.Limits(max_connections=ATTEMPTS)
            async with httpx.AsyncClient(timeout=STEP, limits=limits) as http:

                async def attempt() -> Any:
                    return await http.post(url, content=orjson.dumps(INIT), headers=json)

                answers = await asyncio.gather(*(attempt() for _ in range(ATTEMPTS)))
                statuses = sorted(a.status_code for a in answers)
                assert statuses == [200] * CAP + [503] * (ATTEMPTS - CAP)
                ids = [a.headers["acp-connection-id"] for a in answers if a.status_code == 200]
                assert len(set(ids)) == CAP
                for connection_id in ids:  # each admitted connection still takes requests
                    headers = {**json, "Acp-Connection-Id": connection_id}
                    post = await http.post(url, content=orjson.dumps(NEW), headers=headers)
                    assert post.status_code == 202
                for connection_id in ids:
                    gone = await http.delete(url, headers={"Acp-Connection-Id": connection_id})
                    assert gone.status_code == 202
                deadline = time.monotonic() + STEP
                while (again := await attempt()).status_code == 503:
                    assert time.monotonic() < deadline, "no place freed after DELETE"
                    await asyncio.sleep(0.05)
                assert again.status_code == 200

        asyncio.run(main())
