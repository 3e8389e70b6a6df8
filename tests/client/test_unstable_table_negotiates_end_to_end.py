"""A client that opts into the unstable protocol (`table=unstable.TABLE`) negotiates,
decodes and gates with it end to end, on both facades: `initialize` goes through the
unstable row, so `sessionCapabilities.fork` is a typed field (not `.extra`) and
`session/fork` is allowed; the typed calls (`new_session`, prompts) go through the
unstable rows too, with `mcp_servers` defaulted as on the stable table."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from acp_sdk import AsyncClient, CapabilityNotNegotiated, Client, unstable

pytestmark = pytest.mark.timeout(60)
AGENT = [sys.executable, str(Path(__file__).with_name("fork_agent.py"))]


def fork_request(session_id: str) -> unstable.ForkSessionRequest:
    return unstable.ForkSessionRequest(session_id=session_id, cwd="/tmp", mcp_servers=[])


def check_negotiated(client: Client | AsyncClient) -> None:
    # Typed: the connection's capabilities are a union of both schemas' classes.
    assert client.connection is not None
    theirs = client.connection.their_capabilities
    assert isinstance(theirs, unstable.AgentCapabilities)
    assert theirs.session_capabilities.fork == unstable.SessionForkCapabilities()
    assert "fork" not in (theirs.session_capabilities.extra or {})
    # The client's own views hold the unstable classes too (docs/unstable.md).
    caps: object = client.agent_capabilities
    assert caps is theirs
    info: object = client.agent_info
    assert isinstance(info, unstable.Implementation)
    assert info.name == "fork-agent"
    response: object = client.initialize_response
    assert isinstance(response, unstable.InitializeResponse)


def test_client_on_the_unstable_table_sees_fork_and_forks() -> None:
    with Client.spawn(AGENT, table=unstable.TABLE) as client:
        check_negotiated(client)
        session = client.new_session(cwd="/tmp")  # mcp_servers defaulted
        opened: object = session.response
        assert isinstance(opened, unstable.NewSessionResponse)
        fork = client.request(unstable.SESSION_FORK, fork_request(session.session_id))
        assert fork == unstable.ForkSessionResponse(session_id="s1-fork")
        turn = session.prompt("hi")
        turn.wait()
        ended: object = turn.response
    assert isinstance(ended, unstable.PromptResponse)
    assert ended.usage is not None
    assert ended.usage.total_tokens == 8


def test_async_client_on_the_unstable_table_sees_fork_and_forks() -> None:
    async def go() -> object:
        async with AsyncClient.spawn(AGENT, table=unstable.TABLE) as client:
            check_negotiated(client)
            session = await client.new_session(cwd="/tmp")
            opened: object = session.response
            assert isinstance(opened, unstable.NewSessionResponse)
            fork = await client.request(unstable.SESSION_FORK, fork_request(session.session_id))
            assert fork == unstable.ForkSessionResponse(session_id="s1-fork")
            return await session.prompt("hi")

    ended = asyncio.run(go())
    assert isinstance(ended, unstable.PromptResponse)
    assert ended.usage is not None
    assert ended.usage.total_tokens == 8


def test_a_client_on_the_stable_table_does_not_negotiate_fork() -> None:
    """The contrast: on the stable table the capability is unknown (kept in `.extra`),
    so the unstable method is refused before anything is sent."""
    with Client.spawn(AGENT) as client:
        assert client.agent_capabilities.session_capabilities.extra == {"fork": {}}
        session = client.new_session(cwd="/tmp")
        with pytest.raises(CapabilityNotNegotiated):
            client.request(unstable.SESSION_FORK, fork_request(session.session_id))
