"""`replay --against` when the agent cannot start or exits early: a report and an exit
code, never a traceback (before: `FileNotFoundError` and `ConnectionResetError`), and no
wait of `--timeout` per answer once the agent's output ended."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from acp_sdk import Client
from tests.tools._recording_helpers import AGENT, ROOT, relay, run_cli

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rec") / "two_turns.jsonl"
    with Client.spawn(relay(path, *AGENT), cwd=ROOT) as client:
        session = client.new_session(cwd="/tmp")
        list(session.prompt("hello there"))
        list(session.prompt("hello again"))
    return path


@pytest.mark.parametrize(
    "agent",
    [
        [sys.executable, "-c", "import sys; sys.exit(3)"],  # reads nothing
        [sys.executable, "-c", "import sys; sys.stdin.readline(); sys.exit(3)"],
    ],
    ids=["exits-at-once", "exits-after-one-frame"],
)
def test_an_agent_that_exits_early_is_reported(recording: Path, agent: list[str]) -> None:
    # --timeout 600: the answers are known missing when the output ends, not after it.
    result = run_cli("replay", "--against", "--timeout", "600", str(recording), "--", *agent)
    out = result.stdout.decode()
    assert b"Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, (out, result.stderr)
    assert "initialize (id 0): no answer (the agent's output ended)" in out
    assert "answers differ" in out


def test_an_agent_that_cannot_start_is_an_error(recording: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-agent")
    result = run_cli("replay", "--against", str(recording), "--", missing)
    assert result.returncode == 127
    assert b"error: cannot start the agent:" in result.stderr
    assert b"Traceback" not in result.stderr


def test_options_after_the_file_are_read_as_options(recording: Path) -> None:
    """`replay FILE --against --timeout N -- CMD` (options after FILE, as the docs
    write `--against`): `--timeout` is an option, not the agent's command."""
    agent = [sys.executable, "-c", "import sys; sys.exit(3)"]
    result = run_cli("replay", str(recording), "--against", "--timeout", "600", "--", *agent)
    assert b"cannot start the agent" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr
    assert "answers differ" in result.stdout.decode()
    bad = run_cli("replay", str(recording), "--against", "--timeout", "soon", "--", *agent)
    assert bad.returncode == 2
    assert b"--timeout needs a number of seconds" in bad.stderr
