"""One blocking test API over both client facades, so one behaviour suite runs twice.

`SyncFacade` calls `Client` directly. `AsyncFacade` runs an event loop in a thread and
submits each step to it as a coroutine, so the same test body drives `AsyncClient`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from acp_sdk import AsyncClient, Client
from acp_sdk.client import AsyncSession, Session
from acp_sdk.schema import ContentBlock, PromptResponse, SessionUpdate
from tests._parallel import load_factor

T = TypeVar("T")
log = logging.getLogger(__name__)
Call = tuple[tuple[Any, ...], dict[str, Any]]
"""One call for `burst`: positional and keyword arguments."""
SCENARIO = [sys.executable, "-m", "acp_sdk", "agent"]
TIMEOUT = 30.0


class SyncFacade:
    name = "sync"

    def __init__(self, argv: Sequence[str] = SCENARIO, **options: Any) -> None:
        self.client = Client.spawn(argv, **options)

    def __enter__(self) -> SyncFacade:
        self.client.open()
        return self

    def __exit__(self, *_: object) -> None:
        self.client.close()

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.client, name)(*args, **kwargs)

    def request(self, row: Any, params: Any) -> Any:
        return self.client.request(row, params)

    def start(self, session: Any, prompt: str | Sequence[ContentBlock], **options: Any) -> Any:
        """Start a turn (`session.prompt`); it is running when this returns."""
        return session.prompt(prompt, **options)

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

    # ------------------------------------------------------------ torture helpers

    def close(self) -> None:
        self.client.close()

    def drain(self, turn: Any) -> tuple[list[SessionUpdate], BaseException | None]:
        """Iterate a turn to its end; the updates seen, and the error it ended with."""
        updates: list[SessionUpdate] = []
        try:
            for update in turn:
                updates.append(update)
        except Exception as error:
            return updates, error
        return updates, None

    def finish(self, turn: Any) -> PromptResponse:
        """Run a turn to its end the non-iterating way (`turn.wait()`)."""
        response: PromptResponse = turn.wait()
        return response

    def burst(
        self, name: str, calls: Sequence[Call], workers: int = 20
    ) -> list[BaseException | None]:
        """Make `calls` (args, kwargs) to the client method `name` from `workers` threads;
        each call's outcome (None when it returned), in call order."""
        outcomes: list[BaseException | None] = [None] * len(calls)
        method = getattr(self.client, name)

        def work(first: int) -> None:
            for index in range(first, len(calls), workers):
                args, kwargs = calls[index]
                try:
                    method(*args, **kwargs)
                except Exception as error:
                    outcomes[index] = error

        threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return outcomes

    def prompt_with_burst(
        self, session: Any, prompt: str, name: str, calls: Sequence[Call]
    ) -> tuple[list[SessionUpdate], BaseException | None, list[BaseException | None]]:
        """Iterate a turn while another thread makes `calls` to `name`, one after another."""
        outcomes: list[list[BaseException | None]] = []
        sender = threading.Thread(
            target=lambda: outcomes.append(self.burst(name, calls, workers=1)), daemon=True
        )
        turn = session.prompt(prompt)
        sender.start()
        updates, error = self.drain(turn)
        sender.join()
        return updates, error, outcomes[0] if outcomes else []


