"""acp_sdk: a typed Python SDK for the Agent Client Protocol (ACP).

The wire models live in `acp_sdk.schema`, the method table in `acp_sdk.methods`, the
unstable protocol in `acp_sdk.unstable`, the sans-IO connection in `acp_sdk.connection`
(its events in `acp_sdk.events`). This module re-exports the everyday names.
"""

from __future__ import annotations

from acp_sdk._rows import Side as Side
from acp_sdk._version import __version__ as __version__
from acp_sdk.codec import decode as decode
from acp_sdk.codec import encode as encode
from acp_sdk.connection import Connection as Connection
from acp_sdk.errors import ACPError as ACPError
from acp_sdk.errors import CapabilityNotNegotiated as CapabilityNotNegotiated
from acp_sdk.errors import ConnectionClosed as ConnectionClosed
from acp_sdk.errors import DecodeError as DecodeError
from acp_sdk.errors import EncodeError as EncodeError
from acp_sdk.errors import ErrorCode as ErrorCode
from acp_sdk.errors import LocalProtocolError as LocalProtocolError
from acp_sdk.errors import ProtocolError as ProtocolError
from acp_sdk.errors import RemoteProtocolError as RemoteProtocolError
from acp_sdk.errors import RequestError as RequestError
from acp_sdk.errors import RequestTimeout as RequestTimeout
from acp_sdk.errors import UnsupportedProtocolVersion as UnsupportedProtocolVersion

__all__ = [
    "ACPError",
    "CapabilityNotNegotiated",
    "Connection",
    "ConnectionClosed",
    "DecodeError",
    "EncodeError",
    "ErrorCode",
    "LocalProtocolError",
    "ProtocolError",
    "RemoteProtocolError",
    "RequestError",
    "RequestTimeout",
    "Side",
    "UnsupportedProtocolVersion",
    "__version__",
    "decode",
    "encode",
]
