"""Standard streams and file descriptors as asyncio byte streams (agent side)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import stat
import sys
import threading
from typing import Any

from acp_sdk._driver.feed import PipeFeed


def reserve_stdout_for_protocol() -> int:
    """Keep a private copy of fd 1 for protocol frames and send everything else to stderr.

    After this, `print()`, `sys.stdout.write` and child processes writing to fd 1 all land
    on stderr, so nothing but frames ever reaches the client.
    """
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


def fd_is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


class _ThreadedReader:
    """Reads a descriptor asyncio cannot watch (a regular file, /dev/null) in a daemon
    thread of its own: a read that never returns must not keep the process alive at
    exit (the loop's default executor would be joined)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._wanted = threading.Semaphore(0)
        self._result: asyncio.Future[bytes] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._size = 1 << 16
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        while True:
            self._wanted.acquire()
            try:
                data = os.read(self._fd, self._size)
            except OSError:
                data = b""
            loop, result = self._loop, self._result
            if loop is None or result is None:
                return
            with contextlib.suppress(RuntimeError):  # the loop is closed: we are exiting
                loop.call_soon_threadsafe(_settle, result, data)
            if not data:
                return

    async def read(self, n: int = -1) -> bytes:
        self._loop = asyncio.get_running_loop()
        self._result = self._loop.create_future()
        self._size = n if n > 0 else 1 << 16
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="acp-stdin", daemon=True)
            self._thread.start()
        self._wanted.release()
        return await self._result


def _settle(future: asyncio.Future[bytes], data: bytes) -> None:
    if not future.done():
        future.set_result(data)


class _BlockingWriter:
    """Writes a descriptor asyncio cannot watch, directly (regular files do not block)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None


def _pollable(fd: int) -> bool:
    """Whether the event loop can watch `fd`: pipes, sockets and ttys can; regular files
    and some character devices (`/dev/null`) cannot, and asyncio would only find out
    later, in a callback, leaving the reader waiting forever."""
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
    except (OSError, ValueError):
        return False
    return (
        stat.S_ISFIFO(os.fstat(fd).st_mode)
        or stat.S_ISSOCK(os.fstat(fd).st_mode)
        or (os.isatty(fd))
    )


async def open_fd_streams(in_fd: int, out_fd: int) -> tuple[Any, Any, list[Any]]:
    """(reader, writer, transports to close) over two descriptors, with asyncio pipes
    where the loop can watch them and a thread or plain writes where it cannot."""
    loop = asyncio.get_running_loop()
    reader: Any = _ThreadedReader(in_fd)
    writer: Any = _BlockingWriter(out_fd)
    transports: list[Any] = []
    if _pollable(in_fd):
        # The transport's callback feeds the driver's engine (no StreamReader, no
        # reader task: see acp_sdk/_driver/feed.py).
        feed = PipeFeed()
        transport, _ = await loop.connect_read_pipe(
            lambda: feed, os.fdopen(in_fd, "rb", buffering=0, closefd=False)
        )
        transports.append(transport)
        reader = feed
    if _pollable(out_fd):
        out_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(out_fd, "wb", buffering=0, closefd=False)
        )
        transports.append(out_transport)
        writer = asyncio.StreamWriter(out_transport, protocol, None, loop)
    return reader, writer, transports
