"""The line framer: identical frames however the bytes are chunked."""

from __future__ import annotations

import random

import pytest

from acp_sdk.protocol._framing import FRAME_TOO_LARGE, LineFramer

STREAM = b'{"a":1}\n\n  \r\n{"b":"x\\ny"}\r\n{"c":[1,2,3]}\n' + b"z" * 50 + b'\n{"d":4}'
EXPECTED = [b'{"a":1}', b'{"b":"x\\ny"}', b'{"c":[1,2,3]}', FRAME_TOO_LARGE, b'{"d":4}']


def feed_in(chunks: list[bytes]) -> list[object]:
    framer = LineFramer(max_frame_size=20)
    out: list[object] = []
    for chunk in chunks:
        out += framer.feed(chunk)
    out += framer.feed(b"")
    return out


def whole(stream: bytes = STREAM) -> list[bytes]:
    return [stream]


def byte_by_byte(stream: bytes = STREAM) -> list[bytes]:
    return [stream[i : i + 1] for i in range(len(stream))]


def random_chunks(seed: int, stream: bytes = STREAM) -> list[bytes]:
    rng = random.Random(seed)
    chunks, i = [], 0
    while i < len(stream):
        size = rng.randint(1, 17)
        chunks.append(stream[i : i + size])
        i += size
    return chunks


def chunkings(stream: bytes) -> list[list[bytes]]:
    return [whole(stream), byte_by_byte(stream), *[random_chunks(s, stream) for s in range(20)]]


CHUNKING_IDS = ["whole", "bytewise", *[f"random{seed}" for seed in range(20)]]


@pytest.mark.parametrize("chunks", chunkings(STREAM), ids=CHUNKING_IDS)
def test_frames_do_not_depend_on_chunking(chunks: list[bytes]) -> None:
    assert feed_in(chunks) == EXPECTED


def test_oversized_line_is_never_buffered() -> None:
    framer = LineFramer(max_frame_size=100)
    assert framer.feed(b"x" * 150) == [FRAME_TOO_LARGE]
    for _ in range(1000):
        assert framer.feed(b"y" * 1000) == []
        assert framer.buffered == 0
    assert framer.feed(b'tail\n{"ok":1}\n') == [b'{"ok":1}']


def test_nothing_after_end_of_input() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"a":1}') == []
    assert framer.feed(b"") == [b'{"a":1}']
    assert framer.feed(b'{"b":1}\n') == []


# ------------------------------------------------------------------ byte order mark

BOM = b"\xef\xbb\xbf"

BOM_CASES = [
    # (name, stream, frames) -- each stream is also fed whole, byte by byte and in chunks
    ("bom then stream", BOM + STREAM, EXPECTED),
    ("bom then frame without newline", BOM + b'{"a":1}', [b'{"a":1}']),
    ("only a bom", BOM, []),
    ("bom then blank lines", BOM + b"\n\r\n", []),
    (
        "bom on a later line is data",
        b'{"a":1}\n' + BOM + b'{"b":2}\n',
        [b'{"a":1}', BOM + b'{"b":2}'],
    ),
    ("second bom is data", BOM + BOM + b"{}\n", [BOM + b"{}"]),
    ("half a bom is data", b"\xef\xbb{}\n", [b"\xef\xbb{}"]),
    ("a bom prefix alone is data", b"\xef", [b"\xef"]),
    ("two bom bytes alone are data", b"\xef\xbb", [b"\xef\xbb"]),
]


@pytest.mark.parametrize(
    ("stream", "expected", "chunks"),
    [(case[1], case[2], chunks) for case in BOM_CASES for chunks in chunkings(case[1])],
    ids=[f"{case[0]}-{how}" for case in BOM_CASES for how in CHUNKING_IDS],
)
def test_bom_at_stream_start_is_dropped_however_chunked(
    stream: bytes, expected: list[object], chunks: list[bytes]
) -> None:
    assert b"".join(chunks) == stream
    assert feed_in(chunks) == expected


def test_bom_split_across_the_first_feeds() -> None:
    framer = LineFramer()
    assert framer.feed(b"\xef") == []
    assert framer.feed(b"\xbb") == []
    assert framer.feed(b'\xbf{"a":1}\n') == [b'{"a":1}']
    assert framer.feed(BOM + b'{"b":1}\n') == [BOM + b'{"b":1}']
