"""The agent side: subclass `Agent`, override what you support, run it over stdio.

See `acp_sdk.agent._runtime` for the theory of operation, and `acp_sdk.agent._keeper`
for what a session store adds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_sdk.agent._runtime import Agent as Agent
from acp_sdk.agent._runtime import AgentContext as AgentContext
from acp_sdk.agent._runtime import Extension as Extension
from acp_sdk.agent._runtime import ExtensionHandler as ExtensionHandler
from acp_sdk.agent._runtime import extension as extension
from acp_sdk.agent._runtime import run_agent as run_agent
from acp_sdk.agent._runtime import serve_agent as serve_agent
from acp_sdk.agent._store import MemorySessionStore as MemorySessionStore
from acp_sdk.agent._store import SessionStore as SessionStore
from acp_sdk.agent._store import SessionStoreError as SessionStoreError
from acp_sdk.agent._store import StoredSession as StoredSession

if TYPE_CHECKING:
    from acp_sdk.agent._sqlite_store import SqliteSessionStore as SqliteSessionStore
else:

    def __getattr__(name: str) -> object:
        # `sqlite3` loads only for an agent that uses the file store.
        if name == "SqliteSessionStore":
            from acp_sdk.agent._sqlite_store import SqliteSessionStore

            return SqliteSessionStore
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Agent",
    "AgentContext",
    "Extension",
    "ExtensionHandler",
    "MemorySessionStore",
    "SessionStore",
    "SessionStoreError",
    "SqliteSessionStore",
    "StoredSession",
    "extension",
    "run_agent",
    "serve_agent",
]
