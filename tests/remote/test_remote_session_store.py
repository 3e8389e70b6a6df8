"""`asgi_app(agent, store=...)`: one session store shared by every remote connection."""

from __future__ import annotations

import pytest

from acp_sdk import Client
from acp_sdk.agent import MemorySessionStore
from acp_sdk.remote import asgi_app
from acp_sdk.schema import AgentMessageChunk, SessionNotification, TextContent
from tests.agent.store_agent import StoreAgent
from tests.remote.server import running

pytestmark = pytest.mark.timeout(60)


def test_a_session_started_on_one_connection_is_listed_and_loaded_on_the_next() -> None:
    store = MemorySessionStore()
    with running(asgi_app(StoreAgent(), store=store)) as address:
        with Client.connect_url(f"ws://{address}/acp") as client:
            assert client.agent_capabilities.load_session is True
            session = client.new_session(cwd="/w")
            list(session.prompt("hello"))
        with Client.connect_url(f"http://{address}/acp") as client:
            [listed] = client.list_sessions().sessions
            assert listed.session_id == session.session_id
        # Loaded over a WebSocket: one ordered stream, so the replay has arrived when the
        # answer has (over HTTP, updates come on another stream than the answer).
        replayed: list[SessionNotification] = []
        with Client.connect_url(f"ws://{address}/acp", on_update=replayed.append) as client:
            client.load_session(session_id=session.session_id, cwd="/w")
    texts = [
        n.update.content.text
        for n in replayed
        if isinstance(n.update, AgentMessageChunk) and isinstance(n.update.content, TextContent)
    ]
    assert texts == ["hello"]
    assert len(replayed) == 2  # the user's prompt, then the agent's answer


def test_store_is_for_an_in_process_agent() -> None:
    with pytest.raises(ValueError, match="in-process"):
        asgi_app(command=["agent"], store=MemorySessionStore())  # type: ignore[call-overload]
