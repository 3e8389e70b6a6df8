"""Starting an agent, on both facades, as processes: a program that is not an agent
(`yes garbage`, a usage text) and a silent one fail with a typed error naming
`initialize` and what they printed; a few log lines before the first frame are fine; a
request the agent sends in the very write that answers `initialize` is served."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from acp_sdk import AsyncClient, Client, ConnectionClosed, NotAnAgent, RequestTimeout
from acp_sdk.handlers import AllowOnce
from acp_sdk.protocol._intake import STRAY_LIMIT_LINES
from tests.client.facades import FACADES, SCENARIO

pytestmark = pytest.mark.timeout(60)
FACADE_NAMES = sorted(FACADES)
YES = [shutil.which("yes") or "yes", "garbage"]
SILENT = [sys.executable, "-c", "import time; time.sleep(100)"]
USAGE_THEN_SLEEP = ["sh", "-c", "echo 'Usage: myagent --acp'; sleep 100"]
LOGS_THEN_AGENT = [
    "sh",
    "-c",
    'echo "INFO starting"; echo "INFO loading"; echo "INFO ready"; exec "$@"',
    "logs",
    *SCENARIO,
]
EAGER = [sys.executable, str(Path(__file__).parent / "peers" / "eager_agent.py")]


@pytest.mark.parametrize("facade", FACADE_NAMES)
def test_yes_garbage_fails_at_once_naming_what_it_printed(facade: str) -> None:
    driver = FACADES[facade](
        YES, initialize_timeout=None, close_timeout=0.2
    )  # no timeout needed to fail
    with pytest.raises(NotAnAgent) as caught, driver:
        pass
    error = caught.value
    assert isinstance(error, ConnectionClosed)
    assert error.first_line == "garbage"
    assert error.lines == STRAY_LIMIT_LINES + 1
    assert "initialize" in str(error)
    assert "'garbage'" in str(error)
    assert driver.client.process is not None
    assert driver.client.process.poll() is not None  # stopped, reaped


@pytest.mark.parametrize("facade", FACADE_NAMES)
def test_a_silent_agent_hits_the_initialize_timeout(facade: str) -> None:
    driver = FACADES[facade](SILENT, initialize_timeout=0.5, close_timeout=0.2)
    with pytest.raises(RequestTimeout) as caught, driver:
        pass
    error = caught.value
    assert error.method == "initialize"
    assert str(error) == (
        "initialize (request 0) got no answer within 0.5 s; the agent printed nothing"
    )


@pytest.mark.parametrize("facade", FACADE_NAMES)
def test_a_usage_line_then_silence_is_named_in_the_timeout(facade: str) -> None:
    driver = FACADES[facade](USAGE_THEN_SLEEP, initialize_timeout=1.0, close_timeout=0.2)
    with pytest.raises(RequestTimeout) as caught, driver:
        pass
    error = caught.value
    assert error.method == "initialize"
    assert "printed, not JSON-RPC: Usage: myagent --acp" in str(error)
    assert error.stdout_tail == "Usage: myagent --acp"


@pytest.mark.parametrize("facade", FACADE_NAMES)
def test_three_log_lines_then_a_real_agent_work(facade: str) -> None:
    with FACADES[facade](LOGS_THEN_AGENT, initialize_timeout=30) as driver:
        session = driver.new_session()
        _, response = driver.prompt(session, "echo hi")
        assert response.stop_reason == "end_turn"
        connection = driver.client.connection
        assert connection is not None
        assert connection.stray_lines == ("INFO starting", "INFO loading", "INFO ready")


@pytest.mark.parametrize("facade", FACADE_NAMES)
def test_request_timeout_does_not_apply_to_initialize(facade: str) -> None:
    slow = ["sh", "-c", 'sleep 1; exec "$@"', "slow", *SCENARIO]
    with FACADES[facade](slow, request_timeout=0.2, initialize_timeout=None) as driver:
        assert driver.agent_info is not None


@pytest.mark.parametrize("cls", [Client, AsyncClient])
def test_the_initialize_timeout_has_a_bounded_default(cls: type[Any]) -> None:
    default = inspect.signature(cls.__init__).parameters["initialize_timeout"].default
    assert default == 60.0


@pytest.mark.parametrize("facade", FACADE_NAMES)
def test_a_request_in_the_same_write_as_the_initialize_answer_is_served(facade: str) -> None:
    early: list[Any] = []
    driver = FACADES[facade](EAGER, handlers=[AllowOnce()], on_update=early.append)
    with driver:
        session = driver.new_session()
        answer = session.response.meta["answer"]
        assert answer["id"] == "ask"
        assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "yes"}
    assert [n.update.content.text for n in early] == ["early"]


# ------------------------------------------------------------------ in process, no agent process


def _garbage_streams() -> tuple[int, int, threading.Thread]:
    """The client's two pipe ends; the other ends print `yes`-style lines and swallow
    what the client writes, until the client closes."""
    to_client_r, to_client_w = os.pipe()
    from_client_r, from_client_w = os.pipe()

    def peer() -> None:
        with contextlib.suppress(OSError):
            os.write(to_client_w, b"garbage\n" * (STRAY_LIMIT_LINES + 50))
        while os.read(from_client_r, 1 << 16):
            pass
        os.close(to_client_w)
        os.close(from_client_r)

    thread = threading.Thread(target=peer, daemon=True)
    thread.start()
    return to_client_r, from_client_w, thread


def test_not_an_agent_over_plain_streams_on_the_blocking_client() -> None:
    reader_fd, writer_fd, peer = _garbage_streams()
    with (
        open(reader_fd, "rb") as reader,
        open(writer_fd, "wb") as writer,
        pytest.raises(NotAnAgent) as caught,
        Client.connect(reader, writer),
    ):
        pass
    peer.join(10)
    assert caught.value.first_line == "garbage"
    assert caught.value.exit_code is None  # no process: nothing exited


def test_not_an_agent_over_plain_streams_on_the_asyncio_client() -> None:
    async def go() -> NotAnAgent:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        reader.feed_data(b"garbage\n" * (STRAY_LIMIT_LINES + 50))
        reader.feed_eof()  # after the flood: the client gave up before it reads this
        sink = _Sink()
        with pytest.raises(NotAnAgent) as caught:
            async with AsyncClient.connect(reader, sink):
                pass
        assert loop.is_running()
        assert sink.written.startswith(b'{"jsonrpc":"2.0","id":0,"method":"initialize"')
        return caught.value

    error = asyncio.run(go())
    assert error.lines == STRAY_LIMIT_LINES + 1


class _Sink:
    """A writer that keeps what the client wrote."""

    def __init__(self) -> None:
        self.written = b""

    def write(self, data: bytes) -> None:
        self.written += data

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None
