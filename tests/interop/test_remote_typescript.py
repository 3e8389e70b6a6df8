"""Remote interop with the official TypeScript SDK 2.4.0: its experimental WebSocket and
Streamable HTTP clients drive our ASGI server (under a real uvicorn), and our two facades
drive its experimental server (its node adapter, with the `ws` package) over both
transports. The peers are tests/interop/node/client.mjs (`--url`) and agent.mjs
(`ACP_PEER_LISTEN`)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from acp_sdk import AsyncClient
from acp_sdk.handlers import AllowOnce
from acp_sdk.remote import asgi_app
from acp_sdk.tools._scenario_agent import ScenarioAgent
from tests.client.facades import AsyncFacade, SyncFacade
from tests.interop.node_setup import node_binary
from tests.interop.test_typescript import AFTER_ALLOW, NODE_DIR, assert_scripted_turn
from tests.remote.server import running

pytestmark = pytest.mark.timeout(90)

STEP = 30.0


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_the_ts_clients_drive_our_server(scheme: str) -> None:
    node = node_binary()
    with running(asgi_app(ScenarioAgent, token="tok")) as address:
        done = subprocess.run(
            [
                node,
                str(NODE_DIR / "client.mjs"),
                "--prompt",
                "permission",
                "--url",
                f"{scheme}://{address}/acp",
            ],
            input="1\n",
            capture_output=True,
            text=True,
            timeout=STEP,
            env={**os.environ, "ACP_PEER_TOKEN": "tok"},
            check=False,
        )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "ready: protocol 1"
    assert lines[1].startswith("session: ")
    assert "permission: Delete build/" in lines
    assert "text: Permission granted." in lines
    assert lines[-1] == "stop: end_turn"


def test_a_ts_client_without_the_token_is_refused() -> None:
    node = node_binary()
    with running(asgi_app(ScenarioAgent, token="tok")) as address:
        for scheme in ("ws", "http"):
            done = subprocess.run(
                [node, str(NODE_DIR / "client.mjs"), "--url", f"{scheme}://{address}/acp"],
                capture_output=True,
                text=True,
                timeout=STEP,
                check=False,
            )
            assert done.returncode == 1
            assert "401" in done.stderr or "Unexpected server response" in done.stderr


@contextmanager
def ts_server() -> Iterator[int]:
    """agent.mjs on the TS SDK's experimental server; yields its port."""
    node = node_binary()
    env = {**os.environ, "ACP_PEER_LISTEN": "0", "ACP_PEER_DELAY_MS": "10"}
    peer = subprocess.Popen(
        [node, str(NODE_DIR / "agent.mjs")],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert peer.stdout is not None
        line = peer.stdout.readline()
        assert line.startswith("listening: "), line
        yield int(line.split()[1])
    finally:
        assert peer.stdin is not None
        peer.stdin.close()
        try:
            peer.wait(10)
        except subprocess.TimeoutExpired:
            peer.kill()
            peer.wait(5)
        assert peer.stdout is not None
        peer.stdout.close()


@pytest.mark.parametrize("scheme", ["ws", "http"])
@pytest.mark.parametrize("facade", ["sync", "async"])
def test_our_clients_drive_the_ts_server(scheme: str, facade: str) -> None:
    with ts_server() as port:
        url = f"{scheme}://127.0.0.1:{port}/acp"
        options: dict[str, Any] = {"handlers": [AllowOnce()], "timeout": STEP}
        driver: SyncFacade | AsyncFacade
        if facade == "sync":
            driver = SyncFacade()
            driver.client = driver.client.connect_url(url, **options)
        else:
            driver = AsyncFacade()
            driver.client = AsyncClient.connect_url(url, **options)
        with driver:
            assert driver.agent_info is not None
            assert driver.agent_info.name == "acp-sdk-interop-agent"
            updates, response = driver.prompt(driver.new_session(), "Hello, agent!")
            assert response.stop_reason == "end_turn"
            assert_scripted_turn(updates, AFTER_ALLOW)
