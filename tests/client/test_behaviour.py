"""One behaviour suite, run against both `Client` and `AsyncClient`, over real subprocess
stdio against the scenario agent (and a few misbehaving agents)."""

from __future__ import annotations

import base64
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_sdk import ConnectionClosed, RequestError, RequestTimeout
from acp_sdk.handlers import (
    AllowOnce,
    AskPermission,
    ClientHandlers,
    LocalFileSystem,
    LocalTerminals,
    RejectAll,
)
from acp_sdk.protocol._session_state import ToolCallView
from acp_sdk.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ClientCapabilities,
    CreateElicitationRequest,
    CreateElicitationResponse,
    CreateElicitationResponseAccept,
    CurrentModeUpdate,
    Diff,
    ImageContent,
    Plan,
    RequestPermissionRequest,
    SessionNotification,
    SetSessionConfigOptionRequestBoolean,
    SetSessionConfigOptionRequestValueId,
    Terminal,
    TextContent,
    ToolCall,
    ToolCallProgress,
    UserMessageChunk,
)
from tests._parallel import load_factor
from tests.client.facades import FACADES, Facade, SyncFacade

pytestmark = pytest.mark.timeout(60)
MakeDriver = Callable[..., Facade]


@pytest.fixture(params=sorted(FACADES))
def make(request: pytest.FixtureRequest) -> Iterator[MakeDriver]:
    opened: list[Facade] = []
    cls = FACADES[request.param]

    def factory(*args: Any, **kwargs: Any) -> Facade:
        driver = cls(*args, **kwargs)
        driver.__enter__()
        opened.append(driver)
        return driver

    yield factory
    for driver in opened:
        driver.__exit__(None, None, None)


def texts(updates: list[Any]) -> str:
    return "".join(
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    )


# ------------------------------------------------------------------ handshake and methods


def test_initialize_reports_the_agent(make: MakeDriver) -> None:
    driver = make()
    assert driver.agent_info.name == "acp-sdk-scenario-agent"
    caps = driver.agent_capabilities
    assert caps.load_session is True
    assert caps.session_capabilities.list is not None
    assert caps.auth.logout is not None


def test_every_client_to_agent_method(make: MakeDriver) -> None:
    updates: list[SessionNotification] = []
    driver = make(on_update=updates.append)
    session = driver.new_session("/work")
    sid = session.session_id
    assert session.response.modes.current_mode_id == "ask"
    driver.prompt(session, "echo remember me")
    listed = driver.call("list_sessions")
    assert [s.session_id for s in listed.sessions] == [sid]
    loaded = driver.call("load_session", session_id=sid, cwd="/work")
    assert loaded.session_id == sid
    replay = [n.update for n in updates if n.session_id == sid]
    assert isinstance(replay[0], UserMessageChunk)
    assert "remember me" in texts(replay)
    resumed = driver.call("resume_session", session_id=sid, cwd="/work")
    assert resumed.response.modes is not None
    driver.call("set_mode", session_id=sid, mode_id="code")
    assert any(isinstance(n.update, CurrentModeUpdate) for n in updates)
    result = driver.call(
        "set_config_option",
        SetSessionConfigOptionRequestValueId(session_id=sid, config_id="model", value="smart"),
    )
    assert result.config_options[0].current_value == "smart"
    result = driver.call(
        "set_config_option",
        SetSessionConfigOptionRequestBoolean(session_id=sid, config_id="brave", value=True),
    )
    assert result.config_options[1].current_value is True
    driver.call("authenticate", method_id="scenario-login")
    driver.call("logout")
    driver.call("close_session", session_id=sid)
    driver.call("delete_session", session_id=sid)
    assert driver.call("list_sessions").sessions == []
    driver.call("cancel", session_id=sid)  # a notification: nothing comes back


def test_agent_errors_arrive_as_request_errors(make: MakeDriver) -> None:
    driver = make()
    with pytest.raises(RequestError) as caught:
        driver.call("delete_session", session_id="nope")
    assert caught.value.code == -32002


# ------------------------------------------------------------------ scenarios


def test_echo_streams_in_order(make: MakeDriver) -> None:
    driver = make()
    updates, response = driver.prompt(driver.new_session(), "echo one two three")
    assert texts(updates) == "one two three"
    assert response.stop_reason == "end_turn"


