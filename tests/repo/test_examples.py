"""Every script in examples/ runs and does what its docstring says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from acp_sdk import Client
from acp_sdk.handlers import (
    AllowOnce,
    AskPermission,
    ClientHandlers,
    LocalFileSystem,
    LocalTerminals,
    RejectAll,
)
from acp_sdk.schema import (
    AgentMessageChunk,
    Diff,
    SessionNotification,
    TextContent,
    ToolCall,
    ToolCallProgress,
)

pytestmark = pytest.mark.timeout(60)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(name: str) -> str:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=50,
        check=True,
    )
    return result.stdout


def test_every_example_is_covered() -> None:
    covered = {
        "roundtrip.py",
        "script_client.py",
        "async_render.py",
        "plugin_state.py",
        "agent_tool_permission.py",
        "agent_fs_terminal.py",
        "extension_method.py",
        "remote_agent.py",
        "agent_persistent.py",
        "agent_mcp.py",  # driven with real MCP servers by tests/mcp/test_agent_mcp.py
    }
    assert {p.name for p in EXAMPLES.glob("*.py")} == covered


def test_roundtrip() -> None:
    assert "equal to the input" in run("roundtrip.py")


def test_script_client() -> None:
    assert run("script_client.py").splitlines() == [
        "Hello from a one-shot script",
        "(stop reason: end_turn)",
    ]


def test_plugin_state_renders_from_the_session_state() -> None:
    out = run("plugin_state.py")
    assert "agent: " in out  # the agent's message, joined from its chunks
    assert "[completed]" in out  # the tool call, merged from its updates
    assert "plan: [" in out
    assert out.rstrip().endswith("[end_turn]")


def test_async_render() -> None:
    out = run("async_render.py")
    assert "tool: Edit config.json" in out
    assert out.rstrip().endswith("[end_turn]")


@pytest.mark.parametrize(
    ("policy", "status", "stop_reason"),
    [
        (AllowOnce(), "completed", "end_turn"),
        (RejectAll(), "failed", "end_turn"),
        (AskPermission(lambda request: None), "failed", "cancelled"),  # the user cancels
    ],
)
def test_agent_tool_permission(policy: ClientHandlers, status: str, stop_reason: str) -> None:
    with Client.spawn(
        [sys.executable, str(EXAMPLES / "agent_tool_permission.py")], handlers=[policy]
    ) as client:
        turn = client.new_session(cwd="/project").prompt("rename x")
        updates = list(turn)
    assert isinstance(updates[0], ToolCall)
    progress = updates[1]
    assert isinstance(progress, ToolCallProgress)
    assert progress.status == status  # the tool call always ends
    if status == "completed":
        assert progress.content is not None
        assert isinstance(progress.content[0], Diff)
    assert turn.stop_reason == stop_reason


def test_agent_fs_terminal(tmp_path: Path) -> None:
    argv = [sys.executable, str(EXAMPLES / "agent_fs_terminal.py")]
    with Client.spawn(argv, handlers=[LocalFileSystem(tmp_path), LocalTerminals()]) as client:
        updates = list(client.new_session(cwd=str(tmp_path)).prompt("count"))
    [message] = updates
    assert isinstance(message, AgentMessageChunk)
    assert isinstance(message.content, TextContent)
    assert message.content.text.startswith("First lines: ['one', 'two']; wc says: 3")
    assert (tmp_path / "notes.txt").read_text() == "one\ntwo\nthree\n"
    with Client.spawn(argv) as bare:
        [refusal] = list(bare.new_session(cwd=str(tmp_path)).prompt("count"))
    assert isinstance(refusal, AgentMessageChunk)
    assert isinstance(refusal.content, TextContent)
    assert "fs.writeTextFile" in refusal.content.text


def test_extension_method() -> None:
    assert run("extension_method.py").strip() == "HELLO EXTENSIONS (16 characters)"


def test_remote_agent() -> None:
    assert run("remote_agent.py").splitlines() == [
        "ws: hello over a websocket",
        "replayed: hello over a websocket",
        "http: and again over http",
    ]


def test_agent_persistent(tmp_path: Path) -> None:
    """Two agent processes, one file: the second lists, loads and continues the session."""
    argv = [sys.executable, str(EXAMPLES / "agent_persistent.py"), str(tmp_path / "n.db")]
    with Client.spawn(argv) as client:
        session = client.new_session(cwd=str(tmp_path))
        first = [u for u in session.prompt("buy milk") if isinstance(u, AgentMessageChunk)]
    replayed: list[SessionNotification] = []
    with Client.spawn(argv, on_update=replayed.append) as client:
        [listed] = client.list_sessions().sessions
        assert listed.session_id == session.session_id
        assert listed.title == "buy milk"
        client.load_session(session_id=session.session_id, cwd=str(tmp_path))
        second = [
            u
            for u in client.session(session.session_id).prompt("and eggs")
            if isinstance(u, AgentMessageChunk)
        ]
    assert [text(u) for u in first] == ["turn 1; you said: buy milk"]
    assert [text(u) for u in second] == ["turn 2; you said: buy milk / and eggs"]
    assert len(replayed) == 3  # the prompt, the title, the answer


def text(update: AgentMessageChunk) -> str:
    assert isinstance(update.content, TextContent)
    return update.content.text
