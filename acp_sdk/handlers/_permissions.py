"""Permission policies: `AllowOnce`, `RejectAll`, `AskPermission`, and the default answer
when a client was given none (`reject_by_default`)."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias, overload

from acp_sdk.handlers._base import ClientHandlers
from acp_sdk.protocol._errors import RequestError
from acp_sdk.protocol._session_state import SessionState, ToolCallView
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


PermissionChoice: TypeAlias = str | Awaitable[str | None] | None
"""What an `AskPermission` callback returns: an offered option id, None to cancel, or
(on `AsyncClient`) an awaitable of either."""


class AskPermission(ClientHandlers):
    """Permission policy: ask a callback, which returns an option id or None (cancel).

    The callback is `ask(request)` or `ask(request, tool_call)`, where `tool_call` is the
    merged view (`ToolCallView`) of the tool call the request is about: what the session
    knows of it, updated with the request's own `toolCall` fields. On `AsyncClient` the
    callback may be a coroutine function (a plugin awaits its UI); the blocking `Client`
    needs a plain one.
    """

    @overload
    def __init__(self, ask: Callable[[RequestPermissionRequest], PermissionChoice]) -> None: ...
    @overload
    def __init__(
        self, ask: Callable[[RequestPermissionRequest, ToolCallView], PermissionChoice]
    ) -> None: ...
    def __init__(self, ask: Callable[..., PermissionChoice]) -> None:
        self._ask = ask
        self._wants_view = _positional_count(ask) >= 2
        self._state_of: Callable[[str], SessionState] | None = None

    def bind(self, state_of: Callable[[str], SessionState]) -> None:
        """Called by the client on open: how to read a session's state."""
        self._state_of = state_of

    def request_permission(self, params: RequestPermissionRequest) -> Any:
        if self._wants_view:
            choice = self._ask(params, self._view(params))
        else:
            choice = self._ask(params)
        if inspect.isawaitable(choice):
            return self._answer_later(choice, params)
        return _answer(choice, params)

    async def _answer_later(
        self, choice: Awaitable[str | None], params: RequestPermissionRequest
    ) -> RequestPermissionResponse:
        return _answer(await choice, params)

    def _view(self, params: RequestPermissionRequest) -> ToolCallView:
        state = self._state_of(params.session_id) if self._state_of is not None else SessionState()
        view = state.apply(params.tool_call).tool_call(params.tool_call.tool_call_id)
        assert view is not None  # apply() always creates the entry
        return view


def _answer(choice: str | None, params: RequestPermissionRequest) -> RequestPermissionResponse:
    if choice is None:
        return RequestPermissionResponse(outcome=CancelledPermissionOutcome())
    if choice not in {option.option_id for option in params.options}:
        raise RequestError.internal_error({"reason": "the callback chose an option not offered"})
    return RequestPermissionResponse(outcome=SelectedPermissionOutcome(option_id=choice))


def _positional_count(function: Callable[..., Any]) -> int:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return 2
    return sum(1 for p in parameters if p.kind in kinds)