def test_stream_delivers_every_update_before_the_turn_ends(make: MakeDriver) -> None:
    driver = make()
    updates, _ = driver.prompt(driver.new_session(), "stream 500")
    assert [u.content.text for u in updates] == [f"chunk {i} " for i in range(500)]  # type: ignore[union-attr]


def test_think_and_plan(make: MakeDriver) -> None:
    driver = make()
    session = driver.new_session()
    updates, _ = driver.prompt(session, "think deeply")
    assert isinstance(updates[0], AgentThoughtChunk)
    updates, _ = driver.prompt(session, "plan")
    assert isinstance(updates[0], Plan)
    assert len(updates[0].entries) == 3


def test_tool_call_through_completed(make: MakeDriver) -> None:
    driver = make()
    updates, _ = driver.prompt(driver.new_session(), "tool")
    assert isinstance(updates[0], ToolCall)
    assert [u.status for u in updates[1:]] == ["in_progress", "completed"]  # type: ignore[union-attr]
    last = updates[-1]
    assert isinstance(last, ToolCallProgress)
    assert last.content is not None
    assert isinstance(last.content[0], Diff)


@pytest.mark.parametrize(
    ("policy", "status", "stop"),
    [
        (AllowOnce(), "completed", "end_turn"),
        (RejectAll(), "failed", "end_turn"),
        (AskPermission(lambda _: None), "failed", "cancelled"),
    ],
    ids=["allow", "reject", "cancelled"],
)
def test_permission(make: MakeDriver, policy: ClientHandlers, status: str, stop: str) -> None:
    driver = make(handlers=[policy])
    updates, response = driver.prompt(driver.new_session(), "permission")
    assert updates[-1 if stop == "cancelled" else -2].status == status  # type: ignore[union-attr]
    assert response.stop_reason == stop


def test_fs_with_and_without_the_capability(make: MakeDriver, tmp_path: Path) -> None:
    target = tmp_path / "note.txt"
    driver = make(handlers=[LocalFileSystem(tmp_path)])
    session = driver.new_session(str(tmp_path))
    driver.prompt(session, f"write {target} hello there")
    assert target.read_text() == "hello there"
    updates, _ = driver.prompt(session, f"read {target}")
    assert texts(updates) == "hello there"
    updates, _ = driver.prompt(session, "read /etc/passwd")  # outside the root
    assert texts(updates) == "The client refused: Invalid params (-32602)."
    bare = make()
    updates, _ = bare.prompt(bare.new_session(), f"read {target}")
    assert "did not advertise" in texts(updates)


