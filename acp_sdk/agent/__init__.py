"""The agent side: subclass `Agent`, override what you support, run it over stdio.

See `acp_sdk.agent._runtime` for the theory of operation.
"""

from __future__ import annotations

from acp_sdk.agent._runtime import Agent as Agent
from acp_sdk.agent._runtime import AgentContext as AgentContext
from acp_sdk.agent._runtime import Extension as Extension
from acp_sdk.agent._runtime import ExtensionHandler as ExtensionHandler
from acp_sdk.agent._runtime import extension as extension
from acp_sdk.agent._runtime import run_agent as run_agent
from acp_sdk.agent._runtime import serve_agent as serve_agent

__all__ = [
    "Agent",
    "AgentContext",
    "Extension",
    "ExtensionHandler",
    "extension",
    "run_agent",
    "serve_agent",
]
