"""Closing a Streamable HTTP connection does not wait for the agent to stop: the server
answers DELETE at once and stops the agent in the background (it used to answer only
after the agent stopped, so `close()` took 2.5-3.6 s). Checked without a clock: the
agent below takes as long as the test wants to stop, and the answer comes first."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import httpx
import orjson
import pytest

from acp_sdk import AsyncClient, Client
from acp_sdk.remote import asgi_app
from acp_sdk.remote._backends import ProcessBackend
from acp_sdk.remote._server import _Server
from tests.remote.server import running

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not Path("/proc").exists(), reason="reads /proc"),
]

# Answers initialize; at end of input (and through SIGTERM) it stays until released.
SLOW_TO_STOP = """
import json, os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
"""
INIT = orjson.dumps(
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
)


def _running(pid: int) -> bool:
    """Alive, not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def _gone(pid: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.05)
    return False


def _only_agent_pid(app: object) -> int:
    assert isinstance(app, _Server)
    (connection,) = app.connections.values()
    assert isinstance(connection.backend, ProcessBackend)
    assert connection.backend.process is not None
    return connection.backend.process.pid


def test_delete_is_answered_before_the_agent_has_stopped(tmp_path: Path) -> None:
    release = tmp_path / "release"
    app = asgi_app(command=[sys.executable, "-c", SLOW_TO_STOP, str(release)])
    with running(app) as address, httpx.Client(timeout=30) as http:
        url = f"http://{address}/acp"
        answer = http.post(url, content=INIT, headers={"Content-Type": "application/json"})
        assert answer.status_code == 200
        connection = {"Acp-Connection-Id": answer.headers["acp-connection-id"]}
        pid = _only_agent_pid(app)
        assert http.delete(url, headers=connection).status_code == 202
        assert _running(pid)  # answered while the agent is still stopping
        assert http.delete(url, headers=connection).status_code == 404  # already forgotten
        release.touch()
        assert _gone(pid)


@pytest.mark.parametrize("facade", ["sync", "async"])
def test_closing_an_http_client_does_not_wait_for_the_agent(facade: str, tmp_path: Path) -> None:
    release = tmp_path / "release"
    app = asgi_app(command=[sys.executable, "-c", SLOW_TO_STOP, str(release)])
    with running(app) as address:
        url = f"http://{address}/acp"
        if facade == "sync":
            client = Client.connect_url(url, timeout=30)
            client.open()
            pid = _only_agent_pid(app)
            client.close()
        else:

            async def go() -> int:
                client = AsyncClient.connect_url(url, timeout=30)
                await client.open()
                pid = _only_agent_pid(app)
                await client.aclose()
                return pid

            pid = asyncio.run(go())
        assert _running(pid)  # close() returned; the agent is still being stopped
        release.touch()
        assert _gone(pid)
