"""`AsyncClient` answers an agent's request whose `$/cancel_request` arrives in the same
read (its handler task is cancelled before it first runs) with -32800, exactly once,
and goes on serving. The test plays a raw agent over in-memory streams."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from acp_sdk import AsyncClient
from acp_sdk.handlers import AsyncClientHandlers
from acp_sdk.schema import (
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
)

pytestmark = pytest.mark.timeout(30)
STEP = 10.0  # seconds any single step may take before it counts as hung
PERMISSION = {
    "sessionId": "s1",
    "toolCall": {"toolCallId": "t1"},
    "options": [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}],
}


class Allow(AsyncClientHandlers):
    async def request_permission(
        self, params: RequestPermissionRequest
    ) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=SelectedPermissionOutcome(option_id="yes"))


class _Pipe:
    """An in-memory byte pipe with the reader and writer halves asyncio streams have."""

    def __init__(self) -> None:
        self._data = asyncio.Queue[bytes]()
        self._buffer = b""

    async def read(self, n: int = -1) -> bytes:
        return await self._data.get()

    def write(self, data: bytes) -> None:
        self._data.put_nowait(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self._data.put_nowait(b"")

    async def message(self) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            chunk = await asyncio.wait_for(self._data.get(), STEP)
            assert chunk, "the client closed its output"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = orjson.loads(line)
        return message


def frame(**message: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"


def test_async_client_answers_a_request_cancelled_in_the_same_read() -> None:
    async def go() -> list[dict[str, Any]]:
        to_client, to_agent = _Pipe(), _Pipe()
        client = AsyncClient.connect(to_client, to_agent, handlers=Allow())
        opening = asyncio.get_running_loop().create_task(client.open())
        initialize = await to_agent.message()
        to_client.write(
            frame(id=initialize["id"], result={"protocolVersion": 1, "agentCapabilities": {}})
        )
        await asyncio.wait_for(opening, STEP)
        try:
            cancel = {"requestId": "p1"}
            to_client.write(
                frame(id="p1", method="session/request_permission", params=PERMISSION)
                + frame(method="$/cancel_request", params=cancel)
            )
            first = await to_agent.message()
            # Still serving, and nothing more about p1.
            to_client.write(frame(id="p2", method="session/request_permission", params=PERMISSION))
            second = await to_agent.message()
        finally:
            to_client.close()
            await asyncio.wait_for(client.aclose(), STEP)
        return [first, second]

    first, second = asyncio.run(go())
    assert first["id"] == "p1"
    assert first["error"]["code"] == -32800
    assert second == {
        "jsonrpc": "2.0",
        "id": "p2",
        "result": {"outcome": {"outcome": "selected", "optionId": "yes"}},
    }
