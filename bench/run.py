"""The whole benchmark in one command: acp_sdk vs the floor vs the incumbent, side by side.

    .venv/bin/python -m pip install -e '.[bench]'
    .venv/bin/python bench/run.py                 # about 1-2 minutes on 2 cores
    .venv/bin/python bench/run.py --rounds 3      # quicker, noisier

Every figure is measured in this one run, the contenders interleaved (round by round, the
order rotated each round), and reported as the median with its min-max over the rounds.
A ratio is taken round by round against the floor of that same round (pairing keeps it
meaningful when the machine's speed drifts), and its median is reported. What each figure
measures is in docs/performance.md; the results, with the machine, the Python and the
package versions, are written as JSON to bench/results/latest.json (`--out` to change).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import codec
import import_time
import memory
import streaming

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"

# The issue's targets, for reference (a figure is reported whether it meets them or not).
TARGETS = {
    "streaming": "acp_sdk >= 50% of the floor, on both facades",
    "round_trip": "AsyncClient <= 1.2x the async floor; Client <= 1.5x the async floor",
    "codec": "acp_sdk <= 3x the orjson floor",
    "import": "`from acp_sdk import Client` <= 2.5x `import orjson` (whole process)",
}


def summary(samples: Sequence[float]) -> dict[str, Any]:
    return {
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
        "samples": list(samples),
    }


def paired(values: Sequence[float], floor: Sequence[float]) -> float:
    """The median of the round-by-round ratios value / floor."""
    return statistics.median(v / f for v, f in zip(values, floor, strict=True))


def interleave(cases: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Run every case once per round, the order rotated each round."""
    names = list(cases)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(cases[name]())
    return samples


def environment() -> dict[str, Any]:
    def version(dist: str) -> str | None:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    def git(*args: str) -> str:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return out.stdout.strip()

    cpu = platform.processor()
    with_name = Path("/proc/cpuinfo")
    if with_name.exists():
        for line in with_name.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "cpu": cpu,
            "cores": os.cpu_count(),
            "load_average": list(os.getloadavg()),
        },
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "packages": {
            dist: version(dist)
            for dist in (
                "acp-typed",
                "agent-client-protocol",
                "orjson",
                "attrs",
                "cattrs",
                "pydantic",
                "pydantic-core",
            )
        },
        "git": {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain"))},
    }


def run_streaming(rounds: int, out: dict[str, Any]) -> None:
    cases = {
        **{f"stream: {k}": v for k, v in streaming.STREAMS.items()},
        **{f"stream half: {k}": v for k, v in streaming.STREAM_HALVES.items()},
        **{f"rtt: {k}": v for k, v in streaming.ROUND_TRIPS.items()},
    }
    samples = interleave(cases, rounds)
    stream_floor = samples["stream: " + next(iter(streaming.STREAMS))]
    out["streaming"] = {
        "unit": "notifications/s",
        "n": streaming.N,
        "rows": {
            key.split(": ", 1)[1]: {**summary(v), "of_floor": paired(v, stream_floor)}
            for key, v in samples.items()
            if key.startswith("stream")
        },
    }
    rtt_floor = samples["rtt: " + next(iter(streaming.ROUND_TRIPS))]
    out["round_trip"] = {
        "unit": "us (median of each run's calls)",
        "calls": streaming.RTT_CALLS,
        "warmup": streaming.RTT_WARMUP,
        "rows": {
            key.split(": ", 1)[1]: {**summary(v), "vs_floor": paired(v, rtt_floor)}
            for key, v in samples.items()
            if key.startswith("rtt")
        },
    }


def run_codec(rounds: int, out: dict[str, Any]) -> None:
    rows = []
    for label, op, samples in codec.run(max(rounds, 5)):
        floor = samples["orjson"]
        row: dict[str, Any] = {"message": label, "op": op}
        for name, values in samples.items():
            row[name] = {**summary(values), "vs_floor": paired(values, floor)}
        rows.append(row)
    out["codec"] = {"unit": "ns per operation", "rows": rows}


