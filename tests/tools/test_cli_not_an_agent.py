"""The command line against programs that are not ACP agents: `yes garbage` fails at
once, a usage line then silence gets a waiting line and then one error line, `check`
stops at `initialize` instead of running every case. As users run them: subprocesses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from acp_sdk.tools import _cli, _live

pytestmark = pytest.mark.timeout(60)
CLI = [sys.executable, "-m", "acp_sdk"]
YES = ["yes", "garbage"]
USAGE_THEN_SLEEP = ["sh", "-c", "echo 'Usage: myagent --acp'; sleep 100"]
NOT_ACP = (
    "error: the agent is not speaking ACP: it printed 101 lines that are not JSON-RPC "
    "(808 bytes) and no answer to initialize; the first: 'garbage'"
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], input="", capture_output=True, text=True, timeout=50, check=False
    )


@pytest.mark.parametrize("command", [["prompt", "hi"], ["chat"]])
def test_yes_garbage_is_one_error_line_and_exit_1(command: list[str]) -> None:
    result = run(*command, "--", *YES)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [NOT_ACP]
    assert result.stdout == ""


def test_a_usage_line_then_silence_shows_a_waiting_line() -> None:
    process = subprocess.Popen(
        [*CLI, "prompt", "hi", "--", *USAGE_THEN_SLEEP],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stderr is not None
    try:
        line = process.stderr.readline()  # after ~2 s without an answer
        assert line == (
            "waiting for the agent to answer initialize... (it printed: Usage: myagent --acp)\n"
        )
        os.kill(process.pid, signal.SIGINT)  # the user gives up
        assert process.wait(20) == 130
        rest = process.stderr.read()
        assert "Traceback" not in rest
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_the_initialize_timeout_is_one_error_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_live, "INITIALIZE_TIMEOUT", 0.5)
    code = _cli.main(["prompt", "hi", "--", *USAGE_THEN_SLEEP])
    assert code == 1
    assert capsys.readouterr().err == (
        "error: initialize (request 0) got no answer within 0.5 s; the agent printed, "
        "not JSON-RPC: Usage: myagent --acp\n"
    )


def test_a_silent_program_says_it_printed_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_live, "INITIALIZE_TIMEOUT", 0.5)
    assert _cli.main(["prompt", "hi", "--", "sleep", "100"]) == 1
    assert capsys.readouterr().err == (
        "error: initialize (request 0) got no answer within 0.5 s; the agent printed nothing\n"
    )


def test_a_few_log_lines_before_the_first_frame_still_work() -> None:
    agent = ["sh", "-c", 'echo one; echo two; echo three; exec "$@"', "logs", *CLI, "agent"]
    result = run("prompt", "echo hello", "--", *agent)
    assert result.returncode == 0, result.stderr
    assert "hello" in result.stdout


# ------------------------------------------------------------------ check


def test_check_stops_at_once_on_yes_garbage(tmp_path: Path) -> None:
    report_file = tmp_path / "report.json"
    # (The initialize timeout is 120 s: past this test's timeout, so waiting for it fails.)
    result = run("check", "--json", str(report_file), "--", *YES)
    assert result.returncode == 1
    assert result.stdout == ""  # no table of 31 cases
    assert result.stderr.splitlines() == [
        "error: not an ACP agent: it printed 101 lines that are not JSON-RPC and no answer "
        "to initialize; the first: garbage; no other case was run"
    ]
    cases = {c["id"]: c for c in orjson.loads(report_file.read_bytes())["cases"]}
    assert cases["initialize"]["outcome"] == "fail"
    assert {c["outcome"] for i, c in cases.items() if i != "initialize"} == {"skip"}


def test_check_stops_when_initialize_is_not_answered_in_time() -> None:
    result = run("check", "--turn-timeout", "1", "--", *USAGE_THEN_SLEEP)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: no answer to initialize within 1s (it printed, not JSON-RPC: Usage: myagent "
        "--acp); no other case was run"
    ]
