"""The blocking `Client` (implemented in `acp_sdk.client.sync_client`)."""

from __future__ import annotations

from acp_sdk.client.sync_client import Client as Client
from acp_sdk.client.sync_client import Session as Session
from acp_sdk.client.sync_client import Turn as Turn

__all__ = [
    "Client",
    "Session",
    "Turn",
]
