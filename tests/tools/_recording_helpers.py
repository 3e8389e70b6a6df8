"""Shared by the record/replay/show tests: how to run the CLI and read a recording."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "acp_sdk"]
AGENT = [sys.executable, "-m", "acp_sdk", "agent"]


def relay(out: Path, *agent: str) -> list[str]:
    """The command line of an agent behind the recording relay."""
    return [*CLI, "record", "--out", str(out), "--", *agent]


def entries(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def run_cli(
    *args: str, stdin: bytes = b"", timeout: float = 50
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, timeout=timeout, cwd=ROOT
    )
