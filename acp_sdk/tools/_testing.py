"""Test helpers: two sans-IO connections wired back to back, no I/O anywhere.

pair = ConnectionPair()
pair.initialize(agent_capabilities=AgentCapabilities(load_session=True))
request_id, data = pair.client.send_request(SESSION_NEW, NewSessionRequest(cwd="/", mcp_servers=[]))
[event] = pair.deliver_to_agent(data)
"""

from __future__ import annotations

from typing import Any

from acp_sdk.protocol._connection import Connection
from acp_sdk.protocol._events import Event, RequestReceived, ResponseReceived
from acp_sdk.protocol._rows import MethodTable, Side

__all__ = ["ConnectionPair"]


class ConnectionPair:
    """A client-side and an agent-side `Connection`, for driving the protocol in tests."""

    def __init__(
        self, *, table: MethodTable | None = None, max_frame_size: int | None = None
    ) -> None:
        options: dict[str, Any] = {"table": table}
        if max_frame_size is not None:
            options["max_frame_size"] = max_frame_size
        self.client = Connection(Side.CLIENT, **options)
        self.agent = Connection(Side.AGENT, **options)

    def deliver_to_agent(self, data: bytes) -> list[Event]:
        """Feed bytes to the agent side; return its events. Its auto-replies go back to
        the client side (see `client_events`)."""
        self.agent.receive_data(data)
        replies = self.agent.data_to_send()
        if replies:
            self.client.receive_data(replies)
        return self.agent.events()

    def deliver_to_client(self, data: bytes) -> list[Event]:
        """Feed bytes to the client side; return its events. Its auto-replies go back to
        the agent side."""
        self.client.receive_data(data)
        replies = self.client.data_to_send()
        if replies:
            self.agent.receive_data(replies)
        return self.client.events()

    def initialize(
        self, *, client_capabilities: Any = None, agent_capabilities: Any = None
    ) -> tuple[Any, Any]:
        """Run the handshake; returns (initialize request, initialize response)."""
        from acp_sdk.methods import INITIALIZE
        from acp_sdk.schema import (
            AgentCapabilities,
            ClientCapabilities,
            InitializeRequest,
            InitializeResponse,
        )

        request = InitializeRequest(
            protocol_version=1, client_capabilities=client_capabilities or ClientCapabilities()
        )
        _, data = self.client.send_request(INITIALIZE, request)
        [received] = self.deliver_to_agent(data)
        assert isinstance(received, RequestReceived)
        response = InitializeResponse(
            protocol_version=self.agent.negotiate_version(request.protocol_version),
            agent_capabilities=agent_capabilities or AgentCapabilities(),
        )
        [answer] = self.deliver_to_client(self.agent.send_response(received.request_id, response))
        assert isinstance(answer, ResponseReceived)
        return request, answer.result
