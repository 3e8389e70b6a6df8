"""An agent overriding every method, calling every client method from its context."""

from __future__ import annotations

from acp_sdk import Agent, AgentContext, CapabilityNotNegotiated, RequestError
from acp_sdk.schema import (
    AgentMessageChunk,
    AuthenticateRequest,
    AuthenticateResponse,
    CancelNotification,
    CloseSessionRequest,
    CloseSessionResponse,
    CreateElicitationRequestForm,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ElicitationSchema,
    InitializeRequest,
    InitializeResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    LogoutRequest,
    LogoutResponse,
    NewSessionRequest,
    NewSessionResponse,
    PermissionOption,
    PromptRequest,
    PromptResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SelectedPermissionOutcome,
    SessionInfo,
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
    TextContent,
    ToolCallUpdate,
)


class Full(Agent):
    async def initialize(self, params: InitializeRequest, ctx: AgentContext) -> InitializeResponse:
        return await super().initialize(params, ctx)

    async def authenticate(
        self, params: AuthenticateRequest, ctx: AgentContext
    ) -> AuthenticateResponse:
        return AuthenticateResponse()

    async def logout(self, params: LogoutRequest, ctx: AgentContext) -> LogoutResponse:
        return LogoutResponse()

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        return NewSessionResponse(session_id="s1")

    async def load_session(
        self, params: LoadSessionRequest, ctx: AgentContext
    ) -> LoadSessionResponse:
        return LoadSessionResponse()

    async def list_sessions(
        self, params: ListSessionsRequest, ctx: AgentContext
    ) -> ListSessionsResponse:
        return ListSessionsResponse(sessions=[SessionInfo(session_id="s1", cwd="/")])

    async def delete_session(
        self, params: DeleteSessionRequest, ctx: AgentContext
    ) -> DeleteSessionResponse:
        return DeleteSessionResponse()

    async def resume_session(
        self, params: ResumeSessionRequest, ctx: AgentContext
    ) -> ResumeSessionResponse:
        return ResumeSessionResponse()

    async def close_session(
        self, params: CloseSessionRequest, ctx: AgentContext
    ) -> CloseSessionResponse:
        return CloseSessionResponse()

    async def set_mode(
        self, params: SetSessionModeRequest, ctx: AgentContext
    ) -> SetSessionModeResponse:
        return SetSessionModeResponse()

    async def set_config_option(
        self, params: SetSessionConfigOptionRequest, ctx: AgentContext
    ) -> SetSessionConfigOptionResponse:
        return SetSessionConfigOptionResponse(config_options=[])

    async def cancel(self, params: CancelNotification, ctx: AgentContext) -> None:
        return None

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        sid = params.session_id
        await ctx.send_update(sid, AgentMessageChunk(content=TextContent(text="hi")))
        try:
            text = (await ctx.read_text_file(session_id=sid, path="/a", line=1, limit=10)).content
            await ctx.write_text_file(session_id=sid, path="/b", content=text)
            terminal = await ctx.create_terminal(session_id=sid, command="ls", args=["-l"])
            await ctx.terminal_output(session_id=sid, terminal_id=terminal.terminal_id)
            exit_status = await ctx.wait_for_terminal_exit(
                session_id=sid, terminal_id=terminal.terminal_id
            )
            code: int | None = exit_status.exit_code
            await ctx.kill_terminal(session_id=sid, terminal_id=terminal.terminal_id)
            await ctx.release_terminal(session_id=sid, terminal_id=terminal.terminal_id)
            form = CreateElicitationRequestForm(
                message="?", requested_schema=ElicitationSchema(), session_id=sid
            )
            await ctx.create_elicitation(form)
        except CapabilityNotNegotiated:
            code = None
        answer = await ctx.request_permission(
            session_id=sid,
            tool_call=ToolCallUpdate(tool_call_id="t1"),
            options=[PermissionOption(option_id="ok", name="OK", kind="allow_once")],
        )
        if isinstance(answer.outcome, SelectedPermissionOutcome) and code == 0:
            return PromptResponse(stop_reason="end_turn")
        raise RequestError.internal_error({"reason": "refused"})
