"""The sans-IO protocol core, and the public home of `Connection`'s companions.

No threads, no asyncio, no I/O: bytes in, events out (`acp_sdk.Connection`). This
namespace holds what a user of the connection meets besides the class itself: its
`State`, the events `Connection.next_event()` returns, the capability helpers, the
request id type and the codec's converter.

    from acp_sdk import Connection, Side
    from acp_sdk.protocol import RequestReceived, State

The implementation modules (`_connection`, `_events`, `_state`, `_capabilities`,
`_codec`, `_framing`, `_jsonrpc`, `_rows`, `_generated/`) are private.
"""

from __future__ import annotations

from acp_sdk.protocol._capabilities import Capabilities as Capabilities
from acp_sdk.protocol._capabilities import Info as Info
from acp_sdk.protocol._capabilities import is_advertised as is_advertised
from acp_sdk.protocol._capabilities import required_by_params as required_by_params
from acp_sdk.protocol._capabilities import update_capability as update_capability
from acp_sdk.protocol._codec import get_converter as get_converter
from acp_sdk.protocol._connection import SUPPORTED_PROTOCOL_VERSIONS as SUPPORTED_PROTOCOL_VERSIONS
from acp_sdk.protocol._events import NEED_DATA as NEED_DATA
from acp_sdk.protocol._events import CallFailed as CallFailed
from acp_sdk.protocol._events import CancelRequested as CancelRequested
from acp_sdk.protocol._events import ConnectionClosedEvent as ConnectionClosedEvent
from acp_sdk.protocol._events import ErrorReceived as ErrorReceived
from acp_sdk.protocol._events import Event as Event
from acp_sdk.protocol._events import FrameRejected as FrameRejected
from acp_sdk.protocol._events import NeedData as NeedData
from acp_sdk.protocol._events import NotificationReceived as NotificationReceived
from acp_sdk.protocol._events import PromptCancelRequested as PromptCancelRequested
from acp_sdk.protocol._events import RequestReceived as RequestReceived
from acp_sdk.protocol._events import ResponseReceived as ResponseReceived
from acp_sdk.protocol._jsonrpc import RequestId as RequestId
from acp_sdk.protocol._state import State as State

__all__ = [
    "NEED_DATA",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "CallFailed",
    "CancelRequested",
    "Capabilities",
    "ConnectionClosedEvent",
    "ErrorReceived",
    "Event",
    "FrameRejected",
    "Info",
    "NeedData",
    "NotificationReceived",
    "PromptCancelRequested",
    "RequestId",
    "RequestReceived",
    "ResponseReceived",
    "State",
    "get_converter",
    "is_advertised",
    "required_by_params",
    "update_capability",
]
