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
from tests.memory_pipe import MemoryPipe

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


def frame(**message: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"


def test_async_client_answers_a_request_cancelled_in_the_same_read() -> None:
    async def go() -> list[dict[str, Any]]:
        to_client, to_agent = MemoryPipe(), MemoryPipe()
        client = AsyncClient.connect(to_client, to_agent, handlers=Allow())
        opening = asyncio.get_running_loop().create_task(client.open())
        initialize = await to_agent.line()
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
            first = await to_agent.line()
            # Still serving, and nothing more about p1.
            to_client.write(frame(id="p2", method="session/request_permission", params=PERMISSION))
            second = await to_agent.line()
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
