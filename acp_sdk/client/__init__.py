"""The client side's companion names: sessions, turns, options and reconnecting.

`Client` and `AsyncClient` themselves (and `SessionState`) are imported from `acp_sdk`;
this namespace holds the types a client hands out and the helpers around them:

    from acp_sdk import Client
    from acp_sdk.client import Session, Turn

The implementation modules (`_common`, `_sync`, `_aio`, `_options`, `_reconnect`) are
private. Names load on first use, so importing the blocking client never imports
asyncio.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_sdk.client._aio import AsyncSession as AsyncSession
    from acp_sdk.client._aio import AsyncTurn as AsyncTurn
    from acp_sdk.client._options import ClientOptions as ClientOptions
    from acp_sdk.client._reconnect import areconnect as areconnect
    from acp_sdk.client._reconnect import reconnect as reconnect
    from acp_sdk.client._sync import Session as Session
    from acp_sdk.client._sync import Turn as Turn
    from acp_sdk.protocol._session_state import CompactionView as CompactionView
    from acp_sdk.protocol._session_state import Message as Message
    from acp_sdk.protocol._session_state import ToolCallView as ToolCallView

_LAZY = {
    "AsyncSession": "acp_sdk.client._aio",
    "AsyncTurn": "acp_sdk.client._aio",
    "ClientOptions": "acp_sdk.client._options",
    "CompactionView": "acp_sdk.protocol._session_state",
    "Message": "acp_sdk.protocol._session_state",
    "Session": "acp_sdk.client._sync",
    "ToolCallView": "acp_sdk.protocol._session_state",
    "Turn": "acp_sdk.client._sync",
    "areconnect": "acp_sdk.client._reconnect",
    "reconnect": "acp_sdk.client._reconnect",
}

if not TYPE_CHECKING:  # hidden from type checkers, so a misspelled name stays an error

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'acp_sdk.client' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


__all__ = [
    "AsyncSession",
    "AsyncTurn",
    "ClientOptions",
    "CompactionView",
    "Message",
    "Session",
    "ToolCallView",
    "Turn",
    "areconnect",
    "reconnect",
]
