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


def test_env_var_auth_methods_say_which_variables_to_set() -> None:
    # codex-acp's `env_var` methods decode as agent-handled (schema v1 has no such arm);
    # the CLI suggested `--auth codex-api-key`, which fails without the variable.
    result = run("prompt", "hi", "--", *ROUGH, "env-auth")
    assert result.returncode == 1
    assert "the agent requires authentication" in result.stderr
    assert "codex-api-key (Use CODEX_API_KEY; set CODEX_API_KEY in the agent's environment)" in (
        result.stderr
    )
    assert "set OPENAI_API_KEY in the agent's environment" in result.stderr
    assert "chatgpt (Login with ChatGPT)," in result.stderr


def test_auth_with_an_env_var_method_names_the_missing_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CODEX_API_KEY", raising=False)
    result = run("prompt", "--auth", "codex-api-key", "hi", "--", *ROUGH, "env-auth")
    assert result.returncode == 2
    assert "reads CODEX_API_KEY from the agent's environment: set CODEX_API_KEY" in result.stderr


def test_an_agent_that_prints_a_usage_line_and_exits_shows_it() -> None:
    # It used to get "the agent exited with code 0 (nothing on its stderr)".
    result = run("prompt", "hi", "--", *ROUGH, "stray-stdout")
    assert result.returncode == 1
    assert "the agent exited with code 0" in result.stderr
    assert "it wrote on its stdout, not JSON-RPC:" in result.stderr
    assert "  | Usage: some-agent [--acp]" in result.stderr
    assert "  | see https://example.invalid/docs" in result.stderr
