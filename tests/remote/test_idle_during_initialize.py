"""A Streamable HTTP connection is not idle while the server waits for the agent's answer
to its initialize: the client is waiting for that answer. (The idle clock used to run
from the connection's start, so an agent slower to start than `idle_timeout` had its
connection closed under it and the client got 500 "Initialize failed"; under load that
took `python -m acp_sdk agent` about 1 s, against the 1 s idle timeout of a test.)"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import httpx
import orjson
import pytest

from acp_sdk.remote import asgi_app
from tests.remote.server import running

pytestmark = pytest.mark.timeout(60)

IDLE_TIMEOUT = 0.2

# Answers initialize only once the test creates the file named by its argument.
SLOW_TO_START = """
import json, os, sys, time
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""
INIT = orjson.dumps(
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
)


def test_an_agent_slower_to_start_than_the_idle_timeout_is_not_closed_under_its_initialize(
    tmp_path: Path,
) -> None:
    release = tmp_path / "release"
    app = asgi_app(
        command=[sys.executable, "-c", SLOW_TO_START, str(release)], idle_timeout=IDLE_TIMEOUT
    )
    with running(app) as address, httpx.Client(timeout=30) as http:
        url = f"http://{address}/acp"
        answers: list[httpx.Response] = []
        post = threading.Thread(
            target=lambda: answers.append(
                http.post(url, content=INIT, headers={"Content-Type": "application/json"})
            )
        )
        post.start()
        # Many idle timeouts pass while the agent has not answered (the old server
        # answered 500 here already).
        post.join(10 * IDLE_TIMEOUT)
        release.touch()
        post.join(20)
        (answer,) = answers
        assert answer.status_code == 200, answer.text
        assert orjson.loads(answer.content)["result"]["protocolVersion"] == 1
        connection = {"Acp-Connection-Id": answer.headers["acp-connection-id"]}
        assert http.delete(url, headers=connection).status_code == 202
