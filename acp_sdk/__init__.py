"""acp_sdk: a typed Python SDK for the Agent Client Protocol (ACP).

    from acp_sdk import Client

    with Client.spawn(["my-agent", "--acp"]) as client:
        session = client.new_session(cwd=".")
        for update in session.prompt("Explain this repository"):
            print(update)

This module is the home of the everyday names: the two clients, the agent base class
and runner, `SessionState`, the sans-IO `Connection`, `encode`/`decode` and every
exception. Every other public name has exactly one home (docs/architecture.md):
`acp_sdk.schema` (wire models), `acp_sdk.methods` (method rows), `acp_sdk.unstable`,
`acp_sdk.protocol` (the connection's events and state), `acp_sdk.client`,
`acp_sdk.agent`, `acp_sdk.handlers`, `acp_sdk.remote` and `acp_sdk.testing`. The
facades load on first use, so `import acp_sdk` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from acp_sdk._version import __version__ as __version__
from acp_sdk.protocol._codec import decode as decode
from acp_sdk.protocol._codec import encode as encode
from acp_sdk.protocol._connection import Connection as Connection
from acp_sdk.protocol._errors import ACPError as ACPError
from acp_sdk.protocol._errors import CapabilityNotNegotiated as CapabilityNotNegotiated
from acp_sdk.protocol._errors import ConnectionClosed as ConnectionClosed
from acp_sdk.protocol._errors import DecodeError as DecodeError
from acp_sdk.protocol._errors import EncodeError as EncodeError
from acp_sdk.protocol._errors import ErrorCode as ErrorCode
from acp_sdk.protocol._errors import LocalProtocolError as LocalProtocolError
from acp_sdk.protocol._errors import NotAnAgent as NotAnAgent
from acp_sdk.protocol._errors import ProtocolError as ProtocolError
from acp_sdk.protocol._errors import RemoteProtocolError as RemoteProtocolError
from acp_sdk.protocol._errors import RequestError as RequestError
from acp_sdk.protocol._errors import RequestTimeout as RequestTimeout
from acp_sdk.protocol._errors import UnsupportedProtocolVersion as UnsupportedProtocolVersion
from acp_sdk.protocol._rows import Side as Side

if TYPE_CHECKING:
    from acp_sdk.agent._runtime import Agent as Agent
    from acp_sdk.agent._runtime import AgentContext as AgentContext
    from acp_sdk.agent._runtime import run_agent as run_agent
    from acp_sdk.client._aio import AsyncClient as AsyncClient
    from acp_sdk.client._sync import Client as Client
    from acp_sdk.protocol._session_state import SessionState as SessionState

_LAZY = {
    "Agent": "acp_sdk.agent._runtime",
    "AgentContext": "acp_sdk.agent._runtime",
    "AsyncClient": "acp_sdk.client._aio",
    "Client": "acp_sdk.client._sync",
    "SessionState": "acp_sdk.protocol._session_state",
    "run_agent": "acp_sdk.agent._runtime",
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
    "NotAnAgent",
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
