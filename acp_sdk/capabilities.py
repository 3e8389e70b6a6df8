"""Capability gates (implemented in `acp_sdk.protocol.capabilities`)."""

from __future__ import annotations

from acp_sdk.protocol.capabilities import Capabilities as Capabilities
from acp_sdk.protocol.capabilities import Info as Info
from acp_sdk.protocol.capabilities import is_advertised as is_advertised
from acp_sdk.protocol.capabilities import required_by_params as required_by_params

__all__ = [
    "Capabilities",
    "Info",
    "is_advertised",
    "required_by_params",
]
