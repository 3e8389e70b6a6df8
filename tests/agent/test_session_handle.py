"""The agent-side session handle (`ctx.session(...)`), seen from a client: over real stdio
(the agent in a subprocess) and in-process, through `Client` and `AsyncClient`."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from acp_sdk import RequestError
from acp_sdk.handlers import AskPermission, ClientHandlers, RejectAll
from acp_sdk.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Content,
    CurrentModeUpdate,
    Diff,
    Plan,
    PlanEntry,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    SessionUpdate,
    Terminal,
    TextContent,
    ToolCall,
    ToolCallLocation,
    ToolCallProgress,
)
from tests.agent.clients import WAYS, Outcome, connected
from tests.agent.toolkit_agent import ToolkitAgent

pytestmark = pytest.mark.timeout(60)
MODULE = "tests.agent.toolkit_agent"


@pytest.fixture(params=WAYS)
def way(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def open_way(way: str, **options: Any) -> Any:
    return connected(way, ToolkitAgent, MODULE, **options)


def statuses(outcome: Outcome) -> list[str | None]:
    """The status of each tool-call update of a turn, in order."""
    return [u.status for u in outcome.updates if isinstance(u, (ToolCall, ToolCallProgress))]


def said(outcome: Outcome) -> list[str]:
    return [
        u.content.text
        for u in outcome.updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    ]


def test_say_think_plan(way: str) -> None:
    with open_way(way) as client:
        session = client.new_session()
        [message] = client.prompt(session, "say hello there").updates
        [thought] = client.prompt(session, "think hmm").updates
        [plan] = client.prompt(session, "plan").updates
        [mode] = client.prompt(session, "mode code").updates
    assert mode == CurrentModeUpdate(current_mode_id="code")
    assert message == AgentMessageChunk(content=TextContent(text="hello there"))
    assert thought == AgentThoughtChunk(content=TextContent(text="hmm"))
    assert plan == Plan(
        entries=[
            PlanEntry(content="Read the code", priority="medium", status="pending"),
            PlanEntry(content="Write the fix", priority="medium", status="in_progress"),
            PlanEntry(content="Run the tests", priority="high", status="completed"),
            PlanEntry(content="Ship it", priority="low", status="pending"),
        ]
    )


def test_leaving_the_block_normally_completes_the_tool_call(way: str) -> None:
    with open_way(way) as client:
        outcome = client.prompt(client.new_session(), "complete")
    start, end = outcome.updates
    assert isinstance(start, ToolCall)
    assert start.tool_call_id.startswith("call_")
    assert (start.title, start.kind, start.status) == ("Read config", "read", "pending")
    assert start.locations == [ToolCallLocation(path="/p/config.json")]
    assert end == ToolCallProgress(tool_call_id=start.tool_call_id, status="completed")
    assert outcome.stop_reason == "end_turn"


def test_a_final_status_sent_by_hand_is_not_repeated(way: str) -> None:
    with open_way(way) as client:
        outcome = client.prompt(client.new_session(), "explicit")
    start, progress, done = outcome.updates
    assert isinstance(start, ToolCall)
    assert start.tool_call_id == "mine"
    assert progress == ToolCallProgress(
        tool_call_id="mine",
        status="in_progress",
        content=[Content(content=TextContent(text="working")), Terminal(terminal_id="t-1")],
    )
    assert done == ToolCallProgress(
        tool_call_id="mine",
        status="completed",
        content=[Diff(path="/p/a.py", old_text="x", new_text="y")],
        raw_output={"ok": True},
    )


def test_a_block_that_raises_fails_the_tool_call_and_the_error_propagates(way: str) -> None:
    with open_way(way) as client:
        session = client.new_session()
        outcome = client.prompt(session, "raise")
        after = client.prompt(session, "say still here")  # the session goes on
    assert statuses(outcome) == ["pending", "failed"]
    assert isinstance(outcome.error, RequestError)
    assert outcome.error.code == -32603  # the ValueError reached the runtime
    assert "boom" not in str(outcome.error) + repr(outcome.updates)  # its text is not sent
    assert said(after) == ["still here"]


def test_a_cancelled_turn_fails_its_open_tool_call_before_answering(way: str) -> None:
    with open_way(way) as client:
        outcome = client.prompt(
            client.new_session(), "hang", cancel_when=lambda u: isinstance(u, ToolCall)
        )
    assert statuses(outcome) == ["in_progress", "failed"]
    assert outcome.stop_reason == "cancelled"
    assert outcome.error is None


class Answers:
    """A permission policy answering with option ids in turn (None: cancelled), counting
    the questions it was asked (thread-safe: the clients ask from worker threads)."""

    def __init__(self, *choices: str | None) -> None:
        self._choices = list(choices)
        self.asked: list[RequestPermissionRequest] = []
        self._lock = threading.Lock()

    def __call__(self, request: RequestPermissionRequest) -> str | None:
        with self._lock:
            self.asked.append(request)
            return self._choices.pop(0)


def test_the_default_options_and_what_the_question_carries(way: str) -> None:
    answers = Answers("allow_once")
    with open_way(way, handlers=[AskPermission(answers)]) as client:
        outcome = client.prompt(client.new_session(), "ask edit")
    [question] = answers.asked
    assert [(o.option_id, o.kind) for o in question.options] == [
        ("allow_once", "allow_once"),
        ("allow_always", "allow_always"),
        ("reject_once", "reject_once"),
    ]
    start = outcome.updates[0]
    assert isinstance(start, ToolCall)
    assert question.tool_call.tool_call_id == start.tool_call_id
    assert (question.tool_call.title, question.tool_call.kind) == ("Do edit", "edit")
    assert said(outcome) == ["allow_once"]
    assert statuses(outcome) == ["pending", "completed"]


def test_allow_always_is_remembered_across_calls_not_across_sessions(way: str) -> None:
    answers = Answers("allow_always", "allow_once", "allow_once")
    with open_way(way, handlers=[AskPermission(answers)]) as client:
        first = client.new_session()
        outcomes = client.prompts(first, ["ask edit", "ask edit", "ask delete"])
        again = client.prompt(client.new_session(), "ask edit")
    assert [said(o) for o in outcomes] == [["allow_always"], ["allow_always"], ["allow_once"]]
    # The second edit was allowed from memory; the delete (another key) was asked.
    assert [q.tool_call.kind for q in answers.asked] == ["edit", "delete", "edit"]
    assert [q.session_id for q in answers.asked][-1] != first.session_id  # a new session asks
    assert said(again) == ["allow_once"]
    assert all(statuses(o) == ["pending", "completed"] for o in [*outcomes, again])


def test_closing_a_session_forgets_its_remembered_answers(way: str) -> None:
    """`session/close` frees the session's remembered permission answers: the runtime
    keeps them per session, so without this they would grow for the connection's life."""
    answers = Answers("allow_always", "allow_once")
    with open_way(way, handlers=[AskPermission(answers)]) as client:
        session = client.new_session()
        first = client.prompt(session, "ask edit")
        client.close_session(session)
        again = client.prompt(session, "ask edit")  # this agent lets it go on
    assert [said(o) for o in (first, again)] == [["allow_always"], ["allow_once"]]
    assert len(answers.asked) == 2  # asked again after the close


