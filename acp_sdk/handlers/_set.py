"""`HandlerSet`: several handler objects as one client's: which serves each method, the
capabilities they imply, the default permission answer, and closing them."""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from acp_sdk.handlers._base import (
    NOTIFICATION_METHODS,
    REQUEST_METHODS,
    TERMINAL_METHODS,
    AnyHandlers,
    AsyncClientHandlers,
    ClientHandlers,
)
from acp_sdk.handlers._permissions import NO_PERMISSION_POLICY, reject_by_default
from acp_sdk.schema import (
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
    FileSystemCapabilities,
    RequestPermissionRequest,
    RequestPermissionResponse,
)

log = logging.getLogger("acp_sdk.client")

log = logging.getLogger("acp_sdk.client")


def _serves(handler: Any, name: str) -> bool:
    for base in (ClientHandlers, AsyncClientHandlers):
        if isinstance(handler, base):
            return getattr(type(handler), name) is not getattr(base, name)
    return callable(getattr(handler, name, None))


class HandlerSet:
    """Several handler objects as one: for each method, the first that serves it.

    `session/request_permission` is never left unanswered: when no handler serves it,
    `get("request_permission")` returns a default that rejects (`reject_by_default`) and
    logs one warning on the "acp_sdk.client" logger, naming the policies to pass. That is
    the only baseline client request in the spec (`overview.mdx`, "Client / Baseline
    Methods"); every other client method is gated by a capability this set advertises
    only when served (`session/update` and `elicitation/complete` are notifications: they
    need no answer).
    """

    def __init__(self, handlers: AnyHandlers | Sequence[AnyHandlers] | None) -> None:
        if handlers is None:
            items: list[Any] = []
        elif isinstance(handlers, (ClientHandlers, AsyncClientHandlers)):
            items = [handlers]
        else:
            items = list(handlers)
        self._items = items
        self._by_name: dict[str, Callable[[Any], Any]] = {}
        for name in (*REQUEST_METHODS, *NOTIFICATION_METHODS):
            for handler in items:
                if _serves(handler, name):
                    self._by_name[name] = getattr(handler, name)
                    break
        self.elicitation_url = any(getattr(h, "elicitation_url", False) for h in items)
        self._lock = threading.Lock()
        self._warned = False
        self._closed = False

    def get(self, name: str) -> Callable[[Any], Any] | None:
        """The first handler serving method `name` (a handler name such as
        `read_text_file`), or None."""
        handler = self._by_name.get(name)
        if handler is None and name == "request_permission":
            return self._default_permission
        return handler

    def _default_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        """A plain function, so both facades can call it (the asyncio one in an executor)."""
        with self._lock:
            warn, self._warned = not self._warned, True
        if warn:
            log.warning("%s", NO_PERMISSION_POLICY)
        return reject_by_default(params)

    def capabilities(self) -> ClientCapabilities:
        """Advertise exactly what is served (a client never promises what it cannot do)."""
        serves = self._by_name.__contains__
        elicitation = None
        if serves("create_elicitation"):
            elicitation = ElicitationCapabilities(
                form=ElicitationFormCapabilities(),
                url=ElicitationUrlCapabilities() if self.elicitation_url else None,
            )
        return ClientCapabilities(
            fs=FileSystemCapabilities(
                read_text_file=serves("read_text_file"), write_text_file=serves("write_text_file")
            ),
            terminal=all(serves(name) for name in TERMINAL_METHODS),
            elicitation=elicitation,
        )

    def bind(self, state_of: Callable[[str], Any]) -> None:
        """Give handlers that read session state (`AskPermission`) the client's lookup."""
        for handler in self._items:
            bind = getattr(handler, "bind", None)
            if callable(bind):
                bind(state_of)

    def close(self) -> None:
        """Call `close()` on every handler object that has one (`LocalTerminals` kills its
        commands), each object once. Idempotent; a failing `close()` is logged, not
        raised, and the others still run. `close()` must be a plain method: a coroutine
        it returns cannot be awaited here, so it is discarded with a warning."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        seen: set[int] = set()
        for handler in self._items:
            if id(handler) in seen:
                continue
            seen.add(id(handler))
            close = getattr(handler, "close", None)
            if not callable(close):
                continue
            try:
                outcome = close()
            except Exception:
                log.exception("closing the handler %r failed", handler)
                continue
            if inspect.iscoroutine(outcome):
                outcome.close()
                log.warning(
                    "%r.close() is a coroutine; HandlerSet.close() cannot await it", handler
                )


# ---------------------------------------------------------------------------- built-ins
