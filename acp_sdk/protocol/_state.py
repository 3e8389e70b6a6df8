"""The connection lifecycle, as one table (h11's rule: every transition lives here).

`Connection` changes its lifecycle only through `step`, which looks the transition up in
`TRANSITIONS`; a pair missing from the table is a bug and raises `LocalProtocolError`.

    state         trigger                  next state
    ------------  -----------------------  ------------
    NEW           INITIALIZE_STARTED       INITIALIZING  initialize sent (client) / received (agent)
    INITIALIZING  INITIALIZE_SUCCEEDED     READY         answered with a usable result
    INITIALIZING  INITIALIZE_FAILED        NEW           error, bad answer, cancelled, timed out:
                                                         the client may try again
    NEW           END_OF_INPUT             CLOSED        half-closed (see below)
    INITIALIZING  END_OF_INPUT             CLOSED        half-closed
    READY         END_OF_INPUT             CLOSED        half-closed
    NEW           NOT_AN_AGENT             CLOSED        client: the agent wrote only lines
    INITIALIZING  NOT_AN_AGENT             CLOSED        that are not JSON-RPC, past the limit,
                                                         before answering initialize: given up
    any           CLOSE                    CLOSED        closed locally: nothing more to answer

An initialize is never answered in CLOSED: the end of input that follows it waits, held,
behind its answer (below), and after a local close nothing can be answered.

The half-close is the one flag beside the state, `Lifecycle.answerable`: end of input
moves to CLOSED (no more calls, no more inbound frames) but requests already received
stay answerable, since the peer may still read; only `CLOSE` (a local close) and
`NOT_AN_AGENT` (the client gives up on a peer that is not speaking ACP) clear it.

Before READY the only request either side may exchange is `initialize`; after it, a
second `initialize` is refused (`refusal`). Requests are processed in the order they
arrive: on the side that received `initialize` (the agent), what arrives after it while
it is unanswered (INITIALIZING) is held by the connection, unprocessed, and processed
once the answer is sent (`Connection`, bounded); so a client may pipeline `initialize`
and `session/new` in one write. Holding changes no state: it is how INITIALIZING reads
on that side.
"""

from __future__ import annotations

import enum
from types import MappingProxyType
from typing import Final

import attrs

from acp_sdk.protocol._errors import LocalProtocolError


class State(enum.Enum):
    NEW = "new"
    INITIALIZING = "initializing"
    READY = "ready"
    CLOSED = "closed"


class Trigger(enum.Enum):
    INITIALIZE_STARTED = "initialize sent or received"
    INITIALIZE_SUCCEEDED = "initialize answered with a result"
    INITIALIZE_FAILED = "initialize failed"
    END_OF_INPUT = "end of input"
    NOT_AN_AGENT = "not an agent: only lines that are not JSON-RPC before initialize's answer"
    CLOSE = "close"


_OPEN: Final = (State.NEW, State.INITIALIZING, State.READY)

TRANSITIONS: Final = MappingProxyType(
    {
        (State.NEW, Trigger.INITIALIZE_STARTED): State.INITIALIZING,
        (State.INITIALIZING, Trigger.INITIALIZE_SUCCEEDED): State.READY,
        (State.INITIALIZING, Trigger.INITIALIZE_FAILED): State.NEW,
        **{(state, Trigger.END_OF_INPUT): State.CLOSED for state in _OPEN},
        (State.NEW, Trigger.NOT_AN_AGENT): State.CLOSED,
        (State.INITIALIZING, Trigger.NOT_AN_AGENT): State.CLOSED,
        **{(state, Trigger.CLOSE): State.CLOSED for state in State},
    }
)


@attrs.frozen(kw_only=True, order=False)
class Lifecycle:
    """Where a connection is: its `state`, and whether received requests may still be
    answered (`answerable`: True until a local close, also after end of input)."""

    state: State = State.NEW
    answerable: bool = True


def advance(state: State, trigger: Trigger) -> State:
    try:
        return TRANSITIONS[(state, trigger)]
    except KeyError:
        raise LocalProtocolError(f"cannot go from {state.value} on {trigger.value}") from None


_ENDS_ANSWERING: Final = frozenset({Trigger.CLOSE, Trigger.NOT_AN_AGENT})


def step(lifecycle: Lifecycle, trigger: Trigger) -> Lifecycle:
    """The lifecycle after `trigger`: the table's next state; `CLOSE` and
    `NOT_AN_AGENT` end answering."""
    return Lifecycle(
        state=advance(lifecycle.state, trigger),
        answerable=lifecycle.answerable and trigger not in _ENDS_ANSWERING,
    )


def refusal(state: State, method: str) -> str | None:
    """Why a request for `method` is not allowed in `state` (None: allowed)."""
    if state is State.CLOSED:
        return "the connection is closed"
    if method == "initialize":
        return None if state is State.NEW else "the connection is already initialized"
    if state is not State.READY:
        return "the connection is not initialized: initialize first"
    return None
