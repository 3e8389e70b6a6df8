"""`python -m acp_sdk serve`: a real server process exposing the stdio scenario agent."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from acp_sdk import Client
from acp_sdk.protocol._errors import ConnectionClosed
from tests._parallel import child_pids, free_port

pytestmark = pytest.mark.timeout(60)

SERVE = [sys.executable, "-m", "acp_sdk", "serve"]
AGENT = ["--", sys.executable, "-m", "acp_sdk", "agent"]


@contextmanager
def serving(*options: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    server = subprocess.Popen(
        [*SERVE, "--port", str(port), *options, *AGENT],
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.05)
        yield f"127.0.0.1:{port}", server
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(5)
        assert server.stderr is not None
        server.stderr.close()


def test_serve_exposes_a_stdio_agent_with_a_token() -> None:
    with serving("--token", "t0ken") as (address, server):
        for scheme in ("ws", "http"):
            url = f"{scheme}://{address}/acp"
            with pytest.raises(ConnectionClosed, match="401"):
                Client.connect_url(url, timeout=10).open()
            auth = {"Authorization": "Bearer t0ken"}
            with Client.connect_url(url, headers=auth, timeout=10) as client:
                turn = client.new_session(cwd="/tmp").prompt("echo over the network")
                assert list(turn)
                assert turn.response is not None
                assert turn.response.stop_reason == "end_turn"
        server.send_signal(signal.SIGINT)
        assert server.wait(15) == 0


def test_serve_refuses_a_public_bind_without_a_token() -> None:
    result = subprocess.run(
        [*SERVE, "--host", "0.0.0.0", *AGENT], capture_output=True, timeout=30, check=False
    )
    assert result.returncode == 2
    assert b"--token" in result.stderr


@pytest.mark.skipif(not os.path.exists("/proc"), reason="reads /proc")
def test_serve_stops_its_agents_when_it_stops() -> None:
    with serving() as (address, server):
        url = f"http://{address}/acp"
        with httpx.Client(timeout=10) as http:
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
            init["params"] = {"protocolVersion": 1}
            assert http.post(url, json=init).status_code == 200
        children = child_pids(server.pid)
        assert len(children) == 1  # one agent process for the one connection
        server.send_signal(signal.SIGINT)
        assert server.wait(15) == 0
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{children[0]}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{children[0]}")


def run_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.strip()


def test_serve_tunes_the_garbage_collector_before_it_serves() -> None:
    # In a process of its own: the collector's settings are the whole process's.
    seen = run_python(
        "import gc, uvicorn\n"
        "from acp_sdk.remote import _serve\n"
        "seen = []\n"
        "def run(app, **_): seen.append((gc.get_freeze_count() > 0, gc.get_threshold()))\n"
        "uvicorn.run = run\n"
        "_serve.serve(['true'])\n"
        "print(seen, _serve.GC_THRESHOLD)\n"
    )
    assert seen == "[(True, (10000, 10, 10))] 10000"


def test_tuning_the_collector_keeps_a_threshold_someone_chose() -> None:
    seen = run_python(
        "import gc\n"
        "from acp_sdk.remote._serve import tune_gc\n"
        "gc.set_threshold(50000, 5, 5); tune_gc(); print(gc.get_threshold())\n"
        "gc.set_threshold(0); tune_gc(); print(gc.get_threshold())\n"
    )
    assert seen.splitlines() == ["(50000, 5, 5)", "(0, 5, 5)"]
