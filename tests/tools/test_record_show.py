"""`python -m acp_sdk show`: a recording rendered as the CLI renders a live turn."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from acp_sdk import Client
from acp_sdk.handlers import AllowOnce
from tests.tools._recording_helpers import AGENT, ROOT, relay, run_cli

pytestmark = pytest.mark.timeout(90)
STAMP = re.compile(r"^\[ *\d+\.\d{3}\] ")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rec") / "demo.jsonl"
    with Client.spawn(relay(path, *AGENT), handlers=[AllowOnce()], cwd=ROOT) as client:
        list(client.new_session(cwd="/tmp").prompt("demo"))
    return path


def test_show_renders_the_turn_with_timestamps(demo: Path) -> None:
    result = run_cli("show", str(demo))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert all(STAMP.match(line) for line in lines), lines
    text = "\n".join(STAMP.sub("", line) for line in lines)
    for expected in (
        "Connected to Scenario agent 1.0.",
        "Session sess_",
        "> demo",
        "(thinking) The user wants to see every kind of update.",
        "[x] Look at the configuration",
        "* Edit config.json [pending]",
        "? Permission for Edit config.json: Allow once",
        '+ {"debug": true}',
        "* Edit config.json [completed]",
        "I turned on debug logging",
        "[end_turn]",
        "(the agent exited with code 0)",
    ):
        assert expected in text
    assert "\x1b[" not in text


def test_show_raw_prints_every_frame(demo: Path) -> None:
    result = run_cli("show", "--raw", str(demo))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    frames = demo.read_bytes().count(b'"from":')
    assert len(lines) == frames + 1  # and how the agent ended
    assert "client -> agent:" in lines[0]
    assert '"method":"initialize"' in lines[0]
    assert any("agent -> client:" in line and "session/update" in line for line in lines)


def test_show_refuses_a_file_that_is_not_a_recording(tmp_path: Path) -> None:
    bogus = tmp_path / "x.jsonl"
    bogus.write_text('{"hello": 1}\n')
    result = run_cli("show", str(bogus))
    assert result.returncode == 2
    assert b"not an acp_sdk recording" in result.stderr
