"""Mistakes an agent author makes: overrides, context calls, extension methods.

Each marked line must be reported by both checkers, with exactly the marked error code
(mypy) and rule (pyright); an unused marker fails the run.
"""

# A misspelled attribute is Unknown to pyright; strict mode would report each use of it
# a second time. The first report is the one these samples are about.
# pyright: reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import attrs

from acp_sdk import Agent, AgentContext, Side, run_agent
from acp_sdk.agent import extension
from acp_sdk.methods import FS_READ_TEXT_FILE, SESSION_UPDATE, TABLE, Method
from acp_sdk.schema import (
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ReadTextFileRequest,
    SessionNotification,
    ToolCallUpdate,
    WriteTextFileRequest,
)


@attrs.frozen(kw_only=True, order=False)
class EchoParams:
    text: str


@attrs.frozen(kw_only=True, order=False)
class EchoResult:
    text: str


ECHO = Method.extension(
    "_acme/echo", handled_by=Side.CLIENT, params_type=EchoParams, result_type=EchoResult
)


class WrongAgent(Agent):
    async def prompt(self, params: NewSessionRequest, ctx: AgentContext) -> PromptResponse:  # type: ignore[override]  # pyright: ignore[reportIncompatibleMethodOverride]
        return PromptResponse(stop_reason="end_turn")

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return PromptResponse(stop_reason="end_turn")  # type: ignore[return-value]  # pyright: ignore[reportReturnType]

    def load_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:  # type: ignore[override]  # pyright: ignore[reportIncompatibleMethodOverride]
        return NewSessionResponse(session_id="s")


async def context_calls(ctx: AgentContext, params: PromptRequest) -> None:
    write = WriteTextFileRequest(session_id="s", path="/a", content="")
    await ctx.request(FS_READ_TEXT_FILE, write)  # type: ignore[misc]  # pyright: ignore[reportArgumentType]
    read = await ctx.request(FS_READ_TEXT_FILE, ReadTextFileRequest(session_id="s", path="/a"))
    print(read.contents)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]
    await ctx.notify(SESSION_UPDATE, params)  # type: ignore[misc]  # pyright: ignore[reportArgumentType]
    await ctx.send_update(params.session_id, params.prompt[0])  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    await ctx.request_permission(session_id="s", tool_call=ToolCallUpdate(tool_call_id="t"))  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    print(ctx.client_capabilities.filesystem)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]


async def extension_calls(ctx: AgentContext) -> None:
    result = await ctx.request(ECHO, EchoParams(text="hi"))
    print(result.length)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]
    await ctx.request(ECHO, EchoResult(text="hi"))  # type: ignore[misc]  # pyright: ignore[reportArgumentType]


async def wrong_params(params: PromptRequest, ctx: AgentContext) -> EchoResult:
    return EchoResult(text=params.session_id)


def not_async(params: EchoParams, ctx: AgentContext) -> EchoResult:
    return EchoResult(text=params.text)


async def without_context(params: EchoParams) -> EchoResult:
    return EchoResult(text=params.text)


def serving(update: SessionNotification) -> None:
    table = TABLE.extend([ECHO])
    run_agent(Agent(), table=table, extensions={"ext_acme_echo": not_async})  # type: ignore[dict-item]  # pyright: ignore[reportArgumentType]
    run_agent(Agent(), table=table, extensions={"ext_acme_echo": without_context})  # type: ignore[dict-item]  # pyright: ignore[reportArgumentType]
    run_agent(Agent(), extensions=[extension(ECHO, wrong_params)])  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    run_agent(Agent(), extensions=[extension(ECHO, not_async)])  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    run_agent(Agent(), tabel=table)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
