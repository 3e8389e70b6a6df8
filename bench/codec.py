"""Codec benchmark: ns per decode and per encode, acp_sdk vs plain orjson vs the incumbent.

    python bench/codec.py            # needs `pip install -e '.[bench]'` for the incumbent

All implementations are measured interleaved in the same process and run (round-robin over
`ROUNDS` rounds of about 50 ms each; the median round is reported, with the min-max), so
machine noise hits them alike. "orjson" is the floor:
`orjson.loads` to a dict and `orjson.dumps` of that dict, with no typing at all. The
"typed bound" is the least any codec producing our frozen slotted attrs objects must pay
(`typed_bound.py`: create every object and store every slot, or read every slot and
build every dict, with no lookups or checks; objects built the cheapest known way, a
mutable twin then given the frozen class; "bound, descriptors" is the earlier measure,
through each slot descriptor's `__set__`; "bound, reads" adds reading each value out of
orjson's dicts by subscript, which any decoder of those dicts must do). The
incumbent is the official `agent-client-protocol` package (pydantic models), using its
`model_validate_json` and `model_dump_json(by_alias=True, exclude_none=True)`.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from messages import MESSAGES
from typed_bound import decode_bound, encode_bound

import acp_sdk

incumbent: Any
try:
    import acp.schema as incumbent
except ImportError:  # pragma: no cover - the bench extra is optional
    incumbent = None

ROUNDS = 7
TARGET_SECONDS = 0.05


def loop_count(fn: Callable[[], Any]) -> int:
    """How many calls take about TARGET_SECONDS."""
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed > TARGET_SECONDS / 5:
            break
        n *= 2
    return max(1, int(n * TARGET_SECONDS / elapsed))


def bench(cases: dict[str, Callable[[], Any]], rounds: int = ROUNDS) -> dict[str, list[float]]:
    """ns per call of each case, one sample per round."""
    loops = {name: loop_count(fn) for name, fn in cases.items()}
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():  # interleaved: every implementation, every round
            count = loops[name]
            start = time.perf_counter_ns()
            for _ in range(count):
                fn()
            samples[name].append((time.perf_counter_ns() - start) / count)
    return samples


def run(rounds: int = ROUNDS) -> list[tuple[str, str, dict[str, list[float]]]]:
    """(message, "decode" or "encode", ns samples by implementation) per row."""
    rows = []
    for label, (wire, type_, incumbent_name) in MESSAGES.items():
        model = acp_sdk.decode(wire, type_)
        plain = orjson.loads(wire)
        assert orjson.loads(acp_sdk.encode(model)) == plain
        decode_cases: dict[str, Callable[[], Any]] = {
            "orjson": lambda wire=wire: orjson.loads(wire),
            "acp_sdk": lambda wire=wire, type_=type_: acp_sdk.decode(wire, type_),
            "typed bound": decode_bound(wire, model),
            # The bound as measured before 2026-12-01 evening (slot descriptors' __set__).
            "bound, descriptors": decode_bound(wire, model, "descriptors"),
            # The bound plus reading each value out of the parsed dicts (no checks).
            "bound, reads": decode_bound(wire, model, reads=True),
        }
        encode_cases: dict[str, Callable[[], Any]] = {
            "orjson": lambda plain=plain: orjson.dumps(plain),
            "acp_sdk": lambda model=model: acp_sdk.encode(model),
            "typed bound": encode_bound(model),
        }
        if incumbent is not None:
            cls = getattr(incumbent, incumbent_name)
            theirs = cls.model_validate_json(wire)
            decode_cases["incumbent"] = lambda cls=cls, wire=wire: cls.model_validate_json(wire)
            encode_cases["incumbent"] = lambda theirs=theirs: theirs.model_dump_json(
                by_alias=True, exclude_none=True
            )
        rows.append((label, "decode", bench(decode_cases, rounds)))
        rows.append((label, "encode", bench(encode_cases, rounds)))
    return rows


def main() -> None:
    rows = run()

    header = (
        f"{'message':28} {'op':7} {'orjson ns':>10} {'acp_sdk ns':>11} {'incumbent ns':>13} "
        f"{'bound ns':>9} {'acp/orjson':>11} {'bound/orjson':>13} {'incumbent/acp':>14} "
        f"{'acp/bound':>10} {'desc bound ns':>14} {'reads bound ns':>15}"
    )
    print(header)
    print("-" * len(header))
    for label, op, samples in rows:
        result = {name: statistics.median(values) for name, values in samples.items()}
        ours, floor = result["acp_sdk"], result["orjson"]
        theirs = result.get("incumbent")
        theirs_ns = f"{theirs:.0f}" if theirs else "n/a"
        speedup = f"{theirs / ours:.1f}x" if theirs else "n/a"
        desc = f"{result['bound, descriptors']:.0f}" if "bound, descriptors" in result else ""
        reads = f"{result['bound, reads']:.0f}" if "bound, reads" in result else ""
        print(
            f"{label:28} {op:7} {floor:10.0f} {ours:11.0f} {theirs_ns:>13} "
            f"{result['typed bound']:9.0f} {ours / floor:10.2f}x "
            f"{result['typed bound'] / floor:12.2f}x {speedup:>14} "
            f"{ours / result['typed bound']:9.2f}x {desc:>14} {reads:>15}"
        )


if __name__ == "__main__":
    main()
