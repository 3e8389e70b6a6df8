"""HTTP/2 (the RFD's requirement for Streamable HTTP): our server under hypercorn with TLS
(ALPN h2, a throwaway CA from trustme), our clients over https:// and wss://."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from acp_sdk.remote import asgi_app
from acp_sdk.remote._server import ASGIApp, Receive, Scope, Send
from acp_sdk.tools._scenario_agent import ScenarioAgent
from tests.client.facades import AsyncFacade, SyncFacade

hypercorn_asyncio = pytest.importorskip("hypercorn.asyncio")
hypercorn_config = pytest.importorskip("hypercorn.config")
trustme = pytest.importorskip("trustme")

pytestmark = pytest.mark.timeout(60)


@contextmanager
def hypercorn_tls(app: ASGIApp, tmp: Path) -> Iterator[tuple[str, str]]:
    """Serve `app` with TLS on 127.0.0.1; yields (address, CA bundle path)."""
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert_path, key_path, ca_path = tmp / "cert.pem", tmp / "key.pem", tmp / "ca.pem"
    cert.cert_chain_pems[0].write_to_path(str(cert_path))
    cert.private_key_pem.write_to_path(str(key_path))
    ca.cert_pem.write_to_path(str(ca_path))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    config = hypercorn_config.Config()
    config.bind = [f"fd://{sock.fileno()}"]
    config.certfile, config.keyfile = str(cert_path), str(key_path)
    config.websocket_max_message_size = 64 * 1024 * 1024
    config.loglevel = "WARNING"
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    started = threading.Event()

    async def main() -> None:
        started.set()
        await hypercorn_asyncio.serve(app, config, shutdown_trigger=stop.wait)

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    started.wait(10)
    time.sleep(0.3)
    try:
        yield f"127.0.0.1:{sock.getsockname()[1]}", str(ca_path)
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(15)
        if not thread.is_alive():
            loop.close()
        sock.detach()  # hypercorn owned the descriptor and closed it


class Versions:
    """An ASGI wrapper noting each HTTP request's version."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.seen.add(scope["http_version"])
        await self.app(scope, receive, send)


@pytest.mark.parametrize("scheme", ["https", "wss"])
@pytest.mark.parametrize("facade", ["sync", "async"])
def test_over_tls_and_http2(
    scheme: str, facade: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = Versions(asgi_app(ScenarioAgent))
    with hypercorn_tls(app, tmp_path) as (address, ca):
        # httpx and the ssl module both trust SSL_CERT_FILE
        monkeypatch.setenv("SSL_CERT_FILE", ca)
        assert ssl.get_default_verify_paths().cafile == ca
        driver: Any = SyncFacade() if facade == "sync" else AsyncFacade()
        driver.client = type(driver.client).connect_url(f"{scheme}://{address}/acp", timeout=10)
        with driver:
            updates, response = driver.prompt(driver.new_session(), "stream 500")
            assert (len(updates), response.stop_reason) == (500, "end_turn")
    if scheme == "https":
        assert app.seen == {"2"}
