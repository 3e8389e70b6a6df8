"""An in-memory byte pipe with the halves asyncio streams have (`read`, `write`, `drain`,
`close`), for driving an endpoint without processes, and reading back what it wrote one
JSON-RPC message at a time."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

STEP = 15.0
"""Seconds `line()` waits for the next chunk before the test counts as hung."""


class MemoryPipe:
    def __init__(self) -> None:
        self._data = asyncio.Queue[bytes]()
        self._buffer = b""

    async def read(self, n: int = -1) -> bytes:
        return await self._data.get()

    def write(self, data: bytes) -> None:
        self._data.put_nowait(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self._data.put_nowait(b"")

    def rest(self) -> list[dict[str, Any]]:
        """Every whole message written so far and not read yet."""
        while not self._data.empty():
            self._buffer += self._data.get_nowait()
        return [orjson.loads(line) for line in self._buffer.splitlines()]

    async def line(self) -> dict[str, Any]:
        """The next message written (fails the test if the writer closed first or nothing
        comes for `STEP` seconds)."""
        while b"\n" not in self._buffer:
            chunk = await asyncio.wait_for(self._data.get(), STEP)
            assert chunk, "the pipe's writer closed it"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = orjson.loads(line)
        return message
