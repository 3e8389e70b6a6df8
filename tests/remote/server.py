"""A real uvicorn on 127.0.0.1 (a free port), in a thread of the test process."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from acp_sdk.remote._server import ASGIApp

START_TIMEOUT = 15.0


@contextmanager
def running(app: ASGIApp, **config: Any) -> Iterator[str]:
    """Serve `app`; yields "127.0.0.1:PORT"; stops the server (and its agents) after."""
    # IPPROTO_TCP, as uvicorn binds its own: asyncio turns Nagle off only for sockets of
    # that protocol (with 0, every HTTP answer sent in two writes waited ~40 ms for an ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    options: dict[str, Any] = {
        "log_level": "warning",
        "ws": "websockets-sansio",
        "ws_max_size": 64 * 1024 * 1024,
    }
    options.update(config)
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", **options))
    loop = asyncio.new_event_loop()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.serve(sockets=[sock]))

    thread = threading.Thread(target=serve, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(START_TIMEOUT)
        if not thread.is_alive():
            loop.close()
        sock.close()
