"""The idle timeout (one sweeper task for the whole server) closes connections that are
quiet, and only those: not one whose `initialize` is still waiting for a slow agent."""

from __future__ import annotations

import sys
import time

import httpx
import orjson
import pytest

from acp_sdk.remote import asgi_app
from tests.remote.server import running

pytestmark = pytest.mark.timeout(60)

# An agent that takes longer to start than the idle timeout.
SLOW_START = [
    sys.executable,
    "-c",
    "import time, runpy, sys\ntime.sleep(1.5)\nsys.argv = ['acp_sdk', 'agent']\n"
    "runpy.run_module('acp_sdk', run_name='__main__')",
]
INIT = orjson.dumps(
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
)
JSON = {"Content-Type": "application/json"}


def test_a_slow_agent_start_is_not_taken_for_an_idle_client() -> None:
    with running(asgi_app(command=SLOW_START, idle_timeout=0.5)) as address:
        url = f"http://{address}/acp"
        with httpx.Client(timeout=30) as http:
            answer = http.post(url, content=INIT, headers=JSON)
            assert answer.status_code == 200, answer.text
            assert orjson.loads(answer.content)["result"]["protocolVersion"] == 1
            # then, quiet (no request reaching it, no event stream), it is closed. A
            # session message without Acp-Session-Id is refused (400) before it counts as
            # traffic, and once the connection is gone its id answers 404.
            headers = {**JSON, "Acp-Connection-Id": answer.headers["acp-connection-id"]}
            probe = orjson.dumps(
                {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
            )
            deadline = time.monotonic() + 10
            while (status := http.post(url, content=probe, headers=headers).status_code) == 400:
                assert time.monotonic() < deadline, "the idle connection was never closed"
                time.sleep(0.1)
            assert status == 404
