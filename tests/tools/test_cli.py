"""The command line, run as users run it: a subprocess, real agents, exit codes."""

from __future__ import annotations

import subprocess
import sys
import time
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
    assert lines[-1]["stopReason"] == "end_turn"
    assert lines[-1]["sessionId"].startswith("sess_")


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
        (["prompt", "fail", "--", *AGENT], 1, "the scenario asked to fail"),  # error data
        (["prompt", "x", "--", "/nonexistent/agent"], 1, "cannot start the agent"),
        (["prompt", "--timeout", "0.5", "wait", "--", *AGENT], 4, "timed out"),
        (["prompt", "x", "--", sys.executable, "-c", BROKEN_AGENT], 3, "protocol error"),
        (["bogus"], 2, "invalid choice"),
        (["prompt", "no command"], 2, "required"),
    ],
    ids=[
        "agent-error",
        "agent-error-data",
        "no-such-agent",
        "timeout",
        "protocol-error",
        "usage",
        "usage-missing",
    ],
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


PEER = [sys.executable, str(Path(__file__).with_name("peer.py"))]


def test_each_agent_is_started_exactly_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from acp_sdk import Client
    from acp_sdk.tools import _cli

    log = tmp_path / "starts"
    monkeypatch.setenv("ACP_PEER_LOG", str(log))
    opened: list[object] = []
    real_open = Client.open

    def counting_open(self: Client) -> Client:
        opened.append(self)
        return real_open(self)

    monkeypatch.setattr(Client, "open", counting_open)
    assert _cli.main(["prompt", "hi", "--", *PEER, "echo"]) == 0
    assert "hello" in capsys.readouterr().out
    assert len(opened) == 1  # not open() and then `with` (a second start, once)
    assert len(log.read_text().split()) == 1


def test_without_a_terminal_permission_is_reject_once_else_cancelled() -> None:
    # Only allow_always / reject_always offered: rejecting "always" is not ours to choose.
    result = run("prompt", "go", "--", *PEER, "ask-always")
    assert result.returncode == 0, result.stderr
    assert 'outcome: {"outcome": "cancelled"}' in result.stdout
    allowed = run("prompt", "--yes", "go", "--", *PEER, "ask-always")
    assert '"optionId": "always-yes"' in allowed.stdout


def test_help_states_the_permission_policy() -> None:
    for args in ([], ["prompt"], ["chat"]):
        text = " ".join(run(*args, "--help").stdout.split())
        assert "asked on a terminal" in text or "ask when stdin is a terminal" in text
        assert "reject_once" in text
        assert "--yes" in text


@pytest.mark.parametrize("where", ["top", "after-command"])
def test_debug_anywhere_shows_sdk_logs_and_agent_stderr(where: str) -> None:
    args = ["prompt", "hi", "--", *PEER, "chatty"]
    args = ["--debug", *args] if where == "top" else ["prompt", "--debug", *args[1:]]
    result = run(*args)
    assert result.returncode == 0, result.stderr
    assert "[agent] peer says hi" in result.stderr
    assert "[acp_sdk" in result.stderr  # the acp_sdk logger, at DEBUG
    assert "DEBUG" in result.stderr
    quiet = run("prompt", "hi", "--", *PEER, "chatty")
    assert "peer says hi" not in quiet.stderr
    assert "DEBUG" not in quiet.stderr


def test_agent_text_is_neutralised_unless_raw() -> None:
    result = run("prompt", "hi", "--", *PEER, "escape")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for bad in ("\x1b", "\x07", "\x9b", "\r", "\u202e"):
        assert bad not in out
    assert "\\x1b]0;pwned\\x07title \\x1b[31mred\\x1b[0m\ttab\\x9b2J\\x0dCR \\u202eevil\n" in out
    assert "line2\nline3" in out  # newlines kept (CRLF as a newline)
    assert "* \\x1b[2Jwipe [pending]" in out  # tool titles too
    raw = run("prompt", "--raw", "hi", "--", *PEER, "escape")
    assert "\x1b]0;pwned\x07" in raw.stdout


@pytest.mark.parametrize(
    ("mode", "code", "lines"),
    [
        ("crash", 3, ["peer: warming up", "peer: fatal: the model server is gone"]),
        ("die-early", 5, ["peer: cannot read my configuration"]),
    ],
)
def test_agent_failure_shows_exit_code_and_stderr(mode: str, code: int, lines: list[str]) -> None:
    result = run("prompt", "hi", "--", *PEER, mode)
    assert result.returncode == 1
    assert f"the agent exited with code {code}" in result.stderr
    for line in lines:
        assert line in result.stderr
    assert "Traceback" not in result.stderr


def test_auth_required_lists_methods_and_auth_authenticates() -> None:
    result = run("prompt", "hi", "--", *PEER, "auth")
    assert result.returncode == 1
    assert "-32000" in result.stderr
    assert "api-key (API key)" in result.stderr
    assert "browser (Browser login)" in result.stderr
    assert "--auth" in result.stderr
    authed = run("prompt", "--auth", "api-key", "hi", "--", *PEER, "auth")
    assert authed.returncode == 0, authed.stderr
    assert "hello" in authed.stdout
    top = run("prompt", "hi", "--auth", "api-key", "--", *PEER, "auth")
    assert top.returncode == 0, top.stderr
    unknown = run("prompt", "--auth", "nope", "hi", "--", *PEER, "auth")
    assert unknown.returncode == 2
    assert "api-key (API key)" in unknown.stderr
    scenario = run("prompt", "--auth", "scenario-login", "echo ok", "--", *AGENT)
    assert scenario.returncode == 0, scenario.stderr


def test_a_flood_to_a_slow_screen_keeps_the_cli_bounded(tmp_path: Path) -> None:
    """The agent streams 100,000 updates of ~2 KB (about 200 MB) while the CLI's stdout is
    not read: the CLI must stop pulling updates (backpressure to the agent) instead of
    queueing them all for the screen."""
    raw = Path(__file__).resolve().parents[1] / "client" / "peers" / "raw_agent.py"
    agent = [sys.executable, str(raw), "--stream", "100000", "--size", "2000"]
    cli = subprocess.Popen(
        [sys.executable, "-m", "acp_sdk", "prompt", "--raw", "go", "--", *agent],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    assert cli.stdout is not None
    try:
        time.sleep(4.0)  # nobody reads the CLI's output meanwhile
        status = Path(f"/proc/{cli.pid}/status").read_text()
        [peak] = [line for line in status.splitlines() if line.startswith("VmHWM:")]
        peak_kib = int(peak.split()[1])
        assert peak_kib < 120 * 1024, f"the CLI holds {peak_kib // 1024} MiB"
    finally:
        cli.kill()
        cli.wait(10)
        cli.stdout.close()