def test_reject_always_is_remembered_and_fails_the_tool_calls(way: str) -> None:
    answers = Answers("reject_always")
    with open_way(way, handlers=[AskPermission(answers)]) as client:
        session = client.new_session()
        outcomes = client.prompts(session, ["ask delete all", "ask delete all"])
    assert len(answers.asked) == 1
    assert "reject_always" in [o.kind for o in answers.asked[0].options]
    assert [said(o) for o in outcomes] == [["reject_always"], ["reject_always"]]
    assert all(statuses(o) == ["pending", "failed"] for o in outcomes)


def test_a_permission_key_shared_by_two_kinds(way: str) -> None:
    answers = Answers("allow_always")
    with open_way(way, handlers=[AskPermission(answers)]) as client:
        outcomes = client.prompts(client.new_session(), ["keyed edit", "keyed delete"])
    assert len(answers.asked) == 1  # the delete was allowed by the edit's answer
    assert [said(o) for o in outcomes] == [["allow_always"], ["allow_always"]]


class ChoosesBogus(ClientHandlers):
    """A broken client: it picks an option that was not offered."""

    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=SelectedPermissionOutcome(option_id="bogus"))


def test_an_option_that_was_not_offered_fails_the_tool_call(way: str) -> None:
    with open_way(way, handlers=[ChoosesBogus()]) as client:
        outcome = client.prompt(client.new_session(), "ask edit")
    assert statuses(outcome) == ["pending", "failed"]
    assert isinstance(outcome.error, RequestError)  # RemoteProtocolError in the agent


def test_a_rejected_question_fails_the_tool_call(way: str) -> None:
    with open_way(way, handlers=[RejectAll()]) as client:
        outcome = client.prompt(client.new_session(), "ask execute")
    assert said(outcome) == ["reject_once"]
    assert statuses(outcome) == ["pending", "failed"]
    assert outcome.stop_reason == "end_turn"


def test_a_question_answered_cancelled_returns_none_and_fails_the_tool_call(way: str) -> None:
    with open_way(way, handlers=[AskPermission(Answers(None))]) as client:
        outcome = client.prompt(client.new_session(), "ask edit")
    assert said(outcome) == []
    assert statuses(outcome) == ["pending", "failed"]
    assert outcome.stop_reason == "cancelled"


class Blocking:
    """A permission callback that waits (in a client worker thread) until released."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: RequestPermissionRequest) -> str | None:
        self.asked.set()
        self.release.wait(30)
        return None


def test_cancelling_the_turn_while_the_question_is_open(way: str) -> None:
    blocking = Blocking()

    def cancel_once_asked(update: SessionUpdate) -> bool:
        return isinstance(update, ToolCall) and blocking.asked.wait(20)

    try:
        with open_way(way, handlers=[AskPermission(blocking)]) as client:
            outcome = client.prompt(client.new_session(), "ask edit", cancel_when=cancel_once_asked)
            blocking.release.set()
    finally:
        blocking.release.set()
    assert statuses(outcome) == ["pending", "failed"]
    assert outcome.stop_reason == "cancelled"
