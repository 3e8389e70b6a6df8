"""End to end: an agent process built on `acp_sdk.mcp.McpSessions` (examples/agent_mcp.py),
driven by our `Client` over stdio, connects the MCP servers the client passes in `session/new`
(a stdio server it starts, a Streamable HTTP server on 127.0.0.1, one that cannot
start), calls their tools in prompt turns, and leaves no MCP process behind."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_sdk import Client
from acp_sdk.client._sync import Session
from acp_sdk.schema import (
    AgentMessageChunk,
    McpServer,
    McpServerHttp,
    McpServerStdio,
    NewSessionResponse,
    TextContent,
    ToolCall,
    ToolCallProgress,
)
from tests.mcp.servers import children_running_servers, running_http
from tests.mcp.test_connect import alive, stdio

pytestmark = pytest.mark.timeout(90)

AGENT = [sys.executable, str(Path(__file__).resolve().parents[2] / "examples" / "agent_mcp.py")]
GONE_WITHIN = 20.0  # seconds for a process to disappear (a bound, not a speed)


@pytest.fixture
def greeter() -> Iterator[str]:
    with running_http("greeter") as url:
        yield url


@pytest.fixture(autouse=True)
def no_server_outlives_a_test() -> Iterator[None]:
    yield
    deadline = time.monotonic() + GONE_WITHIN
    while children_running_servers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert children_running_servers() == []


def ask(session: Session[NewSessionResponse], text: str, status: str = "completed") -> str:
    """The agent's message; a tool call, if any, ended with `status`."""
    chunks, statuses = [], []
    for update in session.prompt(text, timeout=60):
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContent):
            chunks.append(update.content.text)
        if isinstance(update, ToolCallProgress):
            statuses.append(update.status)
    assert statuses in ([], [status]), statuses
    return "".join(chunks)


def tools(session: Session[NewSessionResponse]) -> dict[str, str]:
    """`/tools` as {tool: server}, and {"not connected": server (error)} lines."""
    lines = ask(session, "/tools").splitlines()
    return dict(line.rstrip(")").split(" (", 1) for line in lines)


def servers(url: str) -> list[McpServer]:
    return [
        stdio("calc"),
        McpServerHttp(name="web", url=url, headers=[]),
        McpServerStdio(name="broken", command="/nonexistent/mcp-server", args=[], env=[]),
    ]


def spawn(lines: list[str]) -> Client:
    # Time for the agent to stop its MCP servers after its stdin closes.
    return Client.spawn(AGENT, stderr=lines.append, close_timeout=15.0)


def test_an_agent_calls_the_tools_of_the_clients_mcp_servers(greeter: str, tmp_path: Path) -> None:
    stderr: list[str] = []
    with spawn(stderr) as client:
        session = client.new_session(cwd=str(tmp_path), mcp_servers=servers(greeter))
        listed = tools(session)
        assert listed["add"] == "calc"
        assert listed["greet"] == "web"
        assert listed["web__whoami"] == "web"
        assert listed["not connected: broken"].startswith("FileNotFoundError(")
        assert ask(session, 'add {"a": 2, "b": 40}') == "42"
        assert ask(session, 'greet {"who": "editor"}') == "hello, editor"
        assert ask(session, "web__whoami") == "greeter"
        assert "validation error" in ask(session, 'add {"a": "x", "b": 1}', "failed").lower()
        assert "no MCP tool named 'nope'" in ask(session, "nope", "failed")
        pid = int(ask(session, "pid"))
        assert alive(pid)
        # A cancelled turn cancels its tool call, not the session's servers.
        turn = session.prompt('sleep {"seconds": 60}', timeout=60)
        for update in turn:
            if isinstance(update, ToolCall):
                session.cancel()
        assert turn.stop_reason == "cancelled"
        assert ask(session, 'add {"a": 1, "b": 1}') == "2"
        assert int(ask(session, "pid")) == pid
        # session/close stops the session's servers before it answers.
        client.close_session(session_id=session.session_id)
        assert not alive(pid)
    assert not any("Traceback" in line for line in stderr), "\n".join(stderr)


def test_an_agent_that_exits_leaves_no_mcp_server_behind(greeter: str) -> None:
    """The client goes away without closing its sessions: the agent's exit stops them."""
    stderr: list[str] = []
    with spawn(stderr) as client:
        first = client.new_session(cwd="/", mcp_servers=servers(greeter))
        second = client.new_session(cwd="/", mcp_servers=[stdio("calc")])
        pids = [int(ask(first, "pid")), int(ask(second, "pid"))]
        assert all(alive(pid) for pid in pids)
        process = client.process
    # The agent ended on its own at the end of its input (not SIGTERM'd or killed): its
    # exit stopped the servers, not our process-group signals (they run in their own).
    assert process is not None
    assert process.returncode == 0
    deadline = time.monotonic() + GONE_WITHIN
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in pids)
    assert not any("Traceback" in line for line in stderr), "\n".join(stderr)