def test_fs_honours_line_and_limit(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a\nb\nc\nd\n")
    from acp_sdk.schema import ReadTextFileRequest

    fs = LocalFileSystem(tmp_path)
    assert (
        fs.read_text_file(
            ReadTextFileRequest(session_id="s", path=str(tmp_path / "f"), line=2, limit=2)
        ).content
        == "b\nc\n"
    )
    with pytest.raises(RequestError):
        fs.read_text_file(ReadTextFileRequest(session_id="s", path=str(tmp_path / ".." / "x")))


def test_terminal(make: MakeDriver) -> None:
    driver = make(handlers=[LocalTerminals()])
    updates, response = driver.prompt(
        driver.new_session(), f"terminal {sys.executable} -c print(6*7)"
    )
    assert "42" in texts(updates)
    first = updates[0]
    assert isinstance(first, ToolCall)
    assert isinstance(first.content[0], Terminal)
    assert response.stop_reason == "end_turn"


class Elicit(ClientHandlers):
    def create_elicitation(self, params: CreateElicitationRequest) -> CreateElicitationResponse:
        return CreateElicitationResponseAccept(content={"name": "Ada"})


def test_elicitation(make: MakeDriver) -> None:
    driver = make(handlers=[Elicit()])
    updates, _ = driver.prompt(driver.new_session(), "elicit")
    assert texts(updates) == "Hello, Ada!"


def test_wait_then_cancel_from_elsewhere(make: MakeDriver) -> None:
    driver = make()
    _updates, response = driver.prompt_and_cancel(driver.new_session(), "wait", after=0.3)
    assert response.stop_reason == "cancelled"


def test_fail_raises_request_error(make: MakeDriver) -> None:
    driver = make()
    with pytest.raises(RequestError) as caught:
        driver.prompt(driver.new_session(), "fail")
    assert caught.value.code == -32603


def test_large_image_prompt(make: MakeDriver) -> None:
    driver = make()
    image = ImageContent(
        data=base64.b64encode(b"\x89PNG" + b"\0" * (5 * 1024 * 1024)).decode(),
        mime_type="image/png",
    )
    updates, _response = driver.prompt(
        driver.new_session(), [TextContent(text="echo got it"), image]
    )
    assert texts(updates) == "got it"


# ------------------------------------------------------------------ misbehaving agents

SPECIAL = [sys.executable, "-m", "tests.client.agents.special"]


def test_agent_dying_mid_turn_fails_promptly(make: MakeDriver) -> None:
    driver = make([*SPECIAL, "die"])
    session = driver.new_session()
    # "Promptly" is the module's timeout: a hang fails the test instead of passing slowly.
    with pytest.raises(ConnectionClosed):
        driver.prompt(session, "anything")


def test_chatty_stderr_never_deadlocks(make: MakeDriver) -> None:
    lines: list[str] = []
    driver = make([*SPECIAL, "noisy"], stderr=lines.append)
    _, response = driver.prompt(driver.new_session(), "go")
    assert response.stop_reason == "end_turn"


def test_stray_print_goes_to_stderr(make: MakeDriver) -> None:
    lines: list[str] = []
    driver = make([*SPECIAL, "print"], stderr=lines.append)
    _updates, response = driver.prompt(driver.new_session(), "go")
    assert response.stop_reason == "end_turn"
    deadline = time.monotonic() + 5
    while not any("must not reach" in line for line in lines) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any("must not reach" in line for line in lines)


def test_capabilities_follow_handlers(make: MakeDriver) -> None:
    driver = make(handlers=[LocalFileSystem("/tmp"), LocalTerminals()])
    conn = driver.client.connection
    assert conn is not None
    ours = conn.our_capabilities
    assert isinstance(ours, ClientCapabilities)
    assert ours.fs.read_text_file is True
    assert ours.terminal is True
    assert ours.elicitation is None
    plain = make()
    assert plain.client.connection.our_capabilities.terminal is False  # type: ignore[union-attr]


def test_async_task_cancellation_sends_session_cancel() -> None:
    import asyncio

    from acp_sdk import AsyncClient
    from tests.client.facades import SCENARIO

    async def go() -> str:
        async with AsyncClient.spawn(SCENARIO) as client:
            session = await client.new_session(cwd="/tmp")
            turn = session.prompt("wait")

            async def consume() -> None:
                async for _ in turn:
                    pass

            task = asyncio.get_running_loop().create_task(consume())
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The turn goes on after its consumer was cancelled: it ends with the
            # agent's answer to the session/cancel the cancellation sent.
            response = await asyncio.wait_for(turn._finish(), 10)
            return response.stop_reason

    assert asyncio.run(go()) == "cancelled"


class CallsBack(ClientHandlers):
    """A permission handler that calls back into the client before answering."""

    def __init__(self) -> None:
        self.client: Any = None
        self.seen: list[int] = []

    def request_permission(self, params: Any) -> Any:
        listed = self.client.list_sessions()
        self.seen.append(len(listed.sessions))
        return AllowOnce().request_permission(params)


def test_handler_may_call_back_into_the_client() -> None:
    from acp_sdk import Client
    from tests.client.facades import SCENARIO

    handler = CallsBack()
    with Client.spawn(SCENARIO, handlers=[handler]) as client:
        handler.client = client
        session = client.new_session(cwd="/tmp")
        assert session.prompt("permission").wait().stop_reason == "end_turn"
    assert handler.seen == [1]


def test_a_hostile_agent_cannot_break_the_client(make: MakeDriver) -> None:
    driver = make([sys.executable, "-m", "tests.client.agents.hostile"])
    session = driver.new_session()
    for _ in range(3):
        updates, response = driver.prompt(session, "anything")
        assert texts(updates) == "survived"
        assert response.stop_reason == "end_turn"
    with pytest.raises(RequestError) as caught:
        driver.call("authenticate", method_id="x")  # the agent refuses it, after more junk
    assert caught.value.code == -32601


def test_coroutine_handlers_on_the_async_client() -> None:
    import asyncio

    from acp_sdk import AsyncClient
    from acp_sdk.handlers import AsyncClientHandlers
    from acp_sdk.schema import (
        RequestPermissionResponse,
        SelectedPermissionOutcome,
    )
    from tests.client.facades import SCENARIO

    seen: list[str] = []

    class Approve(AsyncClientHandlers):
        async def request_permission(
            self, params: RequestPermissionRequest
        ) -> RequestPermissionResponse:
            await asyncio.sleep(0)
            seen.append(params.tool_call.tool_call_id)
            return RequestPermissionResponse(outcome=SelectedPermissionOutcome(option_id="allow"))

    async def go() -> str | None:
        async with AsyncClient.spawn(SCENARIO, handlers=[Approve()]) as client:
            session = await client.new_session(cwd="/tmp")
            response = await session.prompt("permission")
            return response.stop_reason

    assert asyncio.run(go()) == "end_turn"
    assert seen == ["call_1"]


def test_a_handler_that_blocks_does_not_starve_the_connection(make: MakeDriver) -> None:
    """A permission callback stuck waiting (for a person, say) occupies one worker; the
    connection keeps reading, other sessions stream whole turns, and the blocked turn
    completes once the callback answers."""
    asked, release = threading.Event(), threading.Event()

    def ask(params: Any) -> str | None:
        asked.set()
        release.wait(30)
        return None  # cancelled

    driver = make(handlers=AskPermission(ask))
    blocked_session = driver.new_session()
    outcome: dict[str, Any] = {}
    blocked = threading.Thread(
        target=lambda: outcome.setdefault("turn", driver.prompt(blocked_session, "permission")),
        daemon=True,
    )
    blocked.start()
    assert asked.wait(10)
    updates, response = driver.prompt(driver.new_session(), "stream 50")
    assert len(updates) == 50
    assert response.stop_reason == "end_turn"
    assert blocked.is_alive()  # still waiting for the callback
    release.set()
    blocked.join(10)
    assert outcome["turn"][1].stop_reason == "cancelled"


def test_closing_the_client_kills_running_terminals(make: MakeDriver, tmp_path: Path) -> None:
    """A terminal command the agent started is still running when the client closes: its
    whole process group is killed, not left behind."""
    pidfile = tmp_path / "pid"
    command = f"sh -c 'echo $$ > {pidfile}; exec sleep 300'"
    driver = make(handlers=[LocalTerminals(), AllowOnce()])
    session = driver.new_session(cwd=str(tmp_path))
    ended: list[BaseException] = []

    def turn() -> None:
        try:
            driver.prompt(session, f"terminal {command}")
        except ConnectionClosed as error:  # the client closed mid-turn: expected
            ended.append(error)

    runner = threading.Thread(target=turn, daemon=True)
    runner.start()
    deadline = time.monotonic() + 10
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline, "the terminal command never started"
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    driver.close()
    deadline = time.monotonic() + 5
    while _alive(pid):
        assert time.monotonic() < deadline, f"terminal process {pid} survived close()"
        time.sleep(0.05)
    runner.join(10)
    assert len(ended) == 1


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


# ------------------------------------------------------------------ session state, turn helpers


def _iterate(driver: Facade, turn: Any, each: Callable[[Any], None]) -> None:
    """Iterate a turn on the driver's own facade, calling `each` per update."""
    if isinstance(driver, SyncFacade):
        for update in turn:
            each(update)
        return

    async def go() -> None:
        async for update in turn:
            each(update)

    driver.run(go)


def test_session_state_holds_exactly_the_updates_handed_out(make: MakeDriver) -> None:
    driver = make(track_state=True)
    session = driver.new_session()
    seen: list[tuple[str, str]] = []
    turn = driver.start(session, "echo alpha beta gamma")

    def each(update: Any) -> None:
        assert isinstance(update, AgentMessageChunk)
        assert isinstance(update.content, TextContent)
        seen.append((update.content.text, session.state.text))

    _iterate(driver, turn, each)
    assert len(seen) == 3
    handed_out = ""
    for chunk, text_so_far in seen:
        handed_out += chunk
        # The caller's view: every update handed out so far, and none after it.
        assert text_so_far == handed_out
    assert session.state.text == turn.text == seen[-1][1]
    assert [m.role for m in session.state.messages] == ["agent"]


def test_turn_text_tool_calls_and_the_session_state_after_a_demo_turn(make: MakeDriver) -> None:
    driver = make(handlers=AllowOnce(), track_state=True)
    session = driver.new_session()
    turn = driver.start(session, "demo")
    _iterate(driver, turn, lambda update: None)
    assert turn.stop_reason == "end_turn"
    assert turn.text.strip()
    assert turn.tool_calls  # merged views, by id
    assert all(view.status == "completed" for view in turn.tool_calls.values())
    state = session.state
    assert dict(state.tool_calls) == dict(turn.tool_calls)
    assert state.plan is not None
    assert {m.role for m in state.messages} >= {"agent", "thought"}
    assert state.text == turn.text


def test_a_prompt_timeout_cancels_the_turn(make: MakeDriver) -> None:
    """`wait` answers only a cancel: at the timeout the client sends session/cancel and the
    turn ends `cancelled`, without an error."""
    driver = make()
    session = driver.new_session()
    turn = driver.start(session, "wait", timeout=0.3)
    _iterate(driver, turn, lambda update: None)
    assert turn.stop_reason == "cancelled"


DEAF_AGENT = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    if method == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}}
    elif method == "session/new":
        result = {"sessionId": "deaf"}
    else:
        continue  # a prompt, a cancel: never answered
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n")
    sys.stdout.flush()
