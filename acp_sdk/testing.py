"""Test helpers (implemented in `acp_sdk.tools.testing`)."""

from __future__ import annotations

from acp_sdk.tools.testing import ConnectionPair as ConnectionPair

__all__ = [
    "ConnectionPair",
]
