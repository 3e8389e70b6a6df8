"""Test helpers: peers and wiring for testing ACP programs without a real agent.

    from acp_sdk.testing import ConnectionPair, ScenarioAgent

`ConnectionPair` wires a client and an agent `Connection` back to back (sans-IO);
`ScenarioAgent` is the bundled scripted agent (`python -m acp_sdk agent`) as a class.
"""

from __future__ import annotations

from acp_sdk.tools._scenario_agent import ScenarioAgent as ScenarioAgent
from acp_sdk.tools._testing import ConnectionPair as ConnectionPair

__all__ = [
    "ConnectionPair",
    "ScenarioAgent",
]