"""


def test_a_prompt_timeout_raises_when_the_agent_ignores_the_cancel(
    make: MakeDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp_sdk._driver import turn as turn_rules

    monkeypatch.setattr(turn_rules, "CANCEL_GRACE", 0.3)
    driver = make([sys.executable, "-c", DEAF_AGENT])
    session = driver.new_session()
    turn = driver.start(session, "anything", timeout=0.3)
    started = time.monotonic()
    with pytest.raises(RequestTimeout):
        _iterate(driver, turn, lambda update: None)
    assert time.monotonic() - started < 10 * load_factor()


def test_a_loaded_session_rebuilds_its_state_from_the_replay(make: MakeDriver) -> None:
    driver = make(track_state=True)
    session = driver.new_session()
    driver.prompt(session, "echo hello there")
    before = session.state
    assert before.text
    loaded = driver.call("load_session", session_id=session.session_id, cwd="/tmp", mcp_servers=[])
    # The replay (user prompt and agent answer) arrives before load returns; the state
    # is rebuilt from it, not doubled.
    assert loaded.state.text == before.text
    assert [m.role for m in loaded.state.messages] == ["user", "agent"]


def test_ask_permission_gets_the_merged_tool_call_and_may_be_async(make: MakeDriver) -> None:
    """The callback receives the request and the tool call it refers to, merged from the
    session's updates; on AsyncClient it may be a coroutine function."""
    asked: list[Any] = []

    def ask(request: RequestPermissionRequest, tool_call: ToolCallView) -> str | None:
        asked.append(tool_call)
        return next(o.option_id for o in request.options if o.kind == "allow_once")

    async def ask_async(request: RequestPermissionRequest, tool_call: ToolCallView) -> str | None:
        return ask(request, tool_call)

    driver = make()
    callback = ask if isinstance(driver, SyncFacade) else ask_async
    driver = make(handlers=AskPermission(callback), track_state=True)
    _updates, response = driver.prompt(driver.new_session(), "permission")
    assert response.stop_reason == "end_turn"
    [view] = asked
    assert view.title  # known from the session's tool_call update
    assert view.tool_call_id


def test_session_state_is_kept_only_when_asked(make: MakeDriver) -> None:
    """Keeping state holds a session's whole content in memory: off by default, and
    reading it then says how to turn it on."""
    driver = make()
    session = driver.new_session()
    updates, _response = driver.prompt(session, "echo hi")
    assert updates
    with pytest.raises(RuntimeError, match="track_state=True"):
        session.state  # noqa: B018
