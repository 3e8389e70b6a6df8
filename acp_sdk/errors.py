"""The exception hierarchy (implemented in `acp_sdk.protocol.errors`)."""

from __future__ import annotations

from acp_sdk.protocol.errors import ACPError as ACPError
from acp_sdk.protocol.errors import CapabilityNotNegotiated as CapabilityNotNegotiated
from acp_sdk.protocol.errors import ConnectionClosed as ConnectionClosed
from acp_sdk.protocol.errors import DecodeError as DecodeError
from acp_sdk.protocol.errors import EncodeError as EncodeError
from acp_sdk.protocol.errors import ErrorCode as ErrorCode
from acp_sdk.protocol.errors import LocalProtocolError as LocalProtocolError
from acp_sdk.protocol.errors import ProtocolError as ProtocolError
from acp_sdk.protocol.errors import RemoteProtocolError as RemoteProtocolError
from acp_sdk.protocol.errors import RequestError as RequestError
from acp_sdk.protocol.errors import RequestTimeout as RequestTimeout
from acp_sdk.protocol.errors import UnsupportedProtocolVersion as UnsupportedProtocolVersion

__all__ = [
    "ACPError",
    "CapabilityNotNegotiated",
    "ConnectionClosed",
    "DecodeError",
    "EncodeError",
    "ErrorCode",
    "LocalProtocolError",
    "ProtocolError",
    "RemoteProtocolError",
    "RequestError",
    "RequestTimeout",
    "UnsupportedProtocolVersion",
]
