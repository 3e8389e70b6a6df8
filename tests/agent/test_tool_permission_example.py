"""Testing an agent in-process: examples/agent_tool_permission.py under both clients.

docs/agents.md ("Testing your agent") shows this file as it is (a test checks that).
"""

import asyncio

from agent_tool_permission import Editor  # examples/agent_tool_permission.py

from acp_sdk.handlers import AllowOnce, AskPermission, RejectAll
from acp_sdk.schema import (
    AgentMessageChunk,
    Diff,
    RequestPermissionRequest,
    TextContent,
    ToolCall,
    ToolCallProgress,
)
from acp_sdk.testing import aconnect_in_process, connect_in_process


def test_an_allowed_edit_completes_with_its_diff() -> None:
    with connect_in_process(Editor(), handlers=[AllowOnce()]) as client:
        turn = client.new_session(cwd="/project").prompt("rename x")
        start, done, message = list(turn)
    assert isinstance(start, ToolCall)
    assert (start.kind, start.status) == ("edit", "pending")
    assert done == ToolCallProgress(
        tool_call_id=start.tool_call_id,
        status="completed",
        content=[Diff(path="/project/app.py", old_text="x = 1", new_text="total = 1")],
    )
    assert message == AgentMessageChunk(content=TextContent(text="Renamed x to total."))
    assert turn.stop_reason == "end_turn"


def test_a_rejected_edit_fails() -> None:
    with connect_in_process(Editor(), handlers=[RejectAll()]) as client:
        turn = client.new_session(cwd="/project").prompt("rename x")
        statuses = [u.status for u in turn if isinstance(u, (ToolCall, ToolCallProgress))]
    assert statuses == ["pending", "failed"]
    assert turn.stop_reason == "end_turn"


def cancel(request: RequestPermissionRequest) -> None:
    return None  # what a client answers when its user cancels the turn


def test_a_cancelled_question_ends_the_turn_and_fails_the_tool_call() -> None:
    async def scenario() -> None:
        async with aconnect_in_process(Editor(), handlers=[AskPermission(cancel)]) as client:
            session = await client.new_session(cwd="/project")
            turn = session.prompt("rename x")
            updates = [u async for u in turn]
        statuses = [u.status for u in updates if isinstance(u, (ToolCall, ToolCallProgress))]
        assert statuses == ["pending", "failed"]
        assert turn.stop_reason == "cancelled"

    asyncio.run(scenario())
