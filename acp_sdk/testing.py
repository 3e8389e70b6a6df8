"""Test helpers: peers and wiring for testing ACP programs without a real agent.

    from acp_sdk.testing import connect_in_process

`connect_in_process(agent, ...)` / `aconnect_in_process(agent, ...)` connect our
`Client` / `AsyncClient` to an agent object in this process, for testing an agent in
pytest (no subprocess); `ConnectionPair` wires a client and an agent `Connection` back to
back (sans-IO); `ScenarioAgent` is the bundled scripted agent (`python -m acp_sdk agent`)
as a class.
"""

from __future__ import annotations

from acp_sdk.tools._inprocess import STOP_TIMEOUT as STOP_TIMEOUT
from acp_sdk.tools._inprocess import aconnect_in_process as aconnect_in_process
from acp_sdk.tools._inprocess import connect_in_process as connect_in_process
from acp_sdk.tools._scenario_agent import ScenarioAgent as ScenarioAgent
from acp_sdk.tools._testing import ConnectionPair as ConnectionPair

__all__ = [
    "STOP_TIMEOUT",
    "ConnectionPair",
    "ScenarioAgent",
    "aconnect_in_process",
    "connect_in_process",
]
