"""`--timeout` and `--idle-timeout`: the turn is cancelled with the reason printed, and the
exit code says whether the agent stopped (4) or not (5)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)
CLI = [sys.executable, "-m", "acp_sdk"]
ROOT = Path(__file__).resolve().parents[2]
TURN_AGENT = [sys.executable, str(ROOT / "tests" / "client" / "turn_agent.py")]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], input="", capture_output=True, text=True, timeout=50, cwd=ROOT
    )


def test_an_idle_timeout_the_agent_answers_exits_4_with_the_reason() -> None:
    result = run("prompt", "--idle-timeout", "0.5", "wait", "--", *TURN_AGENT)
    assert result.returncode == 4, result.stderr
    assert "[cancelled] (no update for 0.5s (--idle-timeout))" in result.stdout
    assert "timed out" in result.stderr
    assert "the agent stopped" in result.stderr


def test_a_timeout_the_agent_answers_exits_4_with_the_reason() -> None:
    result = run("prompt", "--timeout", "0.5", "wait", "--", *TURN_AGENT)
    assert result.returncode == 4, result.stderr
    assert "[cancelled] (the turn took over 0.5s (--timeout))" in result.stdout


def test_a_timeout_the_agent_ignores_exits_5() -> None:
    """The agent never ends the turn: after the 5 s grace the turn fails."""
    result = run("prompt", "--idle-timeout", "0.3", "deaf", "--", *TURN_AGENT)
    assert result.returncode == 5, result.stderr
    assert "the agent did not stop" in result.stdout
    assert "did not end the turn within 5s of the cancel" in result.stderr


def test_an_idle_timeout_never_cuts_a_turn_that_keeps_streaming() -> None:
    result = run("prompt", "--idle-timeout", "2", "slow 4 0.25", "--", *TURN_AGENT)
    assert result.returncode == 0, result.stderr
    assert "[end_turn]" in result.stdout