class AsyncFacade:
    name = "async"

    def __init__(self, argv: Sequence[str] = SCENARIO, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.client = AsyncClient.spawn(argv, **options)

    def run(self, factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return asyncio.run_coroutine_threadsafe(factory(), self._loop).result(TIMEOUT)

    def __enter__(self) -> AsyncFacade:
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

    def start(self, session: Any, prompt: str | Sequence[ContentBlock], **options: Any) -> Any:
        """Start a turn on the loop (`session.prompt` needs a running loop)."""

        async def go() -> Any:
            return session.prompt(prompt, **options)

        return self.run(go)

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

    # ------------------------------------------------------------ torture helpers

    def close(self) -> None:
        self.run(self.client.aclose)

    def cancel_stragglers(self, timeout: float = 3.0) -> list[asyncio.Task[Any]]:
        """Cancel every task still on the loop (a step that hung left it there); the ones
        still pending after `timeout` seconds."""

        async def go() -> list[asyncio.Task[Any]]:
            current = asyncio.current_task()
            tasks = [task for task in asyncio.all_tasks() if task is not current]
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=timeout)
            return [task for task in tasks if not task.done()]

        return asyncio.run_coroutine_threadsafe(go(), self._loop).result(timeout + 2)

    def drain(self, turn: Any) -> tuple[list[SessionUpdate], BaseException | None]:
        """Iterate a turn to its end; the updates seen, and the error it ended with."""

        async def go() -> tuple[list[SessionUpdate], BaseException | None]:
            updates: list[SessionUpdate] = []
            try:
                async for update in turn:
                    updates.append(update)
            except Exception as error:
                return updates, error
            return updates, None

        return self.run(go)

    def finish(self, turn: Any) -> PromptResponse:
        """Run a turn to its end the non-iterating way (`await turn`)."""

        async def go() -> PromptResponse:
            response: PromptResponse = await turn
            return response

        return self.run(go)

    def burst(
        self, name: str, calls: Sequence[Call], workers: int = 20
    ) -> list[BaseException | None]:
        """Make `calls` (args, kwargs) to the client method `name` from `workers` tasks;
        each call's outcome (None when it returned), in call order."""

        async def go() -> list[BaseException | None]:
            outcomes: list[BaseException | None] = [None] * len(calls)
            method = getattr(self.client, name)

            async def work(first: int) -> None:
                for index in range(first, len(calls), workers):
                    args, kwargs = calls[index]
                    try:
                        await method(*args, **kwargs)
                    except Exception as error:
                        outcomes[index] = error

            await asyncio.gather(*(work(w) for w in range(workers)))
            return outcomes

        return asyncio.run_coroutine_threadsafe(go(), self._loop).result()

    def prompt_with_burst(
        self, session: Any, prompt: str, name: str, calls: Sequence[Call]
    ) -> tuple[list[SessionUpdate], BaseException | None, list[BaseException | None]]:
        """Iterate a turn while another task makes `calls` to `name`, one after another."""

        async def go() -> tuple[
            list[SessionUpdate], BaseException | None, list[BaseException | None]
        ]:
            outcomes: list[BaseException | None] = [None] * len(calls)
            method = getattr(self.client, name)

            async def send() -> None:
                for index, (args, kwargs) in enumerate(calls):
                    try:
                        await method(*args, **kwargs)
                    except Exception as error:
                        outcomes[index] = error

            sender = asyncio.get_running_loop().create_task(send())
            updates: list[SessionUpdate] = []
            error: BaseException | None = None
            try:
                async for update in session.prompt(prompt):
                    updates.append(update)
            except Exception as raised:
                error = raised
            await sender
            return updates, error, outcomes

        return asyncio.run_coroutine_threadsafe(go(), self._loop).result()


Facade = SyncFacade | AsyncFacade
FACADES: dict[str, type[SyncFacade] | type[AsyncFacade]] = {
    "sync": SyncFacade,
    "async": AsyncFacade,
}


class Hung(AssertionError):
    """A guarded step did not finish in time (it is left running on a daemon thread)."""


def guarded(step: Callable[[], T], timeout: float, what: str = "the step") -> T:
    """Run a blocking step on a daemon thread; its result or error, or `Hung` when it is
    still blocked after `timeout` seconds, so a hang fails a test instead of stalling it.

    The seconds are an idle machine's: on a busy one (the suite runs many tests at once)
    they stretch by the highest `load_factor()` seen while waiting, so slowness is not
    taken for a hang; a hang still fails, only later."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = step()
        except BaseException as error:  # handed to the caller below
            box["error"] = error

    thread = threading.Thread(target=target, name=f"guarded: {what}", daemon=True)
    started = time.monotonic()
    thread.start()
    factor = load_factor()
    while True:
        left = started + timeout * factor - time.monotonic()
        thread.join(min(max(left, 0.0), 0.5))
        if not thread.is_alive():
            break
        factor = max(factor, load_factor())
        if time.monotonic() >= started + timeout * factor:
            waited = time.monotonic() - started
            raise Hung(
                f"{what} still blocked after {waited:.1f} s "
                f"({timeout:g} s, stretched by load factor {factor:.1f})"
            )
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


_STRAGGLERS: list[Any] = []
"""Tasks that ignored cancellation at teardown, kept referenced for the session."""


def close_bound(close_timeout: float, terminate_timeout: float) -> float:
    """How long closing a spawned client may take: the two grace periods, plus slack."""
    return close_timeout + terminate_timeout + 3.0


def alive(pid: int) -> bool:
    """True while `pid` is a live process (gone or a zombie counts as not alive)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next((line for line in status.splitlines() if line.startswith("State:")), "")
    return "Z" not in state.split()[1:2]


def wait_gone(pids: Sequence[int], timeout: float = 1.0) -> list[int]:
    """The pids still alive after waiting up to `timeout` seconds for them to go."""
    deadline = time.monotonic() + timeout
    while True:
        left = [pid for pid in pids if alive(pid)]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.02)


