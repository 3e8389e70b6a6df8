"""Reconnecting after a dropped remote connection: a new connection, `initialize`, then
`session/load`. Nothing is replayed by the transport: what the agent replays (the
session's history, as `session/update` notifications before the load answer) reaches the
new client's `on_update`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from acp_sdk.client._aio import AsyncClient, AsyncSession
    from acp_sdk.client._sync import Client, Session
    from acp_sdk.schema import LoadSessionResponse

C = TypeVar("C", bound="Client")
A = TypeVar("A", bound="AsyncClient")


def reconnect(
    make_client: Callable[[], C], session_id: str, cwd: str
) -> tuple[C, Session[LoadSessionResponse]]:
    """Open a new client from `make_client()` (e.g. `lambda: Client.connect_url(url,
    on_update=...)`), initialize, and `session/load` `session_id`: returns the open
    client and the loaded `Session`. Close the client when done. Raises
    `CapabilityNotNegotiated` when the agent cannot load sessions."""
    client = make_client()
    client.open()
    try:
        # The connection refuses session/load (CapabilityNotNegotiated, nothing sent)
        # when the agent did not advertise loadSession.
        session = client.load_session(session_id=session_id, cwd=cwd)
    except BaseException:
        client.close()
        raise
    return client, session


async def areconnect(
    make_client: Callable[[], A], session_id: str, cwd: str
) -> tuple[A, AsyncSession[LoadSessionResponse]]:
    """`reconnect` for `AsyncClient`: returns the open client and the loaded
    `AsyncSession`. Close it (`await client.aclose()`) when done."""
    client = make_client()
    await client.open()
    try:
        session = await client.load_session(session_id=session_id, cwd=cwd)
    except BaseException:
        await client.aclose()
        raise
    return client, session
