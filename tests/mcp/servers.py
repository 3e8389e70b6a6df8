"""Real MCP servers for the tests, written with the `mcp` package (its `MCPServer`, the
FastMCP of mcp 1.x).

`python servers.py NAME` serves server NAME over stdio (`hang` never answers, `exit`
exits at once); `running_http(NAME)` serves it over Streamable HTTP (or SSE) with
uvicorn on 127.0.0.1 (a free port), in a thread of the test process. Each server has
`whoami` (its name) and `pid` (its process id), so the tests can tell which server
answered and check that its process is gone.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from mcp.server.mcpserver import MCPServer

HERE = Path(__file__).resolve()
START_TIMEOUT = 15.0


def build(name: str) -> MCPServer:
    """Server `name`: `calc` adds and sleeps, `greeter` greets; both say who they are.
    `empty` offers nothing."""
    server: MCPServer = MCPServer(name, log_level="WARNING")
    if name == "empty":  # offers nothing at all
        return server

    @server.tool()
    def whoami() -> str:
        """The server's name."""
        return name

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    if name == "calc":

        @server.tool()
        def add(a: int, b: int) -> int:
            """a + b."""
            return a + b

        @server.tool()
        async def sleep(seconds: float) -> str:
            """Wait, then say so."""
            await asyncio.sleep(seconds)
            return "slept"

    else:

        @server.tool()
        def greet(who: str) -> str:
            """A greeting."""
            return f"hello, {who}"

    return server


RUN: Final = f"--test-run={os.getpid()}"
"""Marks the servers this test process starts (ignored by the server), so a test run
beside this one on the same machine is not taken for a leak of ours."""


def stdio_argv(name: str) -> list[str]:
    """The command line of server `name` over stdio."""
    return [sys.executable, str(HERE), name, RUN]


def children_running_servers() -> list[int]:
    """Pids of live processes running this file for this test run (any parent, so an
    orphaned grandchild counts too): none should outlive a test."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(HERE).encode() in cmdline and RUN.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@contextmanager
def running_http(name: str, *, sse: bool = False) -> Iterator[str]:
    """Serve server `name` over Streamable HTTP (or SSE); yields its URL; stops it after."""
    import uvicorn

    app = build(name).sse_app() if sse else build(name).streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning"))
    loop = asyncio.new_event_loop()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.serve(sockets=[sock]))

    thread = threading.Thread(target=serve, name=f"mcp-{name}", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/{'sse' if sse else 'mcp'}"
    finally:
        server.should_exit = True
        thread.join(START_TIMEOUT)
        if not thread.is_alive():
            loop.close()
        sock.close()


if __name__ == "__main__":
    if sys.argv[1] == "hang":  # started, but never answers `initialize`
        time.sleep(120)
    elif sys.argv[1] == "exit":
        sys.exit(3)
    else:
        build(sys.argv[1]).run("stdio")
