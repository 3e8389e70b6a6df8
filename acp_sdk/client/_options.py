"""`ClientOptions`: the keyword options `Client.spawn`/`connect` and
`AsyncClient.spawn`/`connect` accept, as a TypedDict a type checker checks by name.

The clients import this module for type checking only (it needs typing-extensions at
runtime, which `from acp_sdk import Client` does not load). Import it yourself to type
a function that forwards options:

    from typing_extensions import Unpack

    from acp_sdk import Client
    from acp_sdk.client._options import ClientOptions
    from acp_sdk.handlers import ClientHandlers

    def open_client(argv: list[str], **options: Unpack[ClientOptions[ClientHandlers]]) -> Client:
        return Client.spawn(argv, **options)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from typing_extensions import TypedDict

from acp_sdk.protocol._rows import MethodTable
from acp_sdk.schema import Implementation, SessionNotification

__all__ = ["ClientOptions"]

H = TypeVar("H")


class ClientOptions(TypedDict, Generic[H], total=False):
    """The keyword options of `spawn(...)` and `connect(...)`, checked by name and type.

    They are the constructor's arguments (see `BaseClient`); `H` is the facade's
    handler type (`ClientHandlers` for `Client`, `AnyHandlers` for `AsyncClient`).
    """

    handlers: H | Sequence[H] | None
    on_update: Callable[[SessionNotification], object] | None
    client_info: Implementation | None
    initialize: bool
    table: MethodTable | None
    request_timeout: float | None
    initialize_timeout: float | None
    workers: int
    max_send_buffer: int
    max_buffered_updates: int
    track_state: bool
    max_turn_text: int
