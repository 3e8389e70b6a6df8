"""acp_sdk: a typed Python SDK for the Agent Client Protocol (ACP).

    from acp_sdk import Client

    with Client.spawn(["my-agent", "--acp"]) as client:
        session = client.new_session(cwd=".")
        for update in session.prompt("Explain this repository"):
            print(update)

The wire models live in `acp_sdk.schema`, the method table in `acp_sdk.methods`, the
unstable protocol in `acp_sdk.unstable`, the sans-IO connection in `acp_sdk.connection`
(its events in `acp_sdk.events`). This module re-exports the everyday names; the
facades load on first use, so `import acp_sdk` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from acp_sdk._version import __version__ as __version__
from acp_sdk.protocol._rows import Side as Side
from acp_sdk.protocol.codec import decode as decode
from acp_sdk.protocol.codec import encode as encode
from acp_sdk.protocol.connection import Connection as Connection
from acp_sdk.protocol.errors import ACPError as ACPError
from acp_sdk.protocol.errors import CapabilityNotNegotiated as CapabilityNotNegotiated
from acp_sdk.protocol.errors import ConnectionClosed as ConnectionClosed
from acp_sdk.protocol.errors import DecodeError as DecodeError
from acp_sdk.protocol.errors import EncodeError as EncodeError
from acp_sdk.protocol.errors import ErrorCode as ErrorCode
from acp_sdk.protocol.errors import LocalProtocolError as LocalProtocolError
from acp_sdk.protocol.errors import ProtocolError as ProtocolError
from acp_sdk.protocol.errors import RemoteProtocolError as RemoteProtocolError
from acp_sdk.protocol.errors import RequestError as RequestError
from acp_sdk.protocol.errors import RequestTimeout as RequestTimeout
from acp_sdk.protocol.errors import UnsupportedProtocolVersion as UnsupportedProtocolVersion

if TYPE_CHECKING:
    from acp_sdk.agent._runtime import Agent as Agent
    from acp_sdk.agent._runtime import AgentContext as AgentContext
    from acp_sdk.agent._runtime import run_agent as run_agent
    from acp_sdk.client.aio_client import AsyncClient as AsyncClient
    from acp_sdk.client.session_state import SessionState as SessionState
    from acp_sdk.client.sync_client import Client as Client

_LAZY = {
    "Agent": "acp_sdk.agent",
    "AgentContext": "acp_sdk.agent",
    "AsyncClient": "acp_sdk.aio_client",
    "Client": "acp_sdk.sync_client",
    "SessionState": "acp_sdk.client.session_state",
    "run_agent": "acp_sdk.agent",
}


if not TYPE_CHECKING:  # hidden from type checkers, so a misspelled name stays an error

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'acp_sdk' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


__all__ = [
    "ACPError",
    "Agent",
    "AgentContext",
    "AsyncClient",
    "CapabilityNotNegotiated",
    "Client",
    "Connection",
    "ConnectionClosed",
    "DecodeError",
    "EncodeError",
    "ErrorCode",
    "LocalProtocolError",
    "ProtocolError",
    "RemoteProtocolError",
    "RequestError",
    "RequestTimeout",
    "SessionState",
    "Side",
    "UnsupportedProtocolVersion",
    "__version__",
    "decode",
    "encode",
    "run_agent",
]
