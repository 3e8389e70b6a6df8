"""What the recording relay (`python -m acp_sdk record`) adds per frame.

    python bench/record_latency.py [--rounds 3] [--frames 2000]

An echo agent (`os.read` then `os.write` the same bytes back) is driven by a raw client
over pipes, once directly and once through `record --out FILE -- <echo agent>`,
interleaved, each round:

1. Round trip: one frame written, the same frame read back, `--frames` times (after a
   warm-up), for a small frame (a ~200-byte `session/update`) and a 64 KiB one. A round
   trip crosses the relay twice, so the latency added per frame is half the difference
   of the medians (and of the 99th percentiles).
2. Burst: 10,000 small frames written back to back while a thread reads them back;
   frames per second, direct and relayed.

Prints a table and writes `bench/results/record-latency.json`.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
ECHO = [
    sys.executable,
    "-c",
    "import os\nwhile True:\n    b = os.read(0, 65536)\n    if not b: break\n    os.write(1, b)\n",
]
SMALL = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello world"}}}}\n'
)
LARGE = b'{"jsonrpc":"2.0","method":"x","params":{"blob":"' + b"a" * (64 * 1024 - 50) + b'"}}\n'
BURST = 10_000


def _start(relayed: bool, out: str) -> subprocess.Popen[bytes]:
    argv = (
        [sys.executable, "-m", "acp_sdk", "record", "--out", out, "--", *ECHO] if relayed else ECHO
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=env)


def _read_exactly(fd: int, size: int) -> None:
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError("the peer closed its output")
        size -= len(chunk)


def round_trips(relayed: bool, frame: bytes, count: int, out: str) -> list[float]:
    process = _start(relayed, out)
    assert process.stdin is not None
    assert process.stdout is not None
    write, read = process.stdin.fileno(), process.stdout.fileno()
    times: list[float] = []
    try:
        for index in range(count + 50):  # the first 50: warm-up
            start = time.perf_counter()
            os.write(write, frame)
            _read_exactly(read, len(frame))
            if index >= 50:
                times.append(time.perf_counter() - start)
    finally:
        process.stdin.close()
        process.wait(30)
    return times


def burst(relayed: bool, out: str) -> float:
    """Frames per second, BURST small frames written while a thread reads them back."""
    process = _start(relayed, out)
    assert process.stdin is not None
    assert process.stdout is not None
    read = process.stdout.fileno()
    os.write(process.stdin.fileno(), SMALL)  # started and warm (the relay imports acp_sdk)
    _read_exactly(read, len(SMALL))
    reader = threading.Thread(target=_read_exactly, args=(read, BURST * len(SMALL)))
    start = time.perf_counter()
    reader.start()
    process.stdin.write(SMALL * BURST)
    reader.join()
    elapsed = time.perf_counter() - start
    process.stdin.close()
    process.wait(30)
    return BURST / elapsed


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--frames", type=int, default=2000)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {}
    rates: dict[str, list[float]] = {"direct": [], "relayed": []}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.jsonl")
        for _ in range(args.rounds):
            for size, frame in (("small", SMALL), ("64KiB", LARGE)):
                for relayed in (False, True):
                    key = f"{size}/{'relayed' if relayed else 'direct'}"
                    samples.setdefault(key, []).extend(
                        round_trips(relayed, frame, args.frames, out)
                    )
            for relayed in (False, True):
                rates["relayed" if relayed else "direct"].append(burst(relayed, out))
    result: dict[str, Any] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        # The machine is often shared: the 1-minute load average when the run ended.
        "load_average_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "rounds": args.rounds,
        "frames": args.frames,
    }
    print(f"{'frame':8} {'direct p50':>12} {'relayed p50':>12} {'added p50':>10} {'added p99':>10}")
    for size in ("small", "64KiB"):
        direct, through = samples[f"{size}/direct"], samples[f"{size}/relayed"]
        added50 = (statistics.median(through) - statistics.median(direct)) / 2
        added99 = (_p99(through) - _p99(direct)) / 2
        result[size] = {
            "round_trip_direct_p50_us": statistics.median(direct) * 1e6,
            "round_trip_throughp50_us": statistics.median(through) * 1e6,
            "added_per_frame_p50_us": added50 * 1e6,
            "added_per_frame_p99_us": added99 * 1e6,
        }
        print(
            f"{size:8} {statistics.median(direct) * 1e6:10.0f}us "
            f"{statistics.median(through) * 1e6:10.0f}us {added50 * 1e6:8.0f}us "
            f"{added99 * 1e6:8.0f}us"
        )
    result["burst_frames_per_s"] = {k: statistics.median(v) for k, v in rates.items()}
    print(
        f"burst of {BURST}: direct {result['burst_frames_per_s']['direct']:,.0f} frames/s, "
        f"relayed {result['burst_frames_per_s']['relayed']:,.0f} frames/s"
    )
    target = Path(__file__).resolve().parent / "results" / "record-latency.json"
    target.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")


if __name__ == "__main__":
    main()
