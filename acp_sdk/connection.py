"""The sans-IO `Connection` (implemented in `acp_sdk.protocol.connection`)."""

from __future__ import annotations

from acp_sdk.protocol.connection import SUPPORTED_PROTOCOL_VERSIONS as SUPPORTED_PROTOCOL_VERSIONS
from acp_sdk.protocol.connection import Connection as Connection

__all__ = [
    "Connection",
    "SUPPORTED_PROTOCOL_VERSIONS",
]
