"""The scenario agent (implemented in `acp_sdk.tools.scenario_agent`)."""

from __future__ import annotations

from acp_sdk.tools.scenario_agent import ScenarioAgent as ScenarioAgent
from acp_sdk.tools.scenario_agent import main as main

__all__ = [
    "ScenarioAgent",
    "main",
]
