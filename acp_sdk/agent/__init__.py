"""The agent side's companion names: extension methods and serving over any streams.

The everyday agent names live at the top level: subclass `acp_sdk.Agent`, receive an
`acp_sdk.AgentContext`, and run it over stdio with `acp_sdk.run_agent`. This namespace
holds the rest of the agent author's toolkit.

See `acp_sdk.agent._runtime` for the theory of operation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_sdk.agent._runtime import Extension as Extension
from acp_sdk.agent._runtime import ExtensionHandler as ExtensionHandler
from acp_sdk.agent._runtime import extension as extension
from acp_sdk.agent._runtime import serve_agent as serve_agent

_AT_THE_TOP = frozenset({"Agent", "AgentContext", "run_agent"})

if not TYPE_CHECKING:  # hidden from type checkers, so a wrong path stays an error

    def __getattr__(name: str) -> object:
        if name in _AT_THE_TOP:
            raise AttributeError(
                f"module 'acp_sdk.agent' has no attribute {name!r}: import it from acp_sdk"
                f" (from acp_sdk import {name})"
            )
        raise AttributeError(f"module 'acp_sdk.agent' has no attribute {name!r}")


__all__ = [
    "Extension",
    "ExtensionHandler",
    "extension",
    "serve_agent",
]