class Harness:
    """Opens drivers of one facade with guarded steps, hands out pid files for peers, and
    at the end closes every driver and SIGKILLs whatever peer process is left, so a test
    that fails by hanging cannot leave processes or blocked threads behind."""

    def __init__(self, cls: type[SyncFacade] | type[AsyncFacade], tmp_path: Path) -> None:
        self.cls = cls
        self.name = cls.name
        self._tmp = tmp_path
        self._drivers: list[Facade] = []
        self._pidfiles: list[Path] = []

    def open(self, argv: Sequence[str], *, timeout: float = 15.0, **options: Any) -> Facade:
        """A driver over `argv`, opened (spawned and initialized) within `timeout`."""
        driver = self.cls(argv, **options)
        self._drivers.append(driver)
        guarded(driver.__enter__, timeout, "opening the client")
        return driver

    def pidfile(self) -> str:
        """A fresh path for a peer's `--pidfile`."""
        path = self._tmp / f"peer-{len(self._pidfiles)}.pid"
        self._pidfiles.append(path)
        return str(path)

    def pids(self, pidfile: str, timeout: float = 10.0) -> list[int]:
        """The peer's pid and, when it is not this process, its parent's (a wrapper)."""
        path = Path(pidfile)
        deadline = time.monotonic() + timeout
        while not path.exists():
            if time.monotonic() > deadline:
                raise AssertionError(f"the peer never wrote {pidfile}")
            time.sleep(0.02)
        pid, parent = (int(word) for word in path.read_text().split())
        return [pid] if parent in (os.getpid(), 1) else [pid, parent]

    def cleanup(self) -> None:
        hung: list[Facade] = []
        for driver in self._drivers:
            if isinstance(driver, AsyncFacade):
                # Steps that hung left coroutines on the loop: close, then cancel them, and
                # keep any that refuse alive, or their garbage collection (in a later test)
                # reports "Exception ignored in <coroutine ...>" and fails the session.
                with contextlib.suppress(Exception):
                    guarded(driver.close, 5, "closing at teardown")
                with contextlib.suppress(Exception):
                    _STRAGGLERS.extend(driver.cancel_stragglers())
            try:
                guarded(_exiter(driver), 5, "closing at teardown")
            except Hung:
                hung.append(driver)
            except Exception:
                log.debug("closing at teardown failed", exc_info=True)
        for path in self._pidfiles:
            with contextlib.suppress(OSError, ValueError, AssertionError):
                for pid in self.pids(str(path), timeout=0):
                    _kill_peer(pid)
        for driver in self._drivers:
            process = getattr(driver.client, "process", None)
            leader: int | None = getattr(process, "pid", None)
            if leader is not None and getattr(process, "returncode", 0) is None:
                with contextlib.suppress(OSError):
                    if os.getpgid(leader) == leader:  # its own group: wrapper and children
                        os.killpg(leader, signal.SIGKILL)
        for driver in hung:  # their peers are dead now: blocked writes fail, closes return
            with contextlib.suppress(Exception):
                guarded(_exiter(driver), 5, "closing at teardown")


def _exiter(driver: Facade) -> Callable[[], None]:
    return lambda: driver.__exit__(None, None, None)


def _kill_peer(pid: int) -> None:
    """SIGKILL `pid` if it is still one of our peers (never a recycled pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return
    if alive(pid) and (b"peers/" in cmdline or cmdline.startswith(b"sh\0")):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
