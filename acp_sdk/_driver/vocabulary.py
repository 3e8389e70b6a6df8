"""The words the engine, the flows and both drivers share: the limits that bound memory,
the waiting protocols a driver implements (`Signal`, `Waiter`, `Cancellable`), how a
call ends (`Outcome`, `Expired`) and what the writer takes from the queue (`Batch`).

Kept apart from `engine.py` so the engine module holds only the engine's rules.
"""

from __future__ import annotations

from typing import Any, Final, Generic, Protocol, TypeVar

import attrs

T = TypeVar("T")


@attrs.frozen(kw_only=True, order=False)
class Limits:
    """Bounds that keep memory finite whatever the peer does (see docs/clients.md).

    Args:
        max_send_buffer: Bytes queued for the peer before senders (calls, notifications,
            `send_update`) wait for the peer to read.
        max_buffered_updates: Updates and notification callbacks received but not yet
            consumed before the reader stops reading (the OS pipe then pushes back on
            the peer). One turn nobody iterates can therefore stall the connection.
        max_inflight: Requests from the peer being handled at once before the reader
            stops reading.
        max_owed_answers: Answers owed to the peer before the reader stops reading:
            its requests being handled plus answers queued but not yet written. So a
            peer that pipelines requests and never reads the answers costs bounded
            memory. Both checked before each read: one read (64 KiB) may add a
            chunk's worth of requests past them.
    """

    max_send_buffer: int = 4 << 20
    max_buffered_updates: int = 4096
    max_inflight: int = 256
    max_owed_answers: int = 4096


class Signal(Protocol):
    """Wakes code waiting for the engine's state to change; called with `lock` held."""

    def notify(self) -> None: ...


class Waiter(Protocol):
    """What a call's caller waits on: a `concurrent.futures.Future` or `asyncio.Future`."""

    def done(self) -> bool: ...
    def result(self) -> Outcome[Any]: ...
    def set_result(self, result: Outcome[Any], /) -> None: ...


class Cancellable(Protocol):
    """A running or queued handler. `cancel()` returns True when the handler will now
    never answer (queued pool work), so the engine answers -32800 for it; False when it
    still answers from its own cancellation (an asyncio task) or already finished."""

    def cancel(self) -> bool: ...


@attrs.frozen(kw_only=True, order=False)
class Outcome(Generic[T]):
    """How a call ended: a value, or an error to raise in the caller."""

    value: Any = None
    error: BaseException | None = None

    def unwrap(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


class Expired(Exception):
    """Thrown into a flow whose wait for a call's outcome passed its deadline."""


class Batch:
    """Frames the writer took from the queue: one write, then `Engine.wrote(batch)`."""

    __slots__ = ("answers", "data", "replies")

    def __init__(self, data: bytes, replies: int, answers: int) -> None:
        self.data = data
        self.replies = replies  # bytes of answers we owe
        self.answers = answers  # how many answers


class _NoWaiter:
    """Stands in for the waiter of a prompt: its turn's sink receives the outcome."""

    def done(self) -> bool:
        return True

    def result(self) -> Outcome[Any]:
        raise NotImplementedError

    def set_result(self, result: Outcome[Any], /) -> None:
        return None


_NO_WAITER: Final = _NoWaiter()
