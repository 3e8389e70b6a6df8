"""`encode` / `decode` (implemented in `acp_sdk.protocol.codec`)."""

from __future__ import annotations

from acp_sdk.protocol.codec import decode as decode
from acp_sdk.protocol.codec import encode as encode
from acp_sdk.protocol.codec import get_converter as get_converter

__all__ = [
    "decode",
    "encode",
    "get_converter",
]
