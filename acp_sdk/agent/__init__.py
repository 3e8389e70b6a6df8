"""The agent side: subclass `Agent`, override what you support, run it over stdio.

The toolkit: `ctx.session(session_id)` returns a `SessionHandle` (`say`, `think`, `plan`,
`send`, and `tool_call` blocks, `ToolCallHandle`s that always finish); `diff` and
`terminal` are short forms of tool-call content. See `acp_sdk.agent._runtime` and
`acp_sdk.agent._session` for the theory of operation.
"""

from __future__ import annotations

from acp_sdk.agent._runtime import Agent as Agent
from acp_sdk.agent._runtime import AgentContext as AgentContext
from acp_sdk.agent._runtime import Extension as Extension
from acp_sdk.agent._runtime import ExtensionHandler as ExtensionHandler
from acp_sdk.agent._runtime import extension as extension
from acp_sdk.agent._runtime import run_agent as run_agent
from acp_sdk.agent._runtime import serve_agent as serve_agent
from acp_sdk.agent._session import DEFAULT_PERMISSION_OPTIONS as DEFAULT_PERMISSION_OPTIONS
from acp_sdk.agent._session import LocationLike as LocationLike
from acp_sdk.agent._session import PlanItem as PlanItem
from acp_sdk.agent._session import SessionHandle as SessionHandle
from acp_sdk.agent._session import ToolCallHandle as ToolCallHandle
from acp_sdk.agent._session import ToolContentLike as ToolContentLike
from acp_sdk.agent._session import diff as diff
from acp_sdk.agent._session import terminal as terminal

__all__ = [
    "DEFAULT_PERMISSION_OPTIONS",
    "Agent",
    "AgentContext",
    "Extension",
    "ExtensionHandler",
    "LocationLike",
    "PlanItem",
    "SessionHandle",
    "ToolCallHandle",
    "ToolContentLike",
    "diff",
    "extension",
    "run_agent",
    "serve_agent",
    "terminal",
]
