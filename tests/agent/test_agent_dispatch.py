"""The runtime's request dispatch, in-process over `serve_agent`: what each kind of
handler is answered with, and that the runtime ends when the client's input ends (with
no handler running, and after the handlers still running answer)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from acp_sdk import Agent, AgentContext, RequestError
from acp_sdk.agent import serve_agent
from acp_sdk.schema import (
    AuthenticateRequest,
    AuthenticateResponse,
    AuthMethodAgent,
    NewSessionRequest,
    NewSessionResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
)
from tests.memory_pipe import MemoryPipe

pytestmark = pytest.mark.timeout(60)
STEP = 10.0  # seconds any single step may take before it counts as hung


def frame(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return orjson.dumps(message) + b"\n"


class DispatchAgent(Agent):
    auth_methods = (AuthMethodAgent(id="login", name="Login"),)

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def authenticate(
        self, params: AuthenticateRequest, ctx: AgentContext
    ) -> AuthenticateResponse:
        if params.method_id == "refused":
            raise RequestError.auth_required()
        if params.method_id == "slow":
            await self.release.wait()
        return AuthenticateResponse()

    # Not `async`: a type error, which must fail the request, never answer it as a success.
    def new_session(  # type: ignore[override]
        self, params: NewSessionRequest, ctx: AgentContext
    ) -> NewSessionResponse:
        return NewSessionResponse(session_id="s1")


async def _start(agent: Agent, **options: Any) -> tuple[MemoryPipe, MemoryPipe, asyncio.Task[None]]:
    to_agent, from_agent = MemoryPipe(), MemoryPipe()
    server = asyncio.get_running_loop().create_task(
        serve_agent(agent, to_agent, from_agent, **options)
    )
    to_agent.write(frame(0, "initialize", {"protocolVersion": 1}))
    assert "result" in await from_agent.line()
    return to_agent, from_agent, server


def test_each_kind_of_handler_is_answered_as_the_spec_says() -> None:
    async def set_mode(params: SetSessionModeRequest, ctx: AgentContext) -> Any:
        return SetSessionModeResponse()

    async def go() -> list[dict[str, Any]]:
        to_agent, from_agent, server = await _start(
            DispatchAgent(), extensions={"set_mode": set_mode}
        )
        requests = [
            frame(1, "authenticate", {"methodId": "login"}),
            frame(2, "authenticate", {"methodId": "refused"}),
            frame(3, "session/new", {"cwd": "/", "mcpServers": []}),
            frame(4, "session/set_mode", {"sessionId": "s1", "modeId": "code"}),
            frame(5, "session/load", {"sessionId": "s1", "cwd": "/", "mcpServers": []}),
            frame(6, "session/list", {}),
        ]
        to_agent.write(b"".join(requests))
        answers = [await from_agent.line() for _ in requests]
        to_agent.close()
        await asyncio.wait_for(server, STEP)
        return sorted(answers, key=lambda answer: answer["id"])

    answers = asyncio.run(go())
    assert answers[0] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert answers[1]["error"]["code"] == -32000  # auth_required, raised in the handler
    assert answers[2]["error"]["code"] == -32603  # a handler that is not async: a failure
    assert answers[3] == {"jsonrpc": "2.0", "id": 4, "result": {}}  # an extension-map handler
    # Not overridden (and not advertised): method not found, from the connection or the base.
    assert answers[4]["error"]["code"] == -32601
    assert answers[5]["error"]["code"] == -32601


def test_the_runtime_returns_once_input_ends_and_running_handlers_answered() -> None:
    async def go() -> tuple[bool, dict[str, Any]]:
        agent = DispatchAgent()
        to_agent, from_agent, server = await _start(agent)
        for request_id in range(1, 50):  # many answers: none of them ends the service
            to_agent.write(frame(request_id, "authenticate", {"methodId": "login"}))
            assert (await from_agent.line())["id"] == request_id
        to_agent.write(frame(50, "authenticate", {"methodId": "slow"}))
        await asyncio.sleep(0.05)
        to_agent.close()
        await asyncio.sleep(0.05)
        still_serving = not server.done()  # the slow handler still owes its answer
        agent.release.set()
        answer = await from_agent.line()
        await asyncio.wait_for(server, STEP)
        return still_serving, answer

    still_serving, answer = asyncio.run(go())
    assert still_serving
    assert answer == {"jsonrpc": "2.0", "id": 50, "result": {}}


def test_the_runtime_returns_at_once_when_input_ends_with_nothing_running() -> None:
    async def go() -> None:
        to_agent, from_agent, server = await _start(DispatchAgent())
        to_agent.write(frame(1, "authenticate", {"methodId": "login"}))
        assert (await from_agent.line())["id"] == 1
        to_agent.close()
        await asyncio.wait_for(server, STEP)

    asyncio.run(go())
