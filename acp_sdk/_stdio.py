"""Standard streams and file descriptors as asyncio byte streams (agent side)."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any


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
    """Reads a descriptor asyncio cannot watch (a regular file) in a worker thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def read(self, n: int = -1) -> bytes:
        return await asyncio.get_running_loop().run_in_executor(
            None, os.read, self._fd, n if n > 0 else 1 << 16
        )


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


async def open_fd_streams(in_fd: int, out_fd: int) -> tuple[Any, Any]:
    """(reader, writer) over two descriptors, with asyncio pipes where the OS allows."""
    loop = asyncio.get_running_loop()
    reader: Any
    writer: Any
    try:
        stream_reader = asyncio.StreamReader(limit=1 << 30)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream_reader),
            os.fdopen(in_fd, "rb", buffering=0, closefd=False),
        )
        reader = stream_reader
    except (ValueError, OSError):
        reader = _ThreadedReader(in_fd)
    try:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(out_fd, "wb", buffering=0, closefd=False)
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    except (ValueError, OSError):
        writer = _BlockingWriter(out_fd)
    return reader, writer
