"""`python -m acp_sdk check` as users run it: a subprocess, its table, files, exit codes."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from acp_sdk.tools._check_cases import CASES
from tests._parallel import free_port

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "acp_sdk"]
AGENT = [sys.executable, "-m", "acp_sdk", "agent"]
FAST = ["--grace", "0.2", "--cancel-after", "0.3"]


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "check", *FAST, *args], capture_output=True, text=True, timeout=50, cwd=ROOT
    )


def test_the_scenario_agent_exits_0_with_a_table_json_and_junit(tmp_path: Path) -> None:
    json_file, junit_file = tmp_path / "report.json", tmp_path / "report.xml"
    result = check("--json", str(json_file), "--junit", str(junit_file), "--", *AGENT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "case" in result.stdout.splitlines()[0]
    assert "no MUST failed" in result.stdout
    report = orjson.loads(json_file.read_bytes())
    assert report["agent"]["protocolVersion"] == 1
    assert report["agent"]["command"] == AGENT
    assert [c["id"] for c in report["cases"]] == [c.id for c in CASES]
    for case in report["cases"]:
        assert set(case) == {"id", "spec", "level", "outcome", "detail"}
        assert case["outcome"] == "pass"
        assert case["level"] in ("MUST", "SHOULD")
        assert ".mdx § " in case["spec"]
    suite = ET.parse(junit_file).getroot().find("testsuite")
    assert suite is not None
    assert suite.get("tests") == str(len(CASES))
    assert suite.get("failures") == "0"


def test_a_broken_agent_exits_1_and_shows_the_offending_frame(tmp_path: Path) -> None:
    junit_file = tmp_path / "report.xml"
    broken = "tests.tools.broken_agents.prints_to_stdout"
    result = check("--junit", str(junit_file), "--", sys.executable, "-m", broken)
    assert result.returncode == 1, result.stdout + result.stderr
    [row] = [line for line in result.stdout.splitlines() if line.startswith("stdout-json-only")]
    assert "fail" in row
    assert "Starting agent v0.1 ..." in row
    assert "a MUST failed" in result.stdout
    failures = ET.parse(junit_file).getroot().iter("failure")
    assert any("Starting agent" in (f.get("message") or "") for f in failures)


@pytest.mark.parametrize("args", [[], ["--url", "ws://127.0.0.1:9/acp", "--", *AGENT]])
def test_a_command_or_a_url_is_needed_exactly_once(args: list[str]) -> None:
    result = check(*args)
    assert result.returncode == 2
    assert "either -- COMMAND" in result.stderr


@pytest.fixture
def served() -> Iterator[int]:
    port = free_port()
    server = subprocess.Popen(
        [*CLI, "serve", "--port", str(port), "--", *AGENT],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.1)
        yield port
    finally:
        server.terminate()
        server.wait(10)


def test_a_remote_agent_over_websocket(served: int) -> None:
    result = check("--url", f"ws://127.0.0.1:{served}/acp")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[1:] if line.strip()}
    assert "skip" in rows["eof-exit"]
    assert "no process to watch" in rows["eof-exit"]
    assert "pass" in rows["malformed-json"]
    assert "pass" in rows["session-cancel"]
