"""Each marked line is a mistake mypy --strict must report, with exactly that error code.

The suite runs mypy with --warn-unused-ignores: if a mistake stops being reported, the
ignore becomes unused and the run fails.
"""

from __future__ import annotations

from acp_sdk import Agent, AgentContext, AsyncClient, Client
from acp_sdk.handlers import ClientHandlers
from acp_sdk.schema import (
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
    WriteTextFileResponse,
)


def models() -> None:
    response = PromptResponse(stop_reason="end_turn")
    print(response.stop_reasn)  # type: ignore[attr-defined]
    PromptResponse(stop_reason="bored")  # type: ignore[arg-type]
    PromptResponse(stop_reason="end_turn", sessionId="s")  # type: ignore[call-arg]
    response.stop_reason = "cancelled"  # type: ignore[misc]
    print(response < response)  # type: ignore[operator]


def sync_calls(client: Client) -> None:
    client.new_session(cwdd=".")  # type: ignore[call-arg]
    client.new_session(cwd=5)  # type: ignore[arg-type]
    print(client.list_sessions().sesions)  # type: ignore[attr-defined]
    client.prompt(session_id="s", prompt="text, not blocks")  # type: ignore[arg-type]


async def awaiting_a_blocking_call(client: Client) -> None:
    await client.new_session(cwd=".")  # type: ignore[misc]


async def not_awaiting_an_async_call(client: AsyncClient) -> None:
    client.new_session(cwd=".")  # type: ignore[unused-coroutine]
    session = client.new_session(cwd=".")
    print(session.session_id)  # type: ignore[attr-defined]


class WrongHandler(ClientHandlers):
    def read_text_file(self, params: ReadTextFileRequest) -> WriteTextFileResponse:  # type: ignore[override]
        return WriteTextFileResponse()


class WrongAgent(Agent):
    async def prompt(self, params: NewSessionRequest, ctx: AgentContext) -> PromptResponse:  # type: ignore[override]
        return PromptResponse(stop_reason="end_turn")

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return PromptResponse(stop_reason="end_turn")  # type: ignore[return-value]


def wrong_prompt_request() -> PromptRequest:
    return PromptRequest(session_id=1, prompt=[])  # type: ignore[arg-type]
