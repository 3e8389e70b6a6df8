"""The command line, run as users run it: a subprocess, real agents, exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

pytestmark = pytest.mark.timeout(60)
CLI = [sys.executable, "-m", "acp_sdk"]
AGENT = [sys.executable, "-m", "acp_sdk", "agent"]
ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, text=True, timeout=50, cwd=ROOT
    )


def test_demo_renders_a_whole_turn() -> None:
    result = run("demo")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for expected in (
        "(thinking) The user wants to see every kind of update.",
        "Plan:",
        "[x] Look at the configuration",
        "* Edit config.json [pending]",
        "? Permission for Edit config.json: Allow once",
        '+ {"debug": true}',
        "* Edit config.json [completed]",
        "I turned on debug logging",
        "[end_turn]",
    ):
        assert expected in out
    assert "\x1b[" not in out  # plain text when not a terminal


def test_prompt_json_lines() -> None:
    result = run("prompt", "--json", "echo one two", "--", *AGENT)
    assert result.returncode == 0, result.stderr
    lines = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [line["update"]["content"]["text"] for line in lines[:-1]] == ["one", " two"]
    assert lines[-1] == {"stopReason": "end_turn", "sessionId": "sess_1"}


def test_prompt_rejects_permission_when_not_asked_and_not_a_terminal() -> None:
    result = run("prompt", "permission", "--", *AGENT)
    assert result.returncode == 0
    assert "Permission for Delete build/: Reject" in result.stdout
    allowed = run("prompt", "--yes", "permission", "--", *AGENT)
    assert "Allow once" in allowed.stdout


def test_prompt_with_fs_and_terminal(tmp_path: Path) -> None:
    target = tmp_path / "x.txt"
    result = run("prompt", "--fs", "--cwd", str(tmp_path), f"write {target} hi", "--", *AGENT)
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "hi"
    result = run("prompt", "--terminal", f"terminal {sys.executable} -c print(7*6)", "--", *AGENT)
    assert "42" in result.stdout


BROKEN_AGENT = (
    "import sys; sys.stdin.readline();"
    ' print(\'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"one"}}\', flush=True);'
    " sys.stdin.read()"
)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["prompt", "fail", "--", *AGENT], 1, "the agent answered with an error"),
        (["prompt", "x", "--", "/nonexistent/agent"], 1, "cannot start the agent"),
        (["prompt", "--timeout", "0.5", "wait", "--", *AGENT], 4, "timed out"),
        (["prompt", "x", "--", sys.executable, "-c", BROKEN_AGENT], 3, "protocol error"),
        (["bogus"], 2, "invalid choice"),
        (["prompt", "no command"], 2, "required"),
    ],
    ids=["agent-error", "no-such-agent", "timeout", "protocol-error", "usage", "usage-missing"],
)
def test_exit_codes_and_one_line_errors(args: list[str], code: int, message: str) -> None:
    result = run(*args)
    assert result.returncode == code
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_chat_reads_lines_until_end_of_input() -> None:
    result = run("chat", "--", *AGENT, stdin="echo first\necho second\n")
    assert result.returncode == 0, result.stderr
    assert "first" in result.stdout
    assert "second" in result.stdout
    assert result.stdout.count("[end_turn]") == 2
