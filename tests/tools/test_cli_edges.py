"""Edges of the CLI a new user hits in the first hour (issue 28), each run as a user runs
it: a subprocess, asserting the exact error line and exit code, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

pytestmark = pytest.mark.timeout(90)
CLI = [sys.executable, "-m", "acp_sdk"]
AGENT = [sys.executable, "-m", "acp_sdk", "agent"]
ROOT = Path(__file__).resolve().parents[2]
FAST_CHECK = ["--grace", "0.2", "--cancel-after", "0.3", "--big-prompt-size", "0"]
STDOUT_CLOSED = 141  # as the shell shows a process that SIGPIPE ended


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=80,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )


def one_error(result: subprocess.CompletedProcess[str], code: int, line: str) -> None:
    assert (result.returncode, result.stderr) == (code, f"error: {line}\n")


MISSING_TEXT = "prompt: the prompt TEXT is missing (usage: prompt TEXT -- COMMAND [ARGS...])"
MISSING_FILE = (
    "replay: the recording FILE is missing (usage: replay FILE [--against -- COMMAND [ARGS...]])"
)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        # It said "-m not found": the program became the text, `-m` the program.
        (["prompt", "--", *AGENT], MISSING_TEXT),
        (["prompt", "--json", "--yes", "--", *AGENT], MISSING_TEXT),
        # argparse said "the following arguments are required: COMMAND".
        (["prompt", "--", "my-agent"], MISSING_TEXT),
        (["replay", "--against", "--", *AGENT], MISSING_FILE),
    ],
    ids=["prompt", "prompt-with-options", "prompt-one-word-command", "replay"],
)
def test_a_forgotten_argument_before_the_command_is_named(args: list[str], line: str) -> None:
    one_error(run(*args), 2, line)


@pytest.mark.parametrize(
    ("command", "flag", "value", "rule"),
    [
        # A limit of 0 or less cut the turn at once; --idle-timeout -5 was ignored.
        ("prompt", "--timeout", "-1", "must be above 0"),
        ("prompt", "--idle-timeout", "0", "must be above 0"),
        ("chat", "--timeout", "nan", "must be above 0"),
        # A server that refuses every connection (503), or closes each at once.
        ("serve", "--max-connections", "0", "must be at least 1"),
        ("serve", "--idle-timeout", "-1", "must be above 0"),
        ("check", "--grace", "-1", "must be at least 0"),
        ("check", "--big-prompt-size", "-5", "must be at least 0"),
    ],
)
def test_a_number_out_of_range_is_a_usage_error(
    command: str, flag: str, value: str, rule: str
) -> None:
    text = ["hi"] if command == "prompt" else []
    result = run(command, flag, value, *text, "--", *AGENT)
    assert result.returncode == 2
    last = result.stderr.splitlines()[-1]
    assert last == f"python -m acp_sdk {command}: error: argument {flag}: {value}: {rule}"
    assert "Traceback" not in result.stderr


def test_check_refuses_a_url_it_has_no_transport_for() -> None:
    # It ran: 4 fail and 27 skip, "an answer of an unexpected shape (ValueError: ...)".
    result = run("check", "--url", "ftp://example.invalid/acp")
    one_error(
        result, 2, "--url ftp://example.invalid/acp: not a ws://, wss://, http:// or https:// URL"
    )


@pytest.mark.parametrize("command", ["prompt", "chat", "demo"])
def test_a_bad_cwd_is_named_as_the_directory(command: str, tmp_path: Path) -> None:
    # It said "cannot start the agent: python not found".
    a_file = tmp_path / "file"
    a_file.write_text("")
    text = ["hi"] if command == "prompt" else []
    agent = ["--", *AGENT] if command != "demo" else []
    for cwd, why in [("/nonexistent", "no such directory"), (str(a_file), "not a directory")]:
        one_error(run(command, "--cwd", cwd, *text, *agent), 2, f"--cwd {cwd}: {why}")


def test_a_relative_cwd_is_sent_as_an_absolute_path(tmp_path: Path) -> None:
    # session/new takes an absolute path (the schema's rule); `--cwd sub` was sent as is.
    (tmp_path / "sub").mkdir()
    result = subprocess.run(
        [*CLI, "--debug", "prompt", "--cwd", "sub", "hi", "--", *AGENT],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    [new] = [line for line in result.stderr.splitlines() if '"method":"session/new"' in line]
    assert orjson.dumps({"cwd": str(tmp_path / "sub")}).decode()[1:-1] in new


@pytest.mark.parametrize(
    ("agent", "why"),
    [
        (["no-such-agent-for-acp"], "no-such-agent-for-acp not found"),
        (["/etc/passwd"], "/etc/passwd is not executable"),
        (["/"], "/ is a directory"),
        ([""], "the agent command is empty"),
    ],
)
@pytest.mark.parametrize("command", ["prompt", "chat", "check"])
def test_an_agent_that_cannot_start_is_one_line(command: str, agent: list[str], why: str) -> None:
    # `check` printed a 31-row table of "could not start the agent".
    text = ["hi"] if command == "prompt" else []
    one_error(run(command, *text, "--", *agent), 1, f"cannot start the agent: {why}")


def test_check_json_alone_prints_the_report_on_stdout(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run("check", *FAST_CHECK, "--json", "-o", str(report), "--", *AGENT)
    assert result.returncode == 0, result.stderr
    printed = orjson.loads(result.stdout)  # stdout is the JSON and nothing else
    assert printed == orjson.loads(report.read_bytes())
    assert printed["agent"]["command"] == AGENT
    assert "no MUST failed" in result.stderr  # the table went to stderr


@pytest.mark.parametrize("flag", ["--json", "--json-file", "-o", "--junit"])
def test_check_refuses_a_report_file_it_could_not_write_before_running(
    flag: str, tmp_path: Path
) -> None:
    where = tmp_path / "missing" / "report"
    named = "--json-file" if flag == "-o" else flag
    one_error(
        run("check", flag, str(where), "--", *AGENT),
        2,
        f"{named} {where}: no such directory {where.parent}",
    )


def many_updates_recording(path: Path, updates: int) -> Path:
    """A recording whose `show` prints `updates` lines."""
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x\n"}}
    lines = [{"acp_sdk_recording": 1, "argv": ["agent"], "started": "2026-01-01T00:00:00Z"}]
    for index in range(updates):
        params = {"sessionId": "s", "update": chunk}
        update = {"jsonrpc": "2.0", "method": "session/update", "params": params}
        lines.append({"t": index / 1000, "from": "agent", "text": orjson.dumps(update).decode()})
    lines.append({"t": 9.0, "exit": 0})
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    return path


def closed_stdout_cases(tmp_path: Path) -> dict[str, list[str]]:
    recording = str(many_updates_recording(tmp_path / "r.jsonl", 20_000))
    return {
        "prompt --json": ["prompt", "--json", "stream 2000", "--", *AGENT],
        "prompt": ["prompt", "stream 2000", "--", *AGENT],
        "demo": ["demo"],
        "check": ["check", *FAST_CHECK, "--", *AGENT],
        "check --json": ["check", *FAST_CHECK, "--json", "--", *AGENT],
        "show": ["show", recording],
        "show --raw": ["show", "--raw", recording],
        "--help": ["--help"],
    }


@pytest.mark.parametrize(
    "name",
    ["prompt --json", "prompt", "demo", "check", "check --json", "show", "show --raw", "--help"],
)
def test_a_closed_stdout_ends_the_command_quietly(name: str, tmp_path: Path) -> None:
    """`... | head -1`: the reader goes away after its first line (the output is far
    bigger than a pipe holds, or the reader left before the first write)."""
    args = closed_stdout_cases(tmp_path)[name]
    process = subprocess.Popen(
        [*CLI, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    if name in ("prompt --json", "show", "show --raw"):
        assert process.stdout.readline()  # `head -1`
    process.stdout.close()
    try:
        errors = process.stderr.read().decode()
        code = process.wait(60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        process.stderr.close()
    assert "Traceback" not in errors, errors
    assert "BrokenPipeError" not in errors, errors
    assert "Exception ignored" not in errors, errors
    if name == "check --json":  # its table goes to stderr, its JSON to the closed stdout
        assert errors.rstrip().endswith("no MUST failed"), errors
    else:
        assert errors == "", errors
    # argparse (3.11+) ignores a failed write of --help's text itself, then exits 0.
    assert code == STDOUT_CLOSED or (name == "--help" and code == 0)


def test_a_stdout_closed_from_the_start_is_like_dev_null() -> None:
    # `>&-`: Python's sys.stdout is None, and the command died on `None.buffer`.
    shell = 'exec "$@" >&-'
    for args in (["prompt", "--json", "hi"], ["prompt", "hi"]):
        result = subprocess.run(
            ["sh", "-c", shell, "sh", *CLI, *args, "--", *AGENT],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
        )
        assert (result.returncode, result.stderr) == (0, "")


# A shell starts a background job with SIGINT ignored, and Python then keeps ignoring it:
# the CLI under test gets it back, as in a terminal.
SIGINT_DEFAULT = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])",
]


def test_ctrl_c_while_check_runs_exits_130_quietly(tmp_path: Path) -> None:
    started = tmp_path / "started"
    agent = ["sh", "-c", f'touch "{started}"; exec "$@"', "sh", *AGENT]
    process = subprocess.Popen(
        [*SIGINT_DEFAULT, *CLI, "check", "--long-prompt", "wait", "--", *agent],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        start_new_session=True,  # the terminal's group: SIGINT reaches the CLI alone
    )
    try:
        deadline = time.monotonic() + 60
        while not started.exists():  # the cases are under way once the agent runs
            assert process.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate(timeout=10)
    assert (process.returncode, err.decode()) == (130, "\ninterrupted\n")


# Never answers initialize; when its stdin ends, it says so. SIGTERM (default action)
# kills it first if it comes before that end: then it says nothing.
SLOW_TO_START = """
import sys
open(sys.argv[1] + ".started", "w").close()
sys.stdin.buffer.read()
open(sys.argv[1], "w").write("its stdin ended before it was terminated")
"""


def test_ctrl_c_before_the_agent_answered_initialize_stops_it_at_once(tmp_path: Path) -> None:
    # It closed the agent's stdin and waited its close_timeout (2 s) before SIGTERM.
    state = tmp_path / "state"
    agent = [sys.executable, "-c", SLOW_TO_START, str(state)]
    process = subprocess.Popen(
        [*SIGINT_DEFAULT, *CLI, "prompt", "hi", "--", *agent],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not Path(f"{state}.started").exists():
            assert process.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate(timeout=10)
    assert (process.returncode, out, err.decode()) == (130, b"", "\ninterrupted\n")
    # The signal was sent before the CLI closed the agent's stdin, so it is pending
    # (fatal) before the end of input can wake the agent: it never writes.
    assert not state.exists(), state.read_text()


def test_ctrl_c_while_the_cli_still_imports_exits_130_quietly() -> None:
    # On a loaded machine the imports take a second or two: a Ctrl-C then printed the
    # traceback of whatever module was loading. The interrupt is raised where it lands.
    interrupt_the_import = (
        "import runpy, sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'acp_sdk.tools._cli':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "runpy.run_module('acp_sdk', run_name='__main__', alter_sys=True)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", interrupt_the_import, "demo"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert (result.returncode, result.stdout, result.stderr) == (130, "", "")
