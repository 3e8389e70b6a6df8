"""Profile the per-notification paths with cProfile: where a streamed update's time goes.

    python bench/profiling.py                 # all three, N=50,000 updates each
    python bench/profiling.py client-sync     # or client-async, agent

- client-sync / client-async: our `Client` / `AsyncClient` reading N updates from the raw
  floor agent (so the client is the only SDK code running); every thread of the client
  process is profiled (cProfile is per thread: `threading.Thread.run` is wrapped).
- agent: our agent runtime (`bench/peers/ours_agent.py`) streaming N updates to the raw
  floor reader; its streaming loop runs under cProfile (ACP_BENCH_PROFILE).

Prints, per process, the functions with the most own time (tottime) as a share of the
profiled total, and the heaviest by cumulative time. cProfile's own cost per call inflates
small functions: read the shares as where to look, not as exact figures. `.prof` files are
kept in bench/results/profiles/ for snakeviz or `python -m pstats`.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import streaming

N = 50_000
OUT = Path(__file__).resolve().parent / "results" / "profiles"
TOP = 15


def all_threads_profiled() -> list[tuple[str, cProfile.Profile]]:
    """Profile every thread started from now on (and the caller's); returns the list."""
    profiles: list[tuple[str, cProfile.Profile]] = []
    original = threading.Thread.run

    def run(self: threading.Thread) -> None:
        profile = cProfile.Profile()
        profiles.append((self.name, profile))
        profile.enable()
        try:
            original(self)
        finally:
            profile.disable()

    threading.Thread.run = run  # type: ignore[method-assign]
    return profiles


WAITS = ("acquire' of '_thread.lock", "posix.read", "epoll' objects", "time.sleep")
"""Built-ins that block (on the peer or another thread): wall time, not work; they are
left out of the shares and shown apart."""


def show(title: str, stats: pstats.Stats) -> None:
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    waits = {key: v for key, v in raw.items() if any(w in key[2] for w in WAITS)}
    waited = sum(entry[2] for entry in waits.values())
    total = sum(entry[2] for entry in raw.values()) - waited or 1e-9
    print(
        f"\n== {title}: {total:.2f} s working ({total / N * 1e6:.1f} us per update), "
        f"{waited:.2f} s blocked in: "
        + ", ".join(f"{key[2]} {v[2]:.2f} s" for key, v in waits.items() if v[2] > 0.01)
    )
    print(f"   {'own %':>6} {'cum %':>6} {'calls':>9}  function (shares of the working time)")
    rows = sorted(((k, v) for k, v in raw.items() if k not in waits), key=lambda item: item[1][2])[
        ::-1
    ][:TOP]
    for (path, line, name), (_, calls, own, cum, _) in rows:
        where = f"{Path(path).name}:{line}" if line else path
        print(f"   {own / total:6.1%} {cum / total:6.1%} {calls:>9,}  {name} ({where})")
    print(f"   -- SDK functions by cumulative time (top {TOP}; cum includes blocked time)")
    rows = sorted(raw.items(), key=lambda item: item[1][3], reverse=True)
    shown = 0
    for (path, line, name), (_, calls, own, cum, _) in rows:
        if "acp_sdk" not in path:
            continue
        where = f"{Path(path).name}:{line}"
        print(f"   {own / total:6.1%} {cum / total:6.1%} {calls:>9,}  {name} ({where})")
        shown += 1
        if shown == TOP:
            break


def client(kind: str) -> None:
    profiles = all_threads_profiled()
    main = cProfile.Profile()
    main.enable()
    if kind == "client-sync":
        rate = streaming.ours_sync_stream(streaming.FLOOR_AGENT, N)
    else:
        rate = streaming.ours_async_stream(streaming.FLOOR_AGENT, N)
    main.disable()
    OUT.mkdir(parents=True, exist_ok=True)
    merged = pstats.Stats(main)
    for _, profile in profiles:
        merged.add(profile)
    merged.dump_stats(OUT / f"{kind}.prof")
    print(f"\n{kind}: {rate:,.0f} updates/s under the profiler")
    show(f"{kind}, all threads", merged)
    for name, profile in profiles:
        if name == "acp-reader":  # the blocking client decodes here, not in the main thread
            show(f"{kind}, thread {name}", pstats.Stats(profile))
            show(f"{kind}, main thread (iterating the turn)", pstats.Stats(main))


def agent() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "agent.prof"
    os.environ["ACP_BENCH_PROFILE"] = str(path)
    try:
        rate = streaming.floor_stream(streaming.OUR_AGENT, N)
    finally:
        del os.environ["ACP_BENCH_PROFILE"]
    print(f"\nagent: {rate:,.0f} updates/s under the profiler")
    show("agent streaming loop", pstats.Stats(str(path)))


def main() -> None:
    kinds = sys.argv[1:] or ["client-sync", "client-async", "agent"]
    for kind in kinds:
        if kind == "agent":
            agent()
        else:
            client(kind)


if __name__ == "__main__":
    main()
