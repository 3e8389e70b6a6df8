"""The line framer: identical frames however the bytes are chunked."""

from __future__ import annotations

import random

import pytest

from acp_sdk._framing import FRAME_TOO_LARGE, LineFramer

STREAM = b'{"a":1}\n\n  \r\n{"b":"x\\ny"}\r\n{"c":[1,2,3]}\n' + b"z" * 50 + b'\n{"d":4}'
EXPECTED = [b'{"a":1}', b'{"b":"x\\ny"}', b'{"c":[1,2,3]}', FRAME_TOO_LARGE, b'{"d":4}']


def feed_in(chunks: list[bytes]) -> list[object]:
    framer = LineFramer(max_frame_size=20)
    out: list[object] = []
    for chunk in chunks:
        out += framer.feed(chunk)
    out += framer.feed(b"")
    return out


def whole() -> list[bytes]:
    return [STREAM]


def byte_by_byte() -> list[bytes]:
    return [STREAM[i : i + 1] for i in range(len(STREAM))]


def random_chunks(seed: int) -> list[bytes]:
    rng = random.Random(seed)
    chunks, i = [], 0
    while i < len(STREAM):
        size = rng.randint(1, 17)
        chunks.append(STREAM[i : i + size])
        i += size
    return chunks


@pytest.mark.parametrize(
    "chunks",
    [whole(), byte_by_byte(), *[random_chunks(seed) for seed in range(20)]],
    ids=["whole", "bytewise", *[f"random{seed}" for seed in range(20)]],
)
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
