"""Permission policies: `AllowOnce`, `RejectAll`, `AskPermission`, and the default answer
when a client was given none (`reject_by_default`)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from acp_sdk.handlers._base import ClientHandlers
from acp_sdk.protocol.errors import RequestError
from acp_sdk.schema import (
    CancelledPermissionOutcome,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
)

log = logging.getLogger("acp_sdk.client")

NO_PERMISSION_POLICY = (
    "the agent asked for permission (session/request_permission) and no handler answers "
    "it, so the client rejects it (the offered `reject_once` option, else the `cancelled` "
    "outcome). Pass a policy to the client to decide instead: handlers=AllowOnce(), "
    "handlers=RejectAll() or handlers=AskPermission(callback), from acp_sdk.handlers."
)


def reject_by_default(params: RequestPermissionRequest) -> RequestPermissionResponse:
    """The answer a client gives when nothing decides: reject this once.

    `session/request_permission` is a baseline client method (every client must answer
    it, no capability gates it), so an unanswered request would stall the agent's turn.
    Picks the first offered `reject_once` option. It never picks `reject_always`: that
    records a lasting decision ("reject and remember") which nobody made; with no
    `reject_once` on offer the answer is the `cancelled` outcome, which is always valid
    and which agents must handle (they end the tool call, typically the turn).
    """
    for option in params.options:
        if option.kind == "reject_once":
            return RequestPermissionResponse(
                outcome=SelectedPermissionOutcome(option_id=option.option_id)
            )
    return RequestPermissionResponse(outcome=CancelledPermissionOutcome())


class AllowOnce(ClientHandlers):
    """Permission policy: pick the first `allow_once` option (else any allow option)."""

    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        for kinds in (("allow_once",), ("allow_once", "allow_always")):
            for option in params.options:
                if option.kind in kinds:
                    return RequestPermissionResponse(
                        outcome=SelectedPermissionOutcome(option_id=option.option_id)
                    )
        return RequestPermissionResponse(outcome=CancelledPermissionOutcome())


class RejectAll(ClientHandlers):
    """Permission policy: pick a reject option; cancel when none is offered."""

    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        for option in params.options:
            if option.kind in ("reject_once", "reject_always"):
                return RequestPermissionResponse(
                    outcome=SelectedPermissionOutcome(option_id=option.option_id)
                )
        return RequestPermissionResponse(outcome=CancelledPermissionOutcome())


class AskPermission(ClientHandlers):
    """Permission policy: ask a callback, which returns an option id or None (cancel)."""

    def __init__(self, ask: Callable[[RequestPermissionRequest], str | None]) -> None:
        self._ask = ask

    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        choice = self._ask(params)
        if choice is None:
            return RequestPermissionResponse(outcome=CancelledPermissionOutcome())
        if choice not in {option.option_id for option in params.options}:
            raise RequestError.internal_error(
                {"reason": "the callback chose an option not offered"}
            )
        return RequestPermissionResponse(outcome=SelectedPermissionOutcome(option_id=choice))
