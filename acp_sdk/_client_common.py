"""What both client facades share besides the connection: defaults and update routing.

No protocol rule lives here (those are the connection's); only choices both facades make
the same way: the initialize request they send by default, and which prompt turn a
`session/update` belongs to.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from acp_sdk._version import __version__
from acp_sdk.connection import SUPPORTED_PROTOCOL_VERSIONS
from acp_sdk.errors import LocalProtocolError
from acp_sdk.handlers import HandlerSet
from acp_sdk.schema import (
    AgentCapabilities,
    ClientCapabilities,
    ContentBlock,
    Implementation,
    InitializeRequest,
    SessionNotification,
    SessionUpdate,
    TextContent,
)

DEFAULT_CLIENT_INFO = Implementation(name="acp-typed", title="acp_sdk client", version=__version__)


def default_initialize(
    handlers: HandlerSet, client_info: Implementation | None
) -> InitializeRequest:
    """The latest protocol version the connection speaks (initialization.mdx), and
    capabilities derived from the handlers actually supplied."""
    capabilities: ClientCapabilities = handlers.capabilities()
    return InitializeRequest(
        protocol_version=max(SUPPORTED_PROTOCOL_VERSIONS),
        client_capabilities=capabilities,
        client_info=client_info or DEFAULT_CLIENT_INFO,
    )


def prompt_blocks(prompt: str | ContentBlock | Sequence[ContentBlock]) -> list[ContentBlock]:
    """A prompt as content blocks: text becomes one text block."""
    if isinstance(prompt, str):
        return [TextContent(text=prompt)]
    if isinstance(prompt, (list, tuple)):
        return list(prompt)
    single: ContentBlock = prompt  # type: ignore[assignment] # not a str, list or tuple
    return [single]


def agent_capabilities(connection: Any) -> AgentCapabilities:
    caps = connection.their_capabilities if connection is not None else None
    return caps if isinstance(caps, AgentCapabilities) else AgentCapabilities()


def agent_info(connection: Any) -> Implementation | None:
    info = connection.their_info if connection is not None else None
    return info if isinstance(info, Implementation) else None


def log_agent_stderr(line: str) -> None:
    """Where an agent's stderr goes by default: a logger, line by line."""
    logging.getLogger("acp_sdk.agent.stderr").info("%s", line)


class UpdateRouter:
    """Delivers each `session/update` to the running turn of its session, in arrival order.

    Updates outside any turn (a load replaying history, a mode change) go to the
    client's `on_update` callback, if any. The facades run callbacks one at a time, in
    order, but not on the reader, so a callback may call back into the client.
    """

    def __init__(self, on_update: Callable[[SessionNotification], Any] | None) -> None:
        self._turns: dict[str, Callable[[SessionUpdate], None]] = {}
        self._lock = threading.Lock()
        self.on_update = on_update

    def open(self, session_id: str, sink: Callable[[SessionUpdate], None]) -> None:
        with self._lock:
            if session_id in self._turns:
                raise LocalProtocolError(
                    f"a prompt turn is already running in session {session_id}"
                )
            self._turns[session_id] = sink

    def close(self, session_id: str, sink: Callable[[SessionUpdate], None]) -> None:
        with self._lock:
            if self._turns.get(session_id) == sink:
                del self._turns[session_id]

    def route(self, notification: SessionNotification) -> bool:
        """Deliver to the session's running turn; False when no turn is running (the
        caller then hands it to `on_update`, off the reader)."""
        with self._lock:
            sink = self._turns.get(notification.session_id)
        if sink is None:
            return False
        sink(notification.update)
        return True
