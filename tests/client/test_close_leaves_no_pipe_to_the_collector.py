"""Closing a blocking `Client` closes every pipe to its agent, also when a thread reading
one was still finishing when close() stopped waiting for it (as on a busy machine): that
thread closes its pipe as it ends, instead of leaving it to the garbage collector (a
`ResourceWarning` "unclosed file", reported wherever the collector happens to run).

The asyncio facade has no such threads (its pipes are transports the loop closes)."""

from __future__ import annotations

import sys
import time
from typing import Any

import pytest

from acp_sdk import Client
from acp_sdk._driver import threads
from acp_sdk._driver.threads import ThreadDriver

pytestmark = pytest.mark.timeout(60)


def test_a_reader_that_outlives_close_closes_its_own_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    real_read = ThreadDriver._read

    def slow_after_close(self: ThreadDriver, op: Any) -> bytes:
        data = real_read(self, op)
        if self._closed:
            time.sleep(0.5)  # still running when close() stops waiting for it
        return data

    monkeypatch.setattr(ThreadDriver, "_read", slow_after_close)
    monkeypatch.setattr(threads, "JOIN_WAIT", 0.05)
    client = Client.spawn(
        [sys.executable, "-m", "acp_sdk", "agent"], close_timeout=0.5, terminate_timeout=0.5
    )
    client.open()
    popen = client.process
    assert popen is not None
    driver = client._driver
    assert driver is not None
    client.close()
    outlived = [thread for thread in driver._threads if thread.is_alive()]
    assert outlived, "no thread outlived close(): the case this test is about did not happen"
    for thread in driver._threads:
        thread.join(10)
        assert not thread.is_alive(), thread.name
    pipes = {"stdin": popen.stdin, "stdout": popen.stdout, "stderr": popen.stderr}
    assert {name: pipe is not None and pipe.closed for name, pipe in pipes.items()} == {
        "stdin": True,
        "stdout": True,
        "stderr": True,
    }
