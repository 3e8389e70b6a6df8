"""When opening a client fails after `spawn` started the agent (its pipes, its driver),
the agent is stopped and reaped before the error reaches the caller, on both facades:
SIGTERM at once, SIGKILL after `terminate_timeout` for an agent that ignores SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import acp_sdk.client._aio as aio_client
import acp_sdk.client._sync as sync_client
from acp_sdk import AsyncClient, Client
from tests._parallel import child_pids
from tests.client.facades import SCENARIO

pytestmark = pytest.mark.timeout(60)

STUBBORN = [
    sys.executable,
    "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)",
]
"""An agent that ignores SIGTERM and its stdin's end: only SIGKILL stops it."""
AGENTS = {"scenario": SCENARIO, "stubborn": STUBBORN}


class Boom(Exception):
    pass


def ignores_sigterm(pid: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


def breaking(started: list[int], stubborn: bool) -> tuple[Any, Any]:
    """Stand-ins for what `open` builds after the start: note the agent's pid (once a
    stubborn one ignores SIGTERM, so the kill is what stops it), then fail."""
    before = set(child_pids(os.getpid()))

    def fail(*_args: Any, **_kwargs: Any) -> Any:
        started.extend(set(child_pids(os.getpid())) - before)
        deadline = time.monotonic() + 20
        while stubborn and not all(map(ignores_sigterm, started)):
            assert time.monotonic() < deadline, "the stubborn agent never started"
            time.sleep(0.01)
        raise Boom("the driver failed")

    async def fail_async(*args: Any, **kwargs: Any) -> Any:
        return fail(*args, **kwargs)

    return fail, fail_async


# (facade, the module attribute replaced): the pipes and the driver, on each facade
CASES = [
    ("sync", "StreamTransport"),
    ("sync", "ThreadDriver"),
    ("async", "open_agent_pipes"),
    ("async", "AsyncDriver"),
]


@pytest.mark.parametrize("agent", sorted(AGENTS))
@pytest.mark.parametrize(("facade", "target"), CASES)
def test_the_started_agent_is_stopped(
    monkeypatch: pytest.MonkeyPatch, facade: str, target: str, agent: str
) -> None:
    started: list[int] = []
    fail, fail_async = breaking(started, stubborn=agent == "stubborn")
    if facade == "sync":
        replacement: Any = fail
        if target == "StreamTransport":
            replacement = type("Broken", (), {"of_process": staticmethod(fail)})
        monkeypatch.setattr(sync_client, target, replacement)
        with pytest.raises(Boom):
            Client.spawn(AGENTS[agent], terminate_timeout=0.5).open()
    else:
        monkeypatch.setattr(aio_client, target, fail_async if target.islower() else fail)

        async def main() -> None:
            await AsyncClient.spawn(AGENTS[agent], terminate_timeout=0.5).open()

        with pytest.raises(Boom):
            asyncio.run(main())
    assert len(started) == 1  # the agent was running when the failure came
    assert started[0] not in child_pids(os.getpid())
    assert not Path(f"/proc/{started[0]}").exists()  # and reaped, not a zombie
