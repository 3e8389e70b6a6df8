"""Rough edges of the CLI found by driving real agents, each run as users run it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)
CLI = [sys.executable, "-m", "acp_sdk"]
ROUGH = [sys.executable, str(Path(__file__).with_name("rough_agent.py"))]
ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=50,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )


def test_an_error_answer_shows_the_tail_of_the_agents_stderr() -> None:
    result = run("prompt", "hi", "--", *ROUGH, "explained-error")
    assert result.returncode == 1
    assert "the agent answered with an error: Internal error" in result.stderr
    assert "the last lines of its stderr:" in result.stderr
    assert "  | rough: OPENAI_API_KEY is not set" in result.stderr
