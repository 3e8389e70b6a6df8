"""A read pipe that feeds the engine from asyncio's `data_received`.

With a `StreamReader` every read costs a hop: the transport's callback stores the bytes
and wakes the reader task, which runs on the next loop iteration and feeds the engine.
A round trip pays that hop on each side. `PipeFeed` is the transport's protocol itself:
the bytes go to the engine in the callback that received them, and the handlers they
start can run there too (`AsyncDriver`, eager tasks on Python 3.12+).

The read loop's rules stay: bytes are fed in pieces of at most `READ_CHUNK`, and the
engine's rules (`Engine.reader_may_read`) are checked after each, as the read loop
checks them before each read. When they say stop, the rest is held here and the
transport stops reading (the OS pipe then pushes back on the peer) until `resume()`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from acp_sdk._driver.flows import READ_CHUNK


class PipeFeed(asyncio.Protocol):
    """The protocol of a read pipe whose bytes go straight to a consumer.

    Until a consumer attaches (`attach`), what arrives is held, and reading pauses once
    more than `READ_CHUNK` bytes are held. `ended` resolves once the input ended and
    everything received was fed.
    """

    def __init__(self) -> None:
        self.transport: asyncio.ReadTransport | None = None
        self._held = b""  # received, not fed yet (only while paused or not attached)
        self._feed: Callable[[bytes], bool] | None = None
        self._on_pause: Callable[[], Any] | None = None
        self._paused = False
        self._eof = False
        self._ended: asyncio.Future[None] | None = None

    def attach(self, feed: Callable[[bytes], bool], on_pause: Callable[[], Any]) -> None:
        """Start feeding: `feed(piece)` consumes bytes and says whether to read on;
        when it says no, reading pauses and `on_pause()` is called (its owner calls
        `resume()` once the consumer may read again)."""
        self._feed = feed
        self._on_pause = on_pause
        self.resume()

    @property
    def ended(self) -> asyncio.Future[None]:
        """Resolves once the input ended and every byte received was fed."""
        if self._ended is None:
            self._ended = asyncio.get_running_loop().create_future()
            self._check_ended()
        return self._ended

    # ------------------------------------------------------------------ asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment] # a read pipe's transport

    def data_received(self, data: bytes) -> None:
        if self._held or self._paused or self._feed is None:
            self._held += data
            if self._feed is None and len(self._held) > READ_CHUNK:
                self._pause()
            return
        self._pump(data)

    def eof_received(self) -> bool:
        self._eof = True
        self._check_ended()
        return False  # the transport closes itself

    def connection_lost(self, exc: BaseException | None) -> None:
        self._eof = True  # an error ends the input as end of file does (the read loop's rule)
        self._check_ended()

    # ------------------------------------------------------------------ feeding

    def resume(self) -> None:
        """Feed what is held; read on unless the consumer says stop again."""
        if self._feed is None:
            return
        held, self._held = self._held, b""
        if held and not self._pump(held):
            return
        if self._paused:
            self._paused = False
            transport = self.transport
            if transport is not None and not transport.is_closing():
                transport.resume_reading()
        self._check_ended()

    def _pump(self, data: bytes) -> bool:
        """Feed `data` piece by piece; False (the rest held, reading paused) when the
        consumer said stop."""
        feed = self._feed
        assert feed is not None
        if len(data) <= READ_CHUNK:
            if feed(data):
                return True
            self._pause()
            return False
        start = 0
        while start < len(data):
            piece = data[start : start + READ_CHUNK]
            start += len(piece)
            if not feed(piece):
                self._held = data[start:]
                self._pause()
                return False
        return True

    def _pause(self) -> None:
        if not self._paused:
            self._paused = True
            transport = self.transport
            if transport is not None and not transport.is_closing():
                transport.pause_reading()
        if self._on_pause is not None:
            self._on_pause()

    def _check_ended(self) -> None:
        ended = self._ended
        if ended is not None and self._eof and not self._held and not ended.done():
            ended.set_result(None)
