"""What `Connection.next_event()` returns (implemented in `acp_sdk.protocol.events`)."""

from __future__ import annotations

from acp_sdk.protocol.events import NEED_DATA as NEED_DATA
from acp_sdk.protocol.events import CallFailed as CallFailed
from acp_sdk.protocol.events import CancelRequested as CancelRequested
from acp_sdk.protocol.events import ConnectionClosedEvent as ConnectionClosedEvent
from acp_sdk.protocol.events import ErrorReceived as ErrorReceived
from acp_sdk.protocol.events import Event as Event
from acp_sdk.protocol.events import FrameRejected as FrameRejected
from acp_sdk.protocol.events import NeedData as NeedData
from acp_sdk.protocol.events import NotificationReceived as NotificationReceived
from acp_sdk.protocol.events import PromptCancelRequested as PromptCancelRequested
from acp_sdk.protocol.events import RequestReceived as RequestReceived
from acp_sdk.protocol.events import ResponseReceived as ResponseReceived

__all__ = [
    "CallFailed",
    "CancelRequested",
    "ConnectionClosedEvent",
    "ErrorReceived",
    "Event",
    "FrameRejected",
    "NEED_DATA",
    "NeedData",
    "NotificationReceived",
    "PromptCancelRequested",
    "RequestReceived",
    "ResponseReceived",
]
