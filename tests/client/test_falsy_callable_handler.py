"""A handler object whose `session_update` is a callable that happens to be falsy (a
recorder subclassing list, empty at first) still gets every update: the per-row cache of
notification callbacks tested the handler's truth, not whether there was one."""

from __future__ import annotations

import types
from typing import Any

from acp_sdk import AsyncClient, Client


class Recorder(list[Any]):
    def __call__(self, update: Any) -> None:
        self.append(update)


class Handlers:
    def __init__(self) -> None:
        self.session_update = Recorder()


def test_a_falsy_callable_handler_is_still_called() -> None:
    row: Any = types.SimpleNamespace(handler_name="session_update")
    for facade in (AsyncClient, Client):
        handlers: Any = Handlers()  # a duck-typed handler object
        client: Any = facade.spawn(["true"], handlers=[handlers])  # never started
        callbacks = client._notification_callbacks(row, None)
        assert list(callbacks) == [handlers.session_update]
        assert client._notification_callbacks(row, None) == callbacks  # cached
