"""The connection lifecycle, as one table (h11's rule: every transition lives here).

    NEW --initialize sent (client) / received (agent)--> INITIALIZING
    INITIALIZING --initialize answered with a result--> READY
    INITIALIZING --initialize answered with an error--> NEW   (the client may try again)
    any --end of input / close--> CLOSED

Before READY the only request either side may exchange is `initialize`; after it, a
second `initialize` is refused.
"""

from __future__ import annotations

import enum
from types import MappingProxyType
from typing import Final

from acp_sdk.errors import LocalProtocolError


class State(enum.Enum):
    NEW = "new"
    INITIALIZING = "initializing"
    READY = "ready"
    CLOSED = "closed"


class Trigger(enum.Enum):
    INITIALIZE_STARTED = "initialize sent or received"
    INITIALIZE_SUCCEEDED = "initialize answered with a result"
    INITIALIZE_FAILED = "initialize answered with an error"
    CLOSED = "closed"


TRANSITIONS: Final = MappingProxyType(
    {
        (State.NEW, Trigger.INITIALIZE_STARTED): State.INITIALIZING,
        (State.INITIALIZING, Trigger.INITIALIZE_SUCCEEDED): State.READY,
        (State.INITIALIZING, Trigger.INITIALIZE_FAILED): State.NEW,
        (State.NEW, Trigger.CLOSED): State.CLOSED,
        (State.INITIALIZING, Trigger.CLOSED): State.CLOSED,
        (State.READY, Trigger.CLOSED): State.CLOSED,
        (State.CLOSED, Trigger.CLOSED): State.CLOSED,
    }
)


def advance(state: State, trigger: Trigger) -> State:
    try:
        return TRANSITIONS[(state, trigger)]
    except KeyError:
        raise LocalProtocolError(f"cannot go from {state.value} on {trigger.value}") from None


def refusal(state: State, method: str) -> str | None:
    """Why a request for `method` is not allowed in `state` (None: allowed)."""
    if state is State.CLOSED:
        return "the connection is closed"
    if method == "initialize":
        return None if state is State.NEW else "the connection is already initialized"
    if state is not State.READY:
        return "the connection is not initialized: initialize first"
    return None
