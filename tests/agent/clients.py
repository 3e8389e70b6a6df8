"""One blocking test API over four ways of reaching an agent: `Client` and `AsyncClient`,
each over real stdio (the agent in a subprocess) and in-process (`acp_sdk.testing`).

So one test body checks an agent's behaviour four times. The asyncio ones run their
client on an event loop in a thread and submit each step to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs

from acp_sdk import Agent, AsyncClient, Client
from acp_sdk.schema import SessionUpdate, StopReason
from acp_sdk.testing import aconnect_in_process, connect_in_process

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30.0
WAYS = ["sync-stdio", "sync-inprocess", "async-stdio", "async-inprocess"]


@attrs.frozen(kw_only=True, order=False)
class Outcome:
    updates: list[SessionUpdate]
    stop_reason: StopReason | None
    error: BaseException | None


CancelWhen = Callable[[SessionUpdate], bool]


def _module_argv(module: str) -> list[str]:
    return [sys.executable, "-m", module]


class Way:
    """A connected client, driven by blocking calls whatever its facade."""

    def __init__(self, way: str, agent: Callable[[], Agent], module: str, **options: Any) -> None:
        self.way = way
        self._agent, self._module, self._options = agent, module, options
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stack = contextlib.ExitStack()
        self.client: Any = None

    def _run(self, factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(factory(), self._loop).result(TIMEOUT)

    def __enter__(self) -> Way:
        facade, _, transport = self.way.partition("-")
        if facade == "sync":
            if transport == "stdio":
                argv = _module_argv(self._module)
                cm: Any = Client.spawn(argv, cwd=ROOT, **self._options)
            else:
                cm = connect_in_process(self._agent(), **self._options)
            self.client = self._stack.enter_context(cm)
            return self
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        self._loop = loop

        def stop() -> None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(TIMEOUT)
            loop.close()

        self._stack.callback(stop)
        if transport == "stdio":
            acm: Any = AsyncClient.spawn(_module_argv(self._module), cwd=ROOT, **self._options)
        else:
            acm = aconnect_in_process(self._agent(), **self._options)
        self.client = self._run(acm.__aenter__)
        self._stack.callback(lambda: self._run(lambda: acm.__aexit__(None, None, None)))
        return self

    def __exit__(self, *_: object) -> None:
        self._stack.close()

    def new_session(self, cwd: str = "/project") -> Any:
        if self._loop is None:
            return self.client.new_session(cwd=cwd)
        return self._run(lambda: self.client.new_session(cwd=cwd))

    def close_session(self, session: Any) -> None:
        if self._loop is None:
            self.client.close_session(session_id=session.session_id)
        else:
            self._run(lambda: self.client.close_session(session_id=session.session_id))

    def prompt(self, session: Any, text: str, cancel_when: CancelWhen | None = None) -> Outcome:
        """Run one turn to its end; with `cancel_when`, cancel it at the first update for
        which it is true."""
        if self._loop is None:
            return _sync_turn(session, text, cancel_when)
        return self._run(lambda: _async_turn(session, text, cancel_when))

    def prompts(self, session: Any, texts: Sequence[str]) -> list[Outcome]:
        return [self.prompt(session, text) for text in texts]


def _sync_turn(session: Any, text: str, cancel_when: CancelWhen | None) -> Outcome:
    turn = session.prompt(text)
    updates: list[SessionUpdate] = []
    error: BaseException | None = None
    try:
        for update in turn:
            updates.append(update)
            if cancel_when is not None and cancel_when(update):
                cancel_when = None
                turn.cancel()
    except Exception as failure:
        error = failure
    return Outcome(updates=updates, stop_reason=turn.stop_reason, error=error)


async def _async_turn(session: Any, text: str, cancel_when: CancelWhen | None) -> Outcome:
    turn = session.prompt(text)
    updates: list[SessionUpdate] = []
    error: BaseException | None = None
    try:
        async for update in turn:
            updates.append(update)
            # The predicate may wait for the client's handlers: never on the event loop.
            if cancel_when is not None and await asyncio.to_thread(cancel_when, update):
                cancel_when = None
                await turn.cancel()
    except Exception as failure:
        error = failure
    return Outcome(updates=updates, stop_reason=turn.stop_reason, error=error)


@contextlib.contextmanager
def connected(way: str, agent: Callable[[], Agent], module: str, **options: Any) -> Iterator[Way]:
    with Way(way, agent, module, **options) as opened:
        yield opened
