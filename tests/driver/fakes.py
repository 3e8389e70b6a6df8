"""In-process fakes for the asyncio driver: a writer whose transport counts writes, and
an agent served over it (no subprocess, no clock), for tests that count system calls."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson


class CountingTransport:
    """What `AsyncDriver` asks of a write transport: buffer size, closing, writes.

    `buffered` simulates bytes the OS did not take (a peer that stopped reading):
    `pause()` makes every later write stay buffered until `resume()`."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.buffered = 0
        self.paused = False
        self.closing = False

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def is_closing(self) -> bool:
        return self.closing

    def write(self, data: bytes) -> None:
        if self.paused:
            self.buffered += len(data)
        self.writes.append(bytes(data))

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self.buffered = 0

    def frames(self) -> list[dict[str, Any]]:
        data = b"".join(self.writes)
        return [orjson.loads(line) for line in data.split(b"\n") if line]


class CountingWriter:
    """An asyncio StreamWriter stand-in over a `CountingTransport`; `drain` yields once
    and then waits while the transport is paused (the back-pressure of a full pipe)."""

    def __init__(self) -> None:
        self.transport = CountingTransport()
        self.closed = False

    def write(self, data: bytes) -> None:
        self.transport.write(data)

    async def drain(self) -> None:
        await asyncio.sleep(0)
        while self.transport.paused and not self.closed:
            await asyncio.sleep(0.001)

    def close(self) -> None:
        self.closed = True
        self.transport.closing = True


def line(message: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}, option=orjson.OPT_APPEND_NEWLINE)


INITIALIZE = line({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
NEW_SESSION = line({"id": 1, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}})


def prompt(request_id: int, text: str, session_id: str = "s1") -> bytes:
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    return line({"id": request_id, "method": "session/prompt", "params": params})
