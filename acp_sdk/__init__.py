"""acp_sdk: a typed Python SDK for the Agent Client Protocol (ACP).

The wire models live in `acp_sdk.schema`, the method table in `acp_sdk.methods`, the
unstable protocol in `acp_sdk.unstable`. This module re-exports the codec and errors.
"""

from __future__ import annotations

from acp_sdk._version import __version__ as __version__
from acp_sdk.codec import decode as decode
from acp_sdk.codec import encode as encode
from acp_sdk.errors import ACPError as ACPError
from acp_sdk.errors import DecodeError as DecodeError
from acp_sdk.errors import EncodeError as EncodeError

__all__ = [
    "ACPError",
    "DecodeError",
    "EncodeError",
    "__version__",
    "decode",
    "encode",
]
