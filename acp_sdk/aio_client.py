"""The asyncio `AsyncClient` (implemented in `acp_sdk.client.aio_client`)."""

from __future__ import annotations

from acp_sdk.client.aio_client import AsyncClient as AsyncClient
from acp_sdk.client.aio_client import AsyncSession as AsyncSession
from acp_sdk.client.aio_client import AsyncTurn as AsyncTurn

__all__ = [
    "AsyncClient",
    "AsyncSession",
    "AsyncTurn",
]
