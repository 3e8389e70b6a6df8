"""`python -m acp_sdk serve`: a real server process exposing the stdio scenario agent."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from acp_sdk import Client
from acp_sdk.protocol._errors import ConnectionClosed
from acp_sdk.remote._server import CANNOT_START
from tests._parallel import child_pids, free_port

pytestmark = pytest.mark.timeout(60)

SERVE = [sys.executable, "-m", "acp_sdk", "serve"]
AGENT = ["--", sys.executable, "-m", "acp_sdk", "agent"]


@contextmanager
def serving(
    *options: str, agent: Sequence[str] = AGENT
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    server = subprocess.Popen(
        [*SERVE, "--port", str(port), *options, *agent],
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
        "_serve.serve(['true'], port=0)\n"  # it checks that it can listen: any free port
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


# ---------------------------------------------------------------- what cannot be served


def serve_fails(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SERVE, *args], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
    )


def test_serve_refuses_an_agent_command_that_cannot_start(tmp_path: Path) -> None:
    # It listened, then every connection failed with a traceback and HTTP 500.
    not_executable = tmp_path / "agent.sh"
    not_executable.write_text("#!/bin/sh\n")
    for agent, why in [
        ("no-such-agent-for-acp", "no-such-agent-for-acp not found"),
        (str(tmp_path / "missing"), f"{tmp_path / 'missing'} not found"),
        (str(not_executable), f"{not_executable} is not executable"),
        (str(tmp_path), f"{tmp_path} is a directory"),
    ]:
        result = serve_fails("--port", str(free_port()), "--", agent)
        assert (result.returncode, result.stderr) == (1, f"error: cannot start the agent: {why}\n")
        assert result.stdout == ""


def test_serve_refuses_a_port_out_of_range() -> None:
    # Two tracebacks (OverflowError from bind) before.
    for port in ("99999", "-1"):
        result = serve_fails("--port", port, *AGENT)
        assert (result.returncode, result.stderr) == (
            2,
            f"error: --port {port}: not a port number (0-65535)\n",
        )


def test_serve_says_when_the_port_is_in_use() -> None:
    # It exited 3 ("protocol error" in the CLI's table) after uvicorn's log line.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve_fails("--port", str(port), *AGENT)
    assert (result.returncode, result.stderr) == (
        1,
        f"error: cannot listen on 127.0.0.1:{port}: the port is in use\n",
    )


def stderr_lines(server: subprocess.Popen[bytes]) -> list[str]:
    assert server.stderr is not None
    server.send_signal(signal.SIGINT)
    assert server.wait(15) == 0
    return server.stderr.read().decode().splitlines()


def post_initialize(address: str) -> httpx.Response:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    return httpx.post(f"http://{address}/acp", json=init, timeout=20)


def test_an_agent_that_cannot_start_for_a_connection_gets_502_and_one_log_line(
    tmp_path: Path,
) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    agent = tmp_path / "agent"
    agent.write_text(f"#!{sys.executable}\n")
    agent.chmod(0o755)
    with serving(agent=["--", str(agent)]) as (address, server):
        agent.unlink()  # checked when serve started; gone by the first connection
        refused = post_initialize(address)
        assert (refused.status_code, refused.text) == (502, CANNOT_START)
        with pytest.raises(InvalidStatus) as upgrade:
            connect(f"ws://{address}/acp", open_timeout=10)
        assert upgrade.value.response.status_code == 502
        assert upgrade.value.response.body == CANNOT_START.encode()
        with pytest.raises(ConnectionClosed, match="502"):
            Client.connect_url(f"ws://{address}/acp", timeout=10).open()
        lines = stderr_lines(server)
    assert "Traceback" not in "\n".join(lines)
    failed = f"cannot start the agent: {agent} not found"
    assert [line for line in lines if "connection" in line] == [
        f"[acp_sdk.remote] connection refused (HTTP): {failed}",
        f"[acp_sdk.remote] connection refused (WebSocket): {failed}",
        f"[acp_sdk.remote] connection refused (WebSocket): {failed}",
    ]


def test_an_agent_that_exits_at_once_gets_502_or_close_1014_saying_how_it_ended() -> None:
    from websockets.exceptions import ConnectionClosedError
    from websockets.sync.client import connect

    exits = ["--", sys.executable, "-c", "import sys; print('bye', file=sys.stderr); sys.exit(3)"]
    with serving(agent=exits) as (address, server):
        refused = post_initialize(address)
        assert (refused.status_code, refused.text) == (
            502,
            "Bad Gateway: initialize got no answer: the agent exited with code 3",
        )
        with (
            connect(f"ws://{address}/acp", open_timeout=10) as websocket,
            pytest.raises(ConnectionClosedError) as closed,
        ):
            websocket.recv(timeout=20)
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (
            1014,
            "the agent exited with code 3",
        )
        lines = stderr_lines(server)
    assert "Traceback" not in "\n".join(lines)
    ended = [line for line in lines if line.endswith("closed: the agent exited with code 3")]
    assert len(ended) == 2, lines
