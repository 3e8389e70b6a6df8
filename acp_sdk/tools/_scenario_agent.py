"""A deterministic ACP agent for testing clients: `python -m acp_sdk agent`.

It supports every stable agent method (sessions can be listed, loaded with their history
replayed, resumed, closed and deleted; it has modes and config options; it advertises an
auth method and logout) and reacts to the first text block of each prompt:

| prompt | what the agent does |
| --- | --- |
| `echo TEXT` (and anything unmatched) | streams TEXT back, a message chunk per word |
| `stream N` | N `agent_message_chunk` updates, then `end_turn` |
| `think TEXT` | a thought chunk |
| `plan` | a plan with three entries |
| `tool` | a tool call, updated through to completed, with text and diff content |
| `permission` | asks: allowed -> completes; rejected -> fails; cancelled -> `cancelled` |
| `read PATH` / `write PATH TEXT` | uses `fs/*` when the client advertised it, else says so |
| `terminal COMMAND` | runs COMMAND through `terminal/*` when advertised, shown in a tool call |
| `elicit` | a form-mode elicitation when advertised |
| `wait` | nothing until cancelled, then ends `cancelled` |
| `fail` | answers the prompt with an error response |
| `demo` | a thought, a plan, a tool call with a diff, a permission request, an answer |
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import shlex
from typing import Any

from acp_sdk.agent._runtime import Agent, AgentContext, run_agent
from acp_sdk.agent._session import SessionHandle, ToolCallHandle, diff, terminal
from acp_sdk.protocol._errors import CapabilityNotNegotiated, RequestError
from acp_sdk.schema import (
    AuthenticateRequest,
    AuthenticateResponse,
    AuthMethodAgent,
    CloseSessionRequest,
    CloseSessionResponse,
    CreateElicitationRequestForm,
    CreateElicitationResponseAccept,
    CurrentModeUpdate,
    DeleteSessionRequest,
    DeleteSessionResponse,
    Diff,
    ElicitationSchema,
    Implementation,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    LogoutRequest,
    LogoutResponse,
    McpCapabilities,
    NewSessionRequest,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptRequest,
    PromptResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SessionConfigOption,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfo,
    SessionMode,
    SessionModeState,
    SessionUpdate,
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionRequestBoolean,
    SetSessionConfigOptionResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
    StopReason,
    StringPropertySchema,
    TextContent,
    ToolKind,
    UserMessageChunk,
)

__all__ = ["ScenarioAgent", "main"]

MODES = (SessionMode(id="ask", name="Ask"), SessionMode(id="code", name="Code"))
MODELS = (
    SessionConfigSelectOption(value="fast", name="Fast"),
    SessionConfigSelectOption(value="smart", name="Smart"),
)


class _Session:
    __slots__ = ("brave", "cwd", "history", "mode", "model", "session_id")

    def __init__(self, session_id: str, cwd: str) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.mode = "ask"
        self.model = "fast"
        self.brave = False
        self.history: list[SessionUpdate] = []

    def modes(self) -> SessionModeState:
        return SessionModeState(current_mode_id=self.mode, available_modes=list(MODES))

    def config(self) -> list[SessionConfigOption]:
        return [
            SessionConfigOptionSelect(
                id="model", name="Model", current_value=self.model, options=list(MODELS)
            ),
            SessionConfigOptionBoolean(id="brave", name="Brave mode", current_value=self.brave),
        ]


class ScenarioAgent(Agent):
    """The scenario agent (see the module docstring for the prompts it understands)."""

    prompt_capabilities = PromptCapabilities(image=True, audio=True, embedded_context=True)
    mcp_capabilities = McpCapabilities(http=True, sse=True)
    auth_methods = (AuthMethodAgent(id="scenario-login", name="Scenario login"),)
    agent_info = Implementation(
        name="acp-sdk-scenario-agent", title="Scenario agent", version="1.0"
    )
    additional_directories = True

    def __init__(self) -> None:
        self._sessions: dict[str, _Session] = {}
        # Unique across processes: a client that saved a session id must not take a new
        # process's first session for its old one (every process used to start at sess_1).
        self._id_prefix = f"sess_{secrets.token_hex(4)}_"
        self._ids = itertools.count(1)
        self._tool_ids = itertools.count(1)

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        return session

    async def authenticate(
        self, params: AuthenticateRequest, ctx: AgentContext
    ) -> AuthenticateResponse:
        if params.method_id != "scenario-login":
            raise RequestError.invalid_params({"methodId": "unknown auth method"})
        return AuthenticateResponse()

    async def logout(self, params: LogoutRequest, ctx: AgentContext) -> LogoutResponse:
        return LogoutResponse()

    async def new_session(self, params: NewSessionRequest, ctx: AgentContext) -> NewSessionResponse:
        session = _Session(session_id=f"{self._id_prefix}{next(self._ids)}", cwd=params.cwd)
        self._sessions[session.session_id] = session
        return NewSessionResponse(
            session_id=session.session_id, modes=session.modes(), config_options=session.config()
        )

    async def load_session(
        self, params: LoadSessionRequest, ctx: AgentContext
    ) -> LoadSessionResponse:
        session = self._session(params.session_id)
        for update in session.history:  # replay the conversation, in order
            await ctx.send_update(session.session_id, update)
        return LoadSessionResponse(modes=session.modes(), config_options=session.config())

    async def resume_session(
        self, params: ResumeSessionRequest, ctx: AgentContext
    ) -> ResumeSessionResponse:
        session = self._session(params.session_id)
        return ResumeSessionResponse(modes=session.modes(), config_options=session.config())

    async def list_sessions(
        self, params: ListSessionsRequest, ctx: AgentContext
    ) -> ListSessionsResponse:
        if params.cursor is not None:  # every list fits one page: no cursor is ours
            raise RequestError.invalid_params({"cursor": "unknown cursor"})
        sessions = [
            SessionInfo(session_id=s.session_id, cwd=s.cwd)
            for s in self._sessions.values()
            if params.cwd is None or s.cwd == params.cwd
        ]
        return ListSessionsResponse(sessions=sessions)

    async def close_session(
        self, params: CloseSessionRequest, ctx: AgentContext
    ) -> CloseSessionResponse:
        self._session(params.session_id)
        return CloseSessionResponse()

    async def delete_session(
        self, params: DeleteSessionRequest, ctx: AgentContext
    ) -> DeleteSessionResponse:
        self._session(params.session_id)
        del self._sessions[params.session_id]
        return DeleteSessionResponse()

    async def set_mode(
        self, params: SetSessionModeRequest, ctx: AgentContext
    ) -> SetSessionModeResponse:
        session = self._session(params.session_id)
        if params.mode_id not in {m.id for m in MODES}:
            raise RequestError.invalid_params({"modeId": "unknown mode"})
        session.mode = params.mode_id
        await ctx.send_update(session.session_id, CurrentModeUpdate(current_mode_id=session.mode))
        return SetSessionModeResponse()

    async def set_config_option(
        self, params: SetSessionConfigOptionRequest, ctx: AgentContext
    ) -> SetSessionConfigOptionResponse:
        session = self._session(params.session_id)
        if isinstance(params, SetSessionConfigOptionRequestBoolean) and params.config_id == "brave":
            session.brave = params.value
        elif (
            not isinstance(params, SetSessionConfigOptionRequestBoolean)
            and params.config_id == "model"
        ):
            if params.value not in {m.value for m in MODELS}:
                raise RequestError.invalid_params({"value": "unknown model"})
            session.model = params.value
        else:
            raise RequestError.invalid_params({"configId": "unknown config option"})
        return SetSessionConfigOptionResponse(config_options=session.config())

    # ------------------------------------------------------------------ prompts

    async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
        session = self._session(params.session_id)
        for block in params.prompt:
            session.history.append(UserMessageChunk(content=block))
        text = next((b.text for b in params.prompt if isinstance(b, TextContent)), "")
        command, _, rest = text.strip().partition(" ")
        turn = _Turn(self, session, ctx)
        handler = getattr(turn, f"do_{command}", None)
        if handler is None:
            return await turn.do_echo(text)
        result: PromptResponse = await handler(rest.strip())
        return result


class _Recorded(SessionHandle):
    """The session handle, keeping what it sends as the session's history (for load)."""

    __slots__ = ("_kept",)

    def __init__(self, ctx: AgentContext, session: _Session) -> None:
        super().__init__(ctx, session.session_id)
        self._kept = session.history

    async def send(self, update: SessionUpdate) -> None:
        self._kept.append(update)
        await super().send(update)


