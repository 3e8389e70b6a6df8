# mypy: ignore-errors
# (the incumbent's Agent declares every method abstract; see tests/client/agents)
"""docs/migrating.md: an agent written with agent-client-protocol 0.12.1."""

import asyncio
import uuid
from typing import Any

from acp import (
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    plan_entry,
    run_agent,
    start_edit_tool_call,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.contrib import PermissionBroker
from acp.schema import ToolCallUpdate

KINDS = {"approve": "allow_once", "approve_for_session": "allow_always", "reject": "reject_once"}


class Renamer(Agent):
    def on_connect(self, conn: Any) -> None:
        self._conn = conn
        self._always: dict[str, dict[str, str]] = {}  # session -> tool kind -> answer kind

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=protocol_version)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = uuid.uuid4().hex
        self._always[session_id] = {}
        return NewSessionResponse(session_id=session_id)

    async def _ask(self, request: Any) -> Any:
        return await self._conn.request_permission(
            session_id=request.session_id, tool_call=request.tool_call, options=request.options
        )

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        async def send(update: Any) -> None:
            await self._conn.session_update(session_id=session_id, update=update)

        await send(update_agent_thought_text("The user wants a rename."))
        await send(
            update_plan([plan_entry("Find x"), plan_entry("Rename x", status="in_progress")])
        )
        call_id = uuid.uuid4().hex
        await send(start_edit_tool_call(call_id, "Rename x", "/project/app.py", "total = 1"))
        try:
            kind = self._always[session_id].get("edit")
            if kind is None:
                broker = PermissionBroker(session_id, self._ask)
                question = ToolCallUpdate(tool_call_id=call_id, title="Rename x", kind="edit")
                response = await broker.request_for(call_id, tool_call=question)
                if response.outcome.outcome != "selected":
                    await send(update_tool_call(call_id, status="failed"))
                    return PromptResponse(stop_reason="cancelled")
                kind = KINDS[response.outcome.option_id]
                if kind == "allow_always":
                    self._always[session_id]["edit"] = kind
            if kind != "reject_once":
                diff = tool_diff_content("/project/app.py", "total = 1", "x = 1")
                await send(update_tool_call(call_id, status="completed", content=[diff]))
            else:
                await send(update_tool_call(call_id, status="failed"))
        except BaseException:
            await send(update_tool_call(call_id, status="failed"))
            raise
        if kind != "reject_once":
            await send(update_agent_message_text("Renamed x to total."))
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(run_agent(Renamer()))
