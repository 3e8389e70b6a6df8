"""The MCP servers a client passes in `session/new`, connected for the agent (the `mcp` extra).

    from acp_sdk.mcp import connect

    async with connect(params.mcp_servers, capabilities=self.mcp_capabilities) as mcp:
        result = await mcp.call_tool("add", {"a": 1, "b": 2})

Install it with `pip install 'acp-typed[mcp]'`; importing this module without the `mcp`
package raises an `ImportError` that says so. See docs/mcp.md, and
`acp_sdk.agent._mcp` for the theory of operation.
"""

from __future__ import annotations

from acp_sdk.agent._mcp import McpConnections as McpConnections
from acp_sdk.agent._mcp import McpFailure as McpFailure
from acp_sdk.agent._mcp import McpSessions as McpSessions
from acp_sdk.agent._mcp import TransportNotAdvertised as TransportNotAdvertised
from acp_sdk.agent._mcp import connect as connect

__all__ = [
    "McpConnections",
    "McpFailure",
    "McpSessions",
    "TransportNotAdvertised",
    "connect",
]
