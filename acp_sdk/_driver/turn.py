"""A prompt turn's state and its clock: the one place a turn's timeout is decided.

The engine (`engine.py`) owns every `Sink` and acts on what its clock says: it starts
the clock in `Engine.begin_turn`, re-arms the idle deadline on each `session/update`
of the session and each request the agent makes in it, and `Engine.expire_turns` (woken
in time by `flows.clock_loop`) sends `session/cancel` or ends the turn with
`RequestTimeout`, as `Sink.expire` decides. The facades pass numbers only.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Any, Final, Literal

from acp_sdk.protocol._errors import RequestTimeout
from acp_sdk.protocol._jsonrpc import RequestId

if TYPE_CHECKING:
    from acp_sdk._driver.vocabulary import Outcome

CANCEL_GRACE: Final = 5.0
"""Seconds a turn whose timeout passed gives the agent, after `session/cancel`, to end
it (stop reason `cancelled`) before the turn fails with `RequestTimeout`."""


def deadline_after(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout


def time_left(deadline: float | None) -> float | None:
    """Seconds until `deadline` (None: no deadline; 0 when passed)."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())


class Sink:
    """A prompt turn's state: its updates in arrival order, how it ended, and its clock.

    Consumed once: iterating a finished turn again yields nothing and ends the same way.
    The clock (set by `Engine.begin_turn`, re-armed by `_route`, acted on by
    `Engine.expire_turns`): `deadline` bounds the whole turn, `idle_deadline` the gap
    between the agent's updates and requests in the session; once one passes,
    `session/cancel` is sent, `timed_out` says which, and `give_up_at` ends the grace.
    """

    __slots__ = (
        "asking",
        "deadline",
        "give_up_at",
        "grace",
        "idle",
        "idle_deadline",
        "outcome",
        "received",
        "released",
        "request_id",
        "session_id",
        "timed_out",
        "timeout",
        "updates",
    )

    def __init__(
        self,
        session_id: str,
        request_id: RequestId = 0,
        *,
        timeout: float | None = None,
        idle: float | None = None,
        grace: float | None = None,
    ) -> None:
        self.session_id = session_id
        self.request_id = request_id
        self.released = False  # its updates no longer count as buffered
        self.updates: deque[Any] = deque()
        self.outcome: Outcome[Any] | None = None
        self.received = 0
        self.timeout = timeout
        self.idle = idle
        self.grace = CANCEL_GRACE if grace is None else grace
        self.deadline = deadline_after(timeout)
        self.idle_deadline = deadline_after(idle)
        self.give_up_at: float | None = None
        self.asking = 0
        """Requests the agent made in the session that we have not answered yet."""
        self.timed_out: str | None = None
        """Which limit ended the turn: "timeout" or "idle_timeout" (None: neither)."""

    def ready(self) -> bool:
        return bool(self.updates) or self.outcome is not None

    def next_deadline(self) -> float | None:
        if self.give_up_at is not None:
            return self.give_up_at
        if self.idle_deadline is None or self.deadline is None:
            return self.deadline if self.idle_deadline is None else self.idle_deadline
        return min(self.deadline, self.idle_deadline)

    def rearm(self) -> None:
        """The agent said something in the turn: the idle deadline starts again."""
        if self.idle is not None:
            self.idle_deadline = time.monotonic() + self.idle

    def expire(self, now: float, *, held_back: bool = False) -> Literal["cancel", "give up"] | None:
        """The clock's rule, at `now` (`lock` held): "cancel" the first time a deadline
        passed (noting which in `timed_out`, and starting the grace), "give up" once the
        grace passed too; None while nothing is due. A silence that is ours is not the
        agent's idleness, so the idle deadline starts again instead: while the turn's
        updates wait for its consumer, while we have not answered a request the agent
        made in the session (a permission question waiting for a person), and while
        the client is not reading at all (`held_back`: another turn nobody iterates,
        a slow callback)."""
        due = self.next_deadline()
        if due is None or due > now or self.outcome is not None:
            return None
        if self.give_up_at is not None:
            return "give up"
        hard = self.deadline is not None and self.deadline <= now
        if not hard and (self.updates or self.asking or held_back):
            self.rearm()
            return None
        self.timed_out = "timeout" if hard else "idle_timeout"
        self.give_up_at = now + self.grace
        return "cancel"

    def timeout_error(self) -> RequestTimeout:
        limit = (
            f"timeout {self.timeout:g} s"
            if self.timed_out == "timeout"
            else f"idle timeout {self.idle:g} s"
        )
        return RequestTimeout(
            f"the prompt turn passed its {limit} and the agent did not end it within "
            f"{self.grace:g} s of session/cancel",
            method="session/prompt",
        )
