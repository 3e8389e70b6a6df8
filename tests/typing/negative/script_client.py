"""Mistakes a script author makes with the blocking `Client`, and the models.

Each marked line must be reported by both checkers, with exactly the marked error code
(mypy) and rule (pyright); an unused marker fails the run.
"""

# A misspelled attribute is Unknown to pyright; strict mode would report each use of it
# a second time. The first report is the one these samples are about.
# pyright: reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from acp_sdk import Client, decode, encode
from acp_sdk.methods import SESSION_NEW, SESSION_PROMPT
from acp_sdk.schema import (
    ContentBlock,
    PromptRequest,
    PromptResponse,
    RequestPermissionRequest,
    SessionUpdate,
    TextContent,
    ToolCallUpdate,
)


def models() -> None:
    response = PromptResponse(stop_reason="end_turn")
    print(response.stop_reasn)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]
    PromptResponse(stop_reason="bored")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    PromptResponse(stop_reason="end_turn", sessionId="s")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    response.stop_reason = "cancelled"  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]
    print(response < response)  # type: ignore[operator]  # pyright: ignore[reportOperatorIssue]
    PromptRequest(session_id=1, prompt=[])  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def required_lists_are_required() -> None:
    PromptRequest(session_id="s")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    RequestPermissionRequest(session_id="s", tool_call=ToolCallUpdate(tool_call_id="t"))  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]


def codec(raw: bytes) -> None:
    update = decode(raw, SessionUpdate)  # a union: narrow it before using an arm's fields
    print(update.content)  # type: ignore[union-attr]  # pyright: ignore[reportAttributeAccessIssue]
    block: ContentBlock = decode(raw, ContentBlock)
    text: TextContent = block  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]
    print(text)
    encode({"sessionId": "s"})  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    params_type: type[str] = SESSION_NEW.params_type  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]
    print(params_type)


def spawn_options() -> None:
    Client.spawn(["agent"], reqest_timeout=5.0)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    Client.spawn(["agent"], workers="8")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    Client.spawn(["agent"], handlers=[print])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]


def calls(client: Client) -> None:
    client.new_session(cwdd=".")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    client.new_session(cwd=5)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    print(client.list_sessions().sesions)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]
    client.prompt(session_id="s")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    client.prompt(session_id="s", prompt="text, not blocks")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    client.request(SESSION_PROMPT, PromptResponse(stop_reason="end_turn"))  # type: ignore[misc]  # pyright: ignore[reportArgumentType]
    print(client.agent_capabilities.load_sesion)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]


def updates(client: Client) -> None:
    def wants_a_request(update: PromptRequest) -> None:
        print(update)

    session = client.new_session(cwd=".")
    session.prompt("hi", on_update=wants_a_request)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


async def awaiting_a_blocking_call(client: Client) -> None:
    await client.new_session(cwd=".")  # type: ignore[misc]  # pyright: ignore[reportGeneralTypeIssues]
