"""`python -m acp_sdk serve`: any stdio agent, served remotely (one process per connection)."""

from __future__ import annotations

import errno
import gc
import ipaddress
import logging
import sys
from collections.abc import Sequence
from typing import Any, Final

from acp_sdk._driver.process import argv_of, start_problem
from acp_sdk.protocol._framing import DEFAULT_MAX_FRAME_SIZE
from acp_sdk.remote._deps import require
from acp_sdk.remote._server import asgi_app

log = logging.getLogger("acp_sdk.remote")

GRACEFUL_SHUTDOWN = 3.0
"""Seconds open event streams get at shutdown before they are cut."""
PING_INTERVAL = 20.0
"""WebSocket pings find clients that vanished without closing (their agents stop)."""
GC_THRESHOLD: Final = 10_000
"""Net container allocations between two collections of the youngest generation, in a
server process (`tune_gc`); the interpreter's default is 700."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


FDS_PER_CONNECTION = 8
"""Open files a `serve` connection may hold: its sockets (three for a Streamable HTTP
connection with a session stream) and its agent's three pipes, with room to spare."""
FDS_SPARE = 64
"""Open files the server needs besides its connections (listening socket, logs, imports)."""


def raise_fd_limit(max_connections: int, per_connection: int = FDS_PER_CONNECTION) -> int:
    """Raise the soft RLIMIT_NOFILE so that `max_connections` fit (never above the hard
    limit, never lowering it); the soft limit in force. Past it the server could not
    accept (clients would hang instead of getting 503), so a limit still too low is
    logged as a warning naming `ulimit -n`."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return -1
    needed = max_connections * per_connection + FDS_SPARE
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
        if soft < needed:
            log.warning(
                "the open-file limit (%d) is below what %d connections may need (%d): "
                "raise it (ulimit -n) or lower --max-connections",
                soft,
                max_connections,
                needed,
            )
    return soft


class UnsafeBind(ValueError):
    """A non-loopback bind without a token (and without --insecure)."""


def check_bind(host: str, token: str | None, insecure: bool) -> None:
    """An agent runs commands: an open port without a token is remote code execution."""
    if token is None and not insecure and not is_loopback(host):
        raise UnsafeBind(
            f"refusing to listen on {host} without --token: anyone who reaches the port "
            "could run the agent, which runs commands (pass --insecure to do it anyway)"
        )


class CannotStartAgent(ValueError):
    """The agent command cannot be started (not found, not executable)."""


class CannotListen(OSError):
    """The server cannot listen on the address (a port in use, an unknown host...)."""


class BadPort(ValueError):
    """A port number outside 0-65535."""


def check_port(port: int) -> None:
    if not 0 <= port <= 65535:
        raise BadPort(f"--port {port}: not a port number (0-65535)")


def check_command(command: Sequence[str]) -> None:
    """Refuse, before listening, a command no connection could start (each would fail)."""
    problem = start_problem(argv_of(command))
    if problem is not None:
        raise CannotStartAgent(f"cannot start the agent: {problem}")


def check_listen(host: str, port: int) -> None:
    """Bind the address as the server will (asyncio's `create_server`, every address the
    host resolves to), then let it go: a port in use is then one line, not uvicorn's
    exit code 3 after its log. (Another program may still take the port in between;
    `serve` reports that too.)"""
    import asyncio

    async def bind() -> None:
        server = await asyncio.get_running_loop().create_server(asyncio.Protocol, host, port)
        server.close()
        await server.wait_closed()

    try:
        asyncio.run(bind())
    except OSError as error:
        raise CannotListen(f"cannot listen on {_address(host, port)}: {_why(error)}") from None


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _why(error: OSError) -> str:
    import socket

    if isinstance(error, socket.gaierror):
        return f"unknown host ({error.strerror or error})"
    reasons = {
        errno.EADDRINUSE: "the port is in use",
        errno.EACCES: "permission denied (a port below 1024 needs privileges)",
        errno.EADDRNOTAVAIL: "the address is not one of this machine's",
    }
    return reasons.get(error.errno or 0, str(error.strerror or error))


def serve(
    command: Sequence[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    insecure: bool = False,
    allowed_origins: Sequence[str] = (),
    max_connections: int = 16,
    idle_timeout: float = 300.0,
    max_message_size: int = DEFAULT_MAX_FRAME_SIZE,
) -> None:
    """Serve the stdio agent `command` on ws://HOST:PORT/acp and http://HOST:PORT/acp
    under uvicorn until interrupted (then every agent process is stopped).

    Before listening it raises a `ValueError` (`UnsafeBind`: a non-loopback host without
    a token; `BadPort`: a port outside 0-65535; `CannotStartAgent`: the command is not
    found or not executable) or an `OSError` (`CannotListen`: the port is in use, the
    host unknown...), each with a one-line message."""
    if host.startswith("[") and host.endswith("]"):  # [::1], as in a URL
        host = host[1:-1]
    check_bind(host, token, insecure)
    check_port(port)
    check_command(command)
    uvicorn = require("uvicorn", "server")
    require("websockets", "server")
    check_listen(host, port)
    raise_fd_limit(max_connections)
    app = asgi_app(
        command=command,
        token=token,
        allowed_origins=allowed_origins,
        max_connections=max_connections,
        idle_timeout=idle_timeout,
        max_message_size=max_message_size,
    )
    shown = f"[{host}]" if ":" in host else host
    print(
        f"serving {' '.join(command)} on ws://{shown}:{port}/acp and http://{shown}:{port}/acp"
        + (" (bearer token required)" if token else ""),
        file=sys.stderr,
        flush=True,
    )
    tune_gc()
    try:
        uvicorn.run(app, host=host, port=port, **uvicorn_options(max_message_size))
    except SystemExit as stopped:
        # uvicorn exits 3 when it cannot start (it logged why): the address was taken
        # after check_listen, say.
        if stopped.code in (0, None):
            return
        raise CannotListen(
            f"cannot listen on {_address(host, port)}: the server did not start (see above)"
        ) from None


def tune_gc() -> None:
    """Tune the cyclic garbage collector for a server process (`serve` calls this as it
    starts; bench/remote_load.py measures it): what exists by then (modules, classes, the
    app) leaves the collector's reach (`gc.freeze()`), and the youngest generation is
    collected every `GC_THRESHOLD` net allocations instead of 700. With the defaults, a
    server holding 1,000 WebSocket connections through a turn each spent about a quarter
    of its CPU in the collector, and each full collection paused the loop for 150-170 ms;
    with this, no full collection ran and the CPU per update fell by about a sixth."""
    gc.freeze()
    first, second, third = gc.get_threshold()
    if 0 < first < GC_THRESHOLD:  # 0: the collector is off; a larger one: someone chose it
        gc.set_threshold(GC_THRESHOLD, second, third)


def uvicorn_options(max_message_size: int = DEFAULT_MAX_FRAME_SIZE) -> dict[str, Any]:
    """The uvicorn settings `serve` runs with (bench/remote_load.py measures these)."""
    return {
        "lifespan": "on",
        "ws": "websockets-sansio",
        "ws_max_size": max_message_size,
        # ACP messages are small JSON: compressing them costs more CPU than it saves on
        # loopback or a LAN, and about 35 KB of zlib state per connection (measured by
        # bench/remote_load.py, which doubled the memory of an idle connection); the
        # TypeScript server declines it too.
        "ws_per_message_deflate": False,
        "ws_ping_interval": PING_INTERVAL,
        "ws_ping_timeout": PING_INTERVAL,
        "timeout_graceful_shutdown": GRACEFUL_SHUTDOWN,
        "log_level": "warning",
    }
