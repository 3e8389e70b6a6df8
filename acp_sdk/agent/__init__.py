"""The agent side's companion names: extension methods and serving over any streams.

The everyday agent names live at the top level: subclass `acp_sdk.Agent`, receive an
`acp_sdk.AgentContext`, and run it over stdio with `acp_sdk.run_agent`. This namespace
holds the rest of the agent author's toolkit.

The toolkit: `ctx.session(session_id)` returns a `SessionHandle` (`say`, `think`, `plan`,
`send`, and `tool_call` blocks, `ToolCallHandle`s that always finish); `diff` and
`terminal` are short forms of tool-call content. A session store
(`run_agent(agent, store=...)`: `MemorySessionStore`, `SqliteSessionStore`) makes sessions
persist. See `acp_sdk.agent._runtime`, `acp_sdk.agent._session` and
`acp_sdk.agent._keeper` for the theory of operation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_sdk.agent._runtime import Extension as Extension
from acp_sdk.agent._runtime import ExtensionHandler as ExtensionHandler
from acp_sdk.agent._runtime import extension as extension
from acp_sdk.agent._runtime import serve_agent as serve_agent
from acp_sdk.agent._session import DEFAULT_PERMISSION_OPTIONS as DEFAULT_PERMISSION_OPTIONS
from acp_sdk.agent._session import LocationLike as LocationLike
from acp_sdk.agent._session import PlanItem as PlanItem
from acp_sdk.agent._session import SessionHandle as SessionHandle
from acp_sdk.agent._session import ToolCallHandle as ToolCallHandle
from acp_sdk.agent._session import ToolContentLike as ToolContentLike
from acp_sdk.agent._session import diff as diff
from acp_sdk.agent._session import terminal as terminal
from acp_sdk.agent._store import MemorySessionStore as MemorySessionStore
from acp_sdk.agent._store import SessionStore as SessionStore
from acp_sdk.agent._store import SessionStoreError as SessionStoreError
from acp_sdk.agent._store import StoredSession as StoredSession

if TYPE_CHECKING:
    from acp_sdk.agent._sqlite_store import SqliteSessionStore as SqliteSessionStore

_AT_THE_TOP = frozenset({"Agent", "AgentContext", "run_agent"})

if not TYPE_CHECKING:  # hidden from type checkers, so a wrong path stays an error

    def __getattr__(name: str) -> object:
        # `sqlite3` loads only for an agent that uses the file store.
        if name == "SqliteSessionStore":
            from acp_sdk.agent._sqlite_store import SqliteSessionStore

            globals()[name] = SqliteSessionStore
            return SqliteSessionStore
        if name in _AT_THE_TOP:
            raise AttributeError(
                f"module 'acp_sdk.agent' has no attribute {name!r}: import it from acp_sdk"
                f" (from acp_sdk import {name})"
            )
        raise AttributeError(f"module 'acp_sdk.agent' has no attribute {name!r}")


__all__ = [
    "DEFAULT_PERMISSION_OPTIONS",
    "Extension",
    "ExtensionHandler",
    "LocationLike",
    "MemorySessionStore",
    "PlanItem",
    "SessionHandle",
    "SessionStore",
    "SessionStoreError",
    "SqliteSessionStore",
    "StoredSession",
    "ToolCallHandle",
    "ToolContentLike",
    "diff",
    "extension",
    "serve_agent",
    "terminal",
]
