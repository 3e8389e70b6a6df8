"""Newline-delimited framing (transports.mdx): bytes in, complete lines out.

Rules:
1. A frame is the bytes up to `\\n`; a trailing `\\r` is dropped (CRLF peers).
2. Lines holding only whitespace are skipped.
3. A line longer than `max_frame_size` is reported once as `FRAME_TOO_LARGE` and its bytes
   are discarded as they arrive, up to the next `\\n`: the framer never buffers more than
   `max_frame_size` bytes, whatever the peer sends.
4. At end of input a final line without `\\n` is still a frame.
5. A UTF-8 byte order mark (`EF BB BF`) at the very start of the stream is dropped (some
   Windows tools write one); anywhere else it is data. Until three bytes have arrived the
   framer holds back what might still be a BOM.

The output is the same whether the input comes whole, byte by byte, or in any chunks.
"""

from __future__ import annotations

from typing import Final

BOM: Final = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark, dropped at the start of the stream only."""

DEFAULT_MAX_FRAME_SIZE: Final = 64 * 1024 * 1024
"""64 MiB: room for prompts carrying several megabytes of base64 images."""


class FrameTooLarge:
    """Marker yielded in place of a frame that exceeded the size limit."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "FRAME_TOO_LARGE"


FRAME_TOO_LARGE: Final = FrameTooLarge()


class LineFramer:
    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        if max_frame_size < 1:
            raise ValueError("max_frame_size must be positive")
        self.max_frame_size = max_frame_size
        self._buffer = bytearray()
        self._discarding = False  # inside an oversized line, until its newline
        self._closed = False
        self._head: bytes | None = b""  # the stream's first bytes while they may be a BOM

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes | FrameTooLarge]:
        """Add bytes; return the frames they complete. `b""` means end of input."""
        if self._closed:
            return []
        if not data:
            self._closed = True
            if self._head:  # a stream shorter than a BOM: its bytes are data
                self._buffer += self._head
            self._head = None
            tail = bytes(self._buffer)
            self._buffer.clear()
            if self._discarding:
                return []
            return self._emit([], tail)
        if self._head is not None:
            data = self._head + data
            if len(data) < len(BOM) and BOM.startswith(data):
                self._head = data
                return []
            self._head = None
            if data.startswith(BOM):
                data = data[len(BOM) :]
        out: list[bytes | FrameTooLarge] = []
        start = 0
        if not self._discarding:
            # The common case, many whole lines per chunk: split them in C, and keep
            # the per-line loop below for what is left after the last newline.
            last = data.rfind(b"\n")
            if last < 0:
                return self._rest(out, data, 0)
            first = data.find(b"\n")
            if self._buffer:
                self._buffer += data[:first]
                self._line(out, bytes(self._buffer))
                self._buffer.clear()
            else:
                self._line(out, data[:first])
            if first < last:
                limit = self.max_frame_size
                for line in data[first + 1 : last].split(b"\n"):
                    if line and line[0] == 123 and line[-1] == 125 and len(line) <= limit:
                        out.append(line)  # `{...}`: not blank, no CR, not too long
                    else:
                        self._line(out, line)
            start = last + 1
            if start == len(data):
                return out
        while start < len(data):
            newline = data.find(b"\n", start)
            if self._discarding:
                if newline < 0:
                    return out
                self._discarding = False
                start = newline + 1
                continue
            if newline < 0:
                return self._rest(out, data, start)
            if self._buffer:
                self._buffer += data[start:newline]
                line = bytes(self._buffer)
                self._buffer.clear()
            else:
                line = data[start:newline]
            start = newline + 1
            if len(line) > self.max_frame_size:
                out.append(FRAME_TOO_LARGE)
                continue
            self._emit(out, line)
        return out

    def _line(self, out: list[bytes | FrameTooLarge], line: bytes) -> None:
        """One whole line (its newline removed): a frame, blank, or too large."""
        if len(line) > self.max_frame_size:
            out.append(FRAME_TOO_LARGE)
        else:
            self._emit(out, line)

    def _rest(
        self, out: list[bytes | FrameTooLarge], data: bytes, start: int
    ) -> list[bytes | FrameTooLarge]:
        """Bytes after the last newline: buffered until their line ends (or dropped
        once the line is too long)."""
        self._buffer += data[start:]
        if len(self._buffer) > self.max_frame_size:
            self._buffer.clear()
            self._discarding = True
            out.append(FRAME_TOO_LARGE)
        return out

    @staticmethod
    def _emit(out: list[bytes | FrameTooLarge], line: bytes) -> list[bytes | FrameTooLarge]:
        if line.endswith(b"\r"):
            line = line[:-1]
        if line.strip():
            out.append(line)
        return out


def split_frames(data: bytes) -> list[bytes]:
    """The frames of a batch of our own encoded frames (each ends with `\\n` and holds no
    other newline: compact JSON escapes control characters), newline dropped: what a
    message-framed transport (WebSocket, HTTP) sends one by one."""
    frames = data.split(b"\n")
    frames.pop()  # what follows the last newline: b""
    return frames
