"""A peer that never reads costs bounded memory. One that pipelines requests: the reader
stops while `max_owed_answers` answers are owed (being handled or not yet written), on the
agent runtime and on both clients. One that prompts and never reads the stream of small
updates: queued frames are right-sized, so `max_send_buffer` bounds their memory, not
only their length. RSS is read from /proc (Linux only).

Waits are bounded by counts of quiet polls and by the tests' hard timeout; nothing
asserts on speed. A machine too slow to read for a poll only makes a test measure
early, which cannot make a bound fail that holds.
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc"),
]
HERE = Path(__file__).parent
AGENT = [sys.executable, str(HERE / "stream_agent.py")]  # our runtime, tiny answers
REQUESTS = 100_000
BOUND_MB = 100
QUIET_POLLS = 3  # one-second polls without progress: the peer stopped reading


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (the peak) of a live process, in MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found


def frame(**message: object) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"


@pytest.fixture
def agent() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    yield process
    process.kill()
    process.wait(10)
    for pipe in (process.stdin, process.stdout):
        with contextlib.suppress(OSError):
            pipe.close()  # type: ignore[union-attr] # both are pipes


def send_until_stalled(fd: int, data: bytes) -> int:
    """Write `data` without blocking until the reader stops taking it; bytes sent."""
    sent = quiet = 0
    while sent < len(data) and quiet < QUIET_POLLS:
        _, writable, _ = select.select([], [fd], [], 1.0)
        if not writable:
            quiet += 1
            continue
        try:
            sent += os.write(fd, data[sent : sent + 65536])
            quiet = 0
        except BlockingIOError:
            quiet += 1
    return sent


def test_agent_sent_100k_pipelined_requests_it_cannot_answer_stays_bounded(
    agent: subprocess.Popen[bytes],
) -> None:
    assert agent.stdin is not None
    assert agent.stdout is not None
    # Initialized first: requests pipelined behind `initialize` would be refused.
    agent.stdin.write(frame(id=0, method="initialize", params={"protocolVersion": 1}))
    agent.stdin.flush()
    assert "result" in orjson.loads(agent.stdout.readline())
    data = b"".join(
        frame(id=i, method="session/new", params={"cwd": "/", "mcpServers": []})
        for i in range(1, REQUESTS + 1)
    )
    fd = agent.stdin.fileno()
    os.set_blocking(fd, False)
    sent = send_until_stalled(fd, data)
    memory = memory_mb(agent.pid)
    print(f"agent: read {sent} of {len(data)} bytes; {memory}")
    assert sent < len(data), "the agent read everything: the test proves nothing"
    assert memory["VmHWM"] < BOUND_MB

    # The bound pauses, it does not drop: once we read, every request is answered once.
    os.set_blocking(fd, True)
    answered: set[int] = set()
    buffer = b""
    out = agent.stdout.fileno()
    while len(answered) < REQUESTS:
        readable = [out]
        writable = [fd] if sent < len(data) else []
        ready_in, ready_out, _ = select.select(readable, writable, [], 30)
        assert ready_in or ready_out, "the agent stopped answering"
        if ready_out:
            os.set_blocking(fd, False)
            with contextlib.suppress(BlockingIOError):
                sent += os.write(fd, data[sent : sent + 65536])
        if ready_in:
            chunk = os.read(out, 1 << 16)
            assert chunk, "the agent closed its output"
            *lines, buffer = (buffer + chunk).split(b"\n")
            for line in lines:
                reply = orjson.loads(line)
                assert "result" in reply, reply
                assert reply["id"] not in answered
                answered.add(reply["id"])
    assert answered == set(range(1, REQUESTS + 1))


def test_agent_streaming_small_updates_to_a_client_that_never_reads_stays_bounded(
    agent: subprocess.Popen[bytes],
) -> None:
    import fcntl  # POSIX only, like /proc
    import termios

    assert agent.stdin is not None
    assert agent.stdout is not None
    agent.stdin.write(frame(id=0, method="initialize", params={"protocolVersion": 1}))
    agent.stdin.flush()
    assert "result" in orjson.loads(agent.stdout.readline())
    agent.stdin.write(frame(id=1, method="session/new", params={"cwd": "/", "mcpServers": []}))
    agent.stdin.flush()
    session_id = orjson.loads(agent.stdout.readline())["result"]["sessionId"]
    text = [{"type": "text", "text": "stream 10000000"}]  # ~40 bytes per update
    agent.stdin.write(
        frame(id=2, method="session/prompt", params={"sessionId": session_id, "prompt": text})
    )
    agent.stdin.flush()
    # Stalled: the pipe to us stays full and the agent's memory stopped growing.
    last: tuple[int, float] = (0, 0.0)
    quiet = 0
    while quiet < QUIET_POLLS:
        time.sleep(1.0)
        raw = fcntl.ioctl(agent.stdout.fileno(), termios.FIONREAD, b"\0" * 4)
        now = (struct.unpack("i", raw)[0], memory_mb(agent.pid)["VmRSS"])
        quiet = quiet + 1 if now == last and now[0] > 0 else 0
        last = now
    memory = memory_mb(agent.pid)
    print(f"streaming agent: {memory}")
    assert memory["VmHWM"] < BOUND_MB


def wait_until_stalled(progress: Path) -> str:
    """The flood agent's progress once it stopped changing ("done": it wrote all)."""
    last, quiet = "", 0
    while quiet < QUIET_POLLS:
        time.sleep(1.0)
        now = progress.read_text() if progress.exists() else ""
        quiet = quiet + 1 if now == last else 0
        last = now
    return last


@pytest.mark.parametrize("facade", ["sync", "async"])
def test_client_flooded_with_requests_by_a_non_reading_agent_stays_bounded(
    facade: str, tmp_path: Path
) -> None:
    progress = tmp_path / "progress"
    flood = [sys.executable, str(HERE / "request_flood_agent.py"), str(REQUESTS), str(progress)]
    with subprocess.Popen(
        [sys.executable, str(HERE / "flooded_client.py"), facade, *flood],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    ) as client:
        assert client.stdout is not None
        assert client.stdin is not None
        assert client.stdout.readline() == b"ready\n"
        written = wait_until_stalled(progress)
        memory = memory_mb(client.pid)
        print(f"{facade} client: the agent wrote {written} of {REQUESTS} requests; {memory}")
        assert written != "done", "the client read everything: the test proves nothing"
        assert memory["VmHWM"] < BOUND_MB
        client.stdin.close()
        try:
            client.wait(30)
        finally:
            client.kill()