def run_import(rounds: int, out: dict[str, Any]) -> None:
    runs = max(rounds * 3, 9)
    samples = import_time.run(runs)
    floor = samples["import orjson"]["whole"]
    out["import"] = {
        "unit": "ms",
        "runs": runs,
        "rows": {
            label: {
                "whole_process": {**summary(v["whole"]), "vs_orjson": paired(v["whole"], floor)},
                "import_only": summary(v["import"]),
            }
            for label, v in samples.items()
        },
    }


def run_memory(out: dict[str, Any]) -> None:
    results = memory.run()
    out["memory"] = {
        "unit": "bytes held per decoded notification",
        "count": memory.COUNT,
        "rows": {
            label: {name: {"bytes": b, "vs_floor": b / row["orjson"]} for name, b in row.items()}
            for label, row in results.items()
        },
    }


def spread(row: dict[str, Any], fmt: str) -> str:
    return f"{row['median']:{fmt}} ({row['min']:{fmt}}-{row['max']:{fmt}})"


def report(out: dict[str, Any]) -> None:
    env = out["environment"]
    print(
        f"# {env['date']}  Python {env['python']['version']}  {env['machine']['cpu']}, "
        f"{env['machine']['cores']} cores  acp-typed {env['packages']['acp-typed']}  "
        f"agent-client-protocol {env['packages']['agent-client-protocol']}  "
        f"orjson {env['packages']['orjson']}"
    )
    if "streaming" in out:
        section = out["streaming"]
        print(f"\nsession/update notifications/s, agent -> client over stdio (N={section['n']:,})")
        print(f"  target: {TARGETS['streaming']}")
        for key, row in section["rows"].items():
            print(f"  {key:40} {spread(row, ',.0f'):>28}/s  {row['of_floor']:5.0%} of floor")
        section = out["round_trip"]
        print(f"\nrequest round trip, authenticate (median of {section['calls']:,} calls per run)")
        print(f"  target: {TARGETS['round_trip']}")
        for key, row in section["rows"].items():
            print(f"  {key:40} {spread(row, '.1f'):>28} us  {row['vs_floor']:5.2f}x floor")
    if "codec" in out:
        print(
            "\ncodec, ns per operation: orjson floor | acp_sdk (x floor) | incumbent (x floor)"
            " | typed bound (x floor)"
        )
        print(f"  target: {TARGETS['codec']}")
        for row in out["codec"]["rows"]:
            theirs = row.get("incumbent")
            tail = f"{theirs['median']:7.0f} ({theirs['vs_floor']:5.2f}x)" if theirs else "    n/a"
            bound = row["typed bound"]
            print(
                f"  {row['message']:27} {row['op']:6} {row['orjson']['median']:6.0f} | "
                f"{row['acp_sdk']['median']:6.0f} ({row['acp_sdk']['vs_floor']:5.2f}x) | {tail}"
                f" | {bound['median']:6.0f} ({bound['vs_floor']:5.2f}x)"
            )
    if "import" in out:
        section = out["import"]
        print(f"\ncold import, whole process ms, median (min-max) of {section['runs']} runs")
        print(f"  target: {TARGETS['import']}")
        for key, row in section["rows"].items():
            whole = row["whole_process"]
            print(
                f"  {key:28} {spread(whole, '.1f'):>22}  {whole['vs_orjson']:5.2f}x orjson;"
                f"  import statement alone {row['import_only']['median']:6.1f} ms"
            )
    if "memory" in out:
        section = out["memory"]
        print(f"\nbytes held per decoded notification ({section['count']:,} kept alive)")
        for label, row in section["rows"].items():
            cells = "  ".join(
                f"{name} {cell['bytes']:6,.0f} B ({cell['vs_floor']:.2f}x)"
                for name, cell in row.items()
            )
            print(f"  {label:27} {cells}")


SECTIONS = ("streaming", "codec", "import", "memory")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    os.chdir(ROOT)
    out: dict[str, Any] = {"environment": environment(), "targets": TARGETS}
    start = time.perf_counter()
    if "streaming" in only:
        run_streaming(args.rounds, out)
    if "codec" in only:
        run_codec(args.rounds, out)
    if "import" in only:
        run_import(args.rounds, out)
    if "memory" in only:
        run_memory(out)
    out["seconds"] = round(time.perf_counter() - start, 1)
    out["environment"]["load_average_after"] = list(os.getloadavg())
    report(out)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"\n{out['seconds']} s; results in {args.out}")


if __name__ == "__main__":
    main()
