"""The README's script example runs as written (against the bundled scenario agent)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


@pytest.mark.timeout(60)
def test_the_script_example_runs() -> None:
    script = next(block for block in BLOCKS if "Client.spawn" in block)
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=50,
        cwd=README.parent,
        check=True,
    )
    assert result.stdout.strip().endswith("end_turn")
    assert "' acp_sdk'" in result.stdout


def test_every_example_compiles() -> None:
    assert len(BLOCKS) >= 3
    for block in BLOCKS:
        compile(block, "README.md", "exec")


@pytest.mark.timeout(90)
def test_the_agent_example_asks_permission_and_its_sessions_persist(tmp_path: Path) -> None:
    """The README's agent, as a real process: its tool call is allowed and completes; a
    second process on the same store file loads the session and replays the whole turn."""
    from acp_sdk import Client
    from acp_sdk.handlers import AllowOnce
    from acp_sdk.schema import (
        AgentMessageChunk,
        SessionNotification,
        ToolCall,
        ToolCallProgress,
        UserMessageChunk,
    )

    agent = tmp_path / "agent.py"
    agent.write_text(next(block for block in BLOCKS if "SqliteSessionStore" in block))
    command = [sys.executable, str(agent)]

    with Client.spawn(command, cwd=str(tmp_path), handlers=[AllowOnce()]) as client:
        session = client.new_session(cwd=str(tmp_path))
        turn = session.prompt("rename it")
        updates = list(turn)
        assert turn.stop_reason == "end_turn"
    kinds = [type(u) for u in updates]
    assert kinds[:2] == [AgentMessageChunk, ToolCall]
    final = [u for u in updates if isinstance(u, ToolCallProgress) and u.status]
    assert final[-1].status == "completed"

    replayed: list[SessionNotification] = []
    with Client.spawn(command, cwd=str(tmp_path), on_update=replayed.append) as client:
        listed = [s.session_id for s in client.list_sessions().sessions]
        assert session.session_id in listed
        client.load_session(session_id=session.session_id, cwd=str(tmp_path))
    assert isinstance(replayed[0].update, UserMessageChunk)
    assert [n.update for n in replayed[1:]] == updates
