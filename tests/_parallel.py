"""Helpers that let tests run side by side: the suite runs under pytest-xdist (several
worker processes; see tests/conftest.py), and other test runs may share the machine.

- `once_per_run`: an expensive build (a wheel in a fresh venv) done by the first worker
  that needs it, under a file lock, and reused by the others.
- `free_port`: a port for a server process that binds it itself (in-process servers bind
  port 0 and keep their socket instead: tests/remote/server.py).
- `child_pids`: the live children of one process, read from /proc, so a check for
  processes left behind looks at its own process tree, never at every process of a kind
  on the machine.
- `load_factor`: how busy the machine is, to stretch the few bounds on wall time that
  tell a hang from slowness (tests/client/facades.py's `guarded`), so that many tests at
  once on a small machine are not taken for a hang, while a real hang still fails.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
from collections.abc import Callable
from pathlib import Path

import pytest


def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory every worker of this test run shares (one run's base temporary
    directory: under xdist each worker's own is a subdirectory of it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """The directory `name` of this run, filled by `build(directory)` once: the first
    worker to ask builds while the others wait on a lock, then all use the result. A build
    that raised is retried (from an empty directory) by the next worker to ask, which
    then reports its own failure."""
    root = run_dir(tmp_path_factory)
    target = root / name
    done = root / f"{name}.done"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            build(target)
            done.touch()
    return target


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, for a process that binds it
    itself. The kernel picks it from a random place in its ephemeral range, so two tests
    running at once are very unlikely to get the same one; a test that can, binds port 0
    and hands over the socket instead."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cpus() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # pragma: no cover - not on Linux


def load_factor() -> float:
    """How many runnable processes share each core now, at least 1: the larger of the
    1-minute load average and the processes running this instant, per core. 1 on an idle
    machine, so bounds scaled by it are as strict there as written."""
    try:
        load = os.getloadavg()[0]
        running = int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 1.0
    return max(1.0, max(load, running) / cpus())


def child_pids(parent: int) -> list[int]:
    """The pids of `parent`'s live (not zombie) children, from /proc."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # the fields after the command name, which is in parentheses and may hold any
            # character: state, ppid, ...
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent and fields[0] != "Z":
            children.append(int(entry.name))
    return children
