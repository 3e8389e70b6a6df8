"""The return types users rely on, pinned with assert_type (checked by mypy and pyright)."""

from __future__ import annotations

from typing_extensions import assert_type

from acp_sdk import AsyncClient, Client
from acp_sdk.client import AsyncSession, AsyncTurn, Session, Turn
from acp_sdk.methods import SESSION_LIST, SESSION_NEW
from acp_sdk.schema import (
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptResponse,
    SessionUpdate,
    StopReason,
)


def blocking(client: Client) -> None:
    session = client.new_session(cwd=".")
    assert_type(session, Session[NewSessionResponse])
    assert_type(session.response, NewSessionResponse)
    assert_type(client.load_session(session_id="s", cwd=".").response, LoadSessionResponse)
    turn = session.prompt("hi")
    assert_type(turn, Turn)
    for update in turn:
        assert_type(update, SessionUpdate)
    assert_type(turn.wait(), PromptResponse)
    assert_type(turn.stop_reason, StopReason | None)
    assert_type(client.request(SESSION_LIST, ListSessionsRequest()), ListSessionsResponse)
    assert_type(
        client.request(SESSION_NEW, NewSessionRequest(cwd=".", mcp_servers=[])), NewSessionResponse
    )
    assert_type(client.list_sessions(), ListSessionsResponse)


async def asynchronous(client: AsyncClient) -> None:
    session = await client.new_session(cwd=".")
    assert_type(session, AsyncSession[NewSessionResponse])
    turn = session.prompt("hi")
    assert_type(turn, AsyncTurn)
    async for update in turn:
        assert_type(update, SessionUpdate)
    assert_type(await session.prompt("again"), PromptResponse)
    assert_type(await client.request(SESSION_LIST, ListSessionsRequest()), ListSessionsResponse)