ALLOW_OR_REJECT = (
    PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
)


class _Turn:
    def __init__(self, agent: ScenarioAgent, session: _Session, ctx: AgentContext) -> None:
        self.agent, self.session, self.ctx = agent, session, ctx
        self.s = _Recorded(ctx, session)

    async def say(self, text: str) -> None:
        await self.s.say(text)

    def done(self, reason: StopReason = "end_turn") -> PromptResponse:
        return PromptResponse(stop_reason=reason)

    async def do_echo(self, text: str) -> PromptResponse:
        words = text.split(" ") if text else [""]
        for index, word in enumerate(words):
            await self.say(word if index == 0 else " " + word)
        return self.done()

    async def do_stream(self, count: str) -> PromptResponse:
        for index in range(max(0, int(count or "0"))):
            await self.say(f"chunk {index} ")
        return self.done()

    async def do_think(self, text: str) -> PromptResponse:
        await self.s.think(text)
        return self.done()

    async def do_plan(self, _: str) -> PromptResponse:
        await self.s.plan(
            [
                ("Read the code", "completed", "high"),
                ("Write the fix", "in_progress"),
                ("Run the tests", "pending", "low"),
            ]
        )
        return self.done()

    def tool_call(self, title: str, kind: ToolKind, **options: Any) -> ToolCallHandle:
        """A tool call with the next `call_N` id (ids the tests and docs show)."""
        tool_call_id = f"call_{next(self.agent._tool_ids)}"
        return self.s.tool_call(title, kind=kind, tool_call_id=tool_call_id, **options)

    def config_diff(self) -> Diff:
        return diff(
            f"{self.session.cwd}/config.json", old='{"debug": false}', new='{"debug": true}'
        )

    async def do_tool(self, _: str) -> PromptResponse:
        async with self.tool_call("Edit config", "edit") as call:
            await call.update(status="in_progress", content=["Editing..."])
            await call.complete(self.config_diff())
        return self.done()

    async def do_permission(self, _: str) -> PromptResponse:
        async with self.tool_call("Delete build/", "delete") as call:
            choice = await call.request_permission(ALLOW_OR_REJECT)
            if choice is None:
                return self.done("cancelled")  # leaving the block fails the tool call
            if choice.option_id == "allow":
                await call.complete()
        await self.say(
            "Permission granted." if choice.option_id == "allow" else "Permission rejected."
        )
        return self.done()

    async def do_read(self, path: str) -> PromptResponse:
        try:
            result = await self.ctx.read_text_file(session_id=self.session.session_id, path=path)
        except CapabilityNotNegotiated:
            await self.say("The client did not advertise fs.readTextFile.")
            return self.done()
        except RequestError as error:
            await self.say(f"The client refused: {error.message} ({error.code}).")
            return self.done()
        await self.say(result.content)
        return self.done()

    async def do_write(self, rest: str) -> PromptResponse:
        path, _, content = rest.partition(" ")
        try:
            await self.ctx.write_text_file(
                session_id=self.session.session_id, path=path, content=content
            )
        except CapabilityNotNegotiated:
            await self.say("The client did not advertise fs.writeTextFile.")
            return self.done()
        except RequestError as error:
            await self.say(f"The client refused: {error.message} ({error.code}).")
            return self.done()
        await self.say(f"Wrote {len(content)} characters to {path}.")
        return self.done()

    async def do_terminal(self, command_line: str) -> PromptResponse:
        if not self.ctx.client_capabilities.terminal:
            await self.say("The client did not advertise terminal.")
            return self.done()
        argv = shlex.split(command_line) or ["true"]
        sid = self.session.session_id
        created = await self.ctx.create_terminal(
            session_id=sid, command=argv[0], args=argv[1:], cwd=self.session.cwd
        )
        tid = created.terminal_id
        content = [terminal(tid)]
        async with self.tool_call(
            command_line, "execute", status="in_progress", content=content
        ) as call:
            try:
                exit_status = await self.ctx.wait_for_terminal_exit(session_id=sid, terminal_id=tid)
                output = await self.ctx.terminal_output(session_id=sid, terminal_id=tid)
            finally:
                await self.ctx.release_terminal(session_id=sid, terminal_id=tid)
            if exit_status.exit_code != 0:
                await call.fail()
        await self.say(output.output)
        return self.done()

    async def do_elicit(self, _: str) -> PromptResponse:
        caps = self.ctx.client_capabilities.elicitation
        if caps is None or caps.form is None:
            await self.say("The client did not advertise form elicitation.")
            return self.done()
        schema = ElicitationSchema(
            properties={"name": StringPropertySchema(title="Your name")}, required=["name"]
        )
        response = await self.ctx.create_elicitation(
            CreateElicitationRequestForm(
                message="Who are you?", requested_schema=schema, session_id=self.session.session_id
            )
        )
        if isinstance(response, CreateElicitationResponseAccept) and response.content:
            await self.say(f"Hello, {response.content.get('name')}!")
        else:
            await self.say("No answer.")
        return self.done()

    async def do_demo(self, _: str) -> PromptResponse:
        await self.s.think("The user wants to see every kind of update.")
        await self.s.plan(
            [
                ("Look at the configuration", "completed", "high"),
                ("Turn on debug logging", "in_progress"),
                ("Explain the change", "pending", "low"),
            ]
        )
        async with self.tool_call("Edit config.json", "edit") as call:
            choice = await call.request_permission(ALLOW_OR_REJECT)
            if choice is None:
                return self.done("cancelled")  # leaving the block fails the tool call
            if choice.option_id == "allow":
                await call.update(status="in_progress", content=[self.config_diff()])
                await call.complete()
        if choice.option_id != "allow":
            await self.say("Understood, I left the configuration alone.")
            return self.done()
        answer = "I turned on debug logging in config.json, so the next run prints every request."
        for word in answer.split():
            await self.say(word + " ")
        return self.done()

    async def do_wait(self, _: str) -> PromptResponse:
        await asyncio.Event().wait()  # until session/cancel cancels this task
        return self.done()

    async def do_fail(self, _: str) -> PromptResponse:
        raise RequestError.internal_error({"reason": "the scenario asked to fail"})


def main() -> None:
    """Run the scenario agent over stdio (`python -m acp_sdk agent`)."""
    run_agent(ScenarioAgent())
