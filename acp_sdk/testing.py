"""Test helpers (implemented in `acp_sdk.tools.testing` and `acp_sdk.tools._inprocess`).

`connect_in_process(agent, ...)` / `aconnect_in_process(agent, ...)` connect our
`Client` / `AsyncClient` to an agent object in this process, for testing an agent in
pytest; `ConnectionPair` drives two sans-IO connections back to back.
"""

from __future__ import annotations

from acp_sdk.tools._inprocess import STOP_TIMEOUT as STOP_TIMEOUT
from acp_sdk.tools._inprocess import aconnect_in_process as aconnect_in_process
from acp_sdk.tools._inprocess import connect_in_process as connect_in_process
from acp_sdk.tools.testing import ConnectionPair as ConnectionPair

__all__ = [
    "STOP_TIMEOUT",
    "ConnectionPair",
    "aconnect_in_process",
    "connect_in_process",
]
