"""One blocking test API over both client facades, so one behaviour suite runs twice.

`SyncDriver` calls `Client` directly. `AsyncDriver` runs an event loop in a thread and
submits each step to it as a coroutine, so the same test body drives `AsyncClient`.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from acp_sdk.aio_client import AsyncClient, AsyncSession
from acp_sdk.schema import ContentBlock, PromptResponse, SessionUpdate
from acp_sdk.sync_client import Client, Session

T = TypeVar("T")
SCENARIO = [sys.executable, "-m", "acp_sdk", "agent"]
TIMEOUT = 30.0


class SyncDriver:
    name = "sync"

    def __init__(self, argv: Sequence[str] = SCENARIO, **options: Any) -> None:
        self.client = Client.spawn(argv, **options)

    def __enter__(self) -> SyncDriver:
        self.client.open()
        return self

    def __exit__(self, *_: object) -> None:
        self.client.close()

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.client, name)(*args, **kwargs)

    def request(self, row: Any, params: Any) -> Any:
        return self.client.request(row, params)

    def new_session(self, cwd: str = "/tmp") -> Session[Any]:
        return self.client.new_session(cwd=cwd)

    def prompt(
        self, session: Any, prompt: str | Sequence[ContentBlock]
    ) -> tuple[list[SessionUpdate], PromptResponse]:
        turn = session.prompt(prompt)
        updates = list(turn)
        assert turn.response is not None
        return updates, turn.response

    def prompt_and_cancel(
        self, session: Any, prompt: str, after: float
    ) -> tuple[list[SessionUpdate], PromptResponse]:
        """Cancel from another thread while this one iterates."""
        timer = threading.Timer(after, session.cancel)
        timer.start()
        try:
            return self.prompt(session, prompt)
        finally:
            timer.cancel()

    @property
    def agent_capabilities(self) -> Any:
        return self.client.agent_capabilities

    @property
    def agent_info(self) -> Any:
        return self.client.agent_info


class AsyncDriver:
    name = "async"

    def __init__(self, argv: Sequence[str] = SCENARIO, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.client = AsyncClient.spawn(argv, **options)

    def run(self, factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return asyncio.run_coroutine_threadsafe(factory(), self._loop).result(TIMEOUT)

    def __enter__(self) -> AsyncDriver:
        self.run(self.client.__aenter__)
        return self

    def __exit__(self, *_: object) -> None:
        try:
            self.run(self.client.aclose)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(TIMEOUT)
            self._loop.close()

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        async def go() -> Any:
            return await getattr(self.client, name)(*args, **kwargs)

        return self.run(go)

    def request(self, row: Any, params: Any) -> Any:
        return self.run(lambda: self.client.request(row, params))

    def new_session(self, cwd: str = "/tmp") -> AsyncSession[Any]:
        return self.run(lambda: self.client.new_session(cwd=cwd))

    def prompt(
        self, session: Any, prompt: str | Sequence[ContentBlock]
    ) -> tuple[list[SessionUpdate], PromptResponse]:
        async def go() -> tuple[list[SessionUpdate], PromptResponse]:
            turn = session.prompt(prompt)
            updates = [update async for update in turn]
            assert turn.response is not None
            return updates, turn.response

        return self.run(go)

    def prompt_and_cancel(
        self, session: Any, prompt: str, after: float
    ) -> tuple[list[SessionUpdate], PromptResponse]:
        """Cancel from another task while this one iterates."""

        async def go() -> tuple[list[SessionUpdate], PromptResponse]:
            async def cancel_later() -> None:
                await asyncio.sleep(after)
                await session.cancel()

            canceller = asyncio.get_running_loop().create_task(cancel_later())
            turn = session.prompt(prompt)
            updates = [update async for update in turn]
            await canceller
            assert turn.response is not None
            return updates, turn.response

        return self.run(go)

    @property
    def agent_capabilities(self) -> Any:
        return self.client.agent_capabilities

    @property
    def agent_info(self) -> Any:
        return self.client.agent_info


Driver = SyncDriver | AsyncDriver
DRIVERS: dict[str, type[SyncDriver] | type[AsyncDriver]] = {
    "sync": SyncDriver,
    "async": AsyncDriver,
}
