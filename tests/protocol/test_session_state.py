"""`SessionState`: the pure reducer over `session/update` notifications."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acp_sdk
from acp_sdk.protocol._session_state import CompactionView, Message, SessionState, ToolCallView
from acp_sdk.schema import (
    AgentMessageChunk,
    AvailableCommand,
    ConfigOptionUpdate,
    Content,
    Cost,
    CurrentModeUpdate,
    ImageContent,
    PlanEntry,
    SessionConfigOptionBoolean,
    SessionUpdate,
    TextContent,
    ToolCallLocation,
    ToolCallUpdate,
    UnknownSessionUpdate,
    UsageUpdate,
)
from tests.schema_strategies import valid

Wire = dict[str, Any]


def decode(update: Wire) -> SessionUpdate:
    decoded: SessionUpdate = acp_sdk.decode(update, SessionUpdate)
    return decoded


def fold(updates: Sequence[Wire], state: SessionState | None = None) -> SessionState:
    state = SessionState() if state is None else state
    for update in updates:
        state = state.apply(decode(update))
    return state


def text(value: str) -> Wire:
    return {"type": "text", "text": value}


def chunk(kind: str, value: str, message_id: str | None = None) -> Wire:
    out: Wire = {"sessionUpdate": kind, "content": text(value)}
    if message_id is not None:
        out["messageId"] = message_id
    return out


def agent(value: str, message_id: str | None = None) -> Wire:
    return chunk("agent_message_chunk", value, message_id)


def thought(value: str, message_id: str | None = None) -> Wire:
    return chunk("agent_thought_chunk", value, message_id)


def user(value: str, message_id: str | None = None) -> Wire:
    return chunk("user_message_chunk", value, message_id)


def msg(role: Any, *texts: str, message_id: str | None = None) -> Message:
    return Message(
        role=role, message_id=message_id, content=tuple(TextContent(text=t) for t in texts)
    )


def tool_content(value: str) -> Wire:
    return {"type": "content", "content": text(value)}


def views(*items: ToolCallView) -> dict[str, ToolCallView]:
    return {item.tool_call_id: item for item in items}


TOOL_CALL: Wire = {
    "sessionUpdate": "tool_call",
    "toolCallId": "call_1",
    "title": "Reading file",
    "kind": "read",
    "status": "pending",
    "content": [tool_content("starting")],
    "locations": [{"path": "/a.py", "line": 3}],
    "rawInput": {"path": "/a.py"},
}
TOOL_VIEW = ToolCallView(
    tool_call_id="call_1",
    title="Reading file",
    kind="read",
    status="pending",
    content=(Content(content=TextContent(text="starting")),),
    locations=(ToolCallLocation(path="/a.py", line=3),),
    raw_input={"path": "/a.py"},
)
PLAN_1 = {
    "sessionUpdate": "plan",
    "entries": [
        {"content": "one", "priority": "high", "status": "pending"},
        {"content": "two", "priority": "low", "status": "pending"},
    ],
}
PLAN_2 = {
    "sessionUpdate": "plan",
    "entries": [{"content": "one", "priority": "high", "status": "completed"}],
}
COMMANDS = {
    "sessionUpdate": "available_commands_update",
    "availableCommands": [{"name": "web", "description": "Search the web"}],
}
CONFIG = {
    "sessionUpdate": "config_option_update",
    "configOptions": [{"id": "fast", "name": "Fast", "type": "boolean", "currentValue": True}],
}
USAGE_1 = {"sessionUpdate": "usage_update", "used": 10, "size": 100}
USAGE_2 = {
    "sessionUpdate": "usage_update",
    "used": 53000,
    "size": 200000,
    "cost": {"amount": 0.045, "currency": "USD"},
}
UNKNOWN = {"sessionUpdate": "future_thing", "x": [1, 2]}
NOTICE = {"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited"}


def compaction(compaction_id: str, status: str, **fields: Any) -> Wire:
    return {
        "sessionUpdate": "compaction_update",
        "compactionId": compaction_id,
        "status": status,
        **fields,
    }


def summary_chunk(compaction_id: str, value: str) -> Wire:
    return {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": compaction_id,
        "content": text(value),
    }


def view(
    compaction_id: str, status: str, summary: Sequence[str] = (), **fields: Any
) -> CompactionView:
    blocks = tuple(TextContent(text=s) for s in summary)
    return CompactionView(compaction_id=compaction_id, status=status, summary=blocks, **fields)


def compactions(*items: CompactionView) -> dict[str, CompactionView]:
    return {item.compaction_id: item for item in items}


# (id, updates, expected fields of the final state; every field not named must be empty)
CASES: list[tuple[str, list[Wire], dict[str, Any]]] = [
    ("empty", [], {}),
    # ---- message chunks
    ("agent chunks join", [agent("Hel"), agent("lo")], {"messages": (msg("agent", "Hel", "lo"),)}),
    ("user chunk", [user("hi")], {"messages": (msg("user", "hi"),)}),
    ("thought chunk", [thought("hmm")], {"messages": (msg("thought", "hmm"),)}),
    (
        "role switches start messages",
        [user("q"), thought("a"), thought("b"), agent("c"), thought("d")],
        {
            "messages": (
                msg("user", "q"),
                msg("thought", "a", "b"),
                msg("agent", "c"),
                msg("thought", "d"),
            )
        },
    ),
    (
        "same message id extends",
        [agent("a", "m1"), agent("b", "m1")],
        {"messages": (msg("agent", "a", "b", message_id="m1"),)},
    ),
    (
        "changed message id starts a message",
        [agent("a", "m1"), agent("b", "m2"), agent("c", "m2")],
        {
            "messages": (
                msg("agent", "a", message_id="m1"),
                msg("agent", "b", "c", message_id="m2"),
            )
        },
    ),
    (
        "absent message id continues the current message",
        [agent("a", "m1"), agent("b")],
        {"messages": (msg("agent", "a", "b", message_id="m1"),)},
    ),
    (
        "a message id after chunks without one starts a message",
        [agent("a"), agent("b", "m1")],
        {"messages": (msg("agent", "a"), msg("agent", "b", message_id="m1"))},
    ),
    (
        "same id after a role switch is a new message",
        [agent("a", "m1"), thought("t"), agent("b", "m1")],
        {
            "messages": (
                msg("agent", "a", message_id="m1"),
                msg("thought", "t"),
                msg("agent", "b", message_id="m1"),
            )
        },
    ),
    (
        "non-text content is kept, text skips it",
        [
            agent("a"),
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "image", "data": "AA==", "mimeType": "image/png"},
            },
            agent("b"),
        ],
        {
            "messages": (
                Message(
                    role="agent",
                    content=(
                        TextContent(text="a"),
                        ImageContent(data="AA==", mime_type="image/png"),
                        TextContent(text="b"),
                    ),
                ),
            )
        },
    ),
    # ---- tool calls
    ("tool_call", [TOOL_CALL], {"tool_calls": views(TOOL_VIEW)}),
    (
        "tool_call_update changes only what it carries",
        [
            TOOL_CALL,
            {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed"},
        ],
        {"tool_calls": views(attrs.evolve(TOOL_VIEW, status="completed"))},
    ),
    (
        "present lists replace, raw output set",
        [
            TOOL_CALL,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_1",
                "content": [tool_content("done")],
                "locations": [],
                "rawOutput": {"ok": True},
                "title": "Read file",
                "kind": "search",
            },
        ],
        {
            "tool_calls": views(
                attrs.evolve(
                    TOOL_VIEW,
                    title="Read file",
                    kind="search",
                    content=(Content(content=TextContent(text="done")),),
                    locations=(),
                    raw_output={"ok": True},
                )
            )
        },
    ),
    (
        "explicit nulls in tool_call_update keep (the model cannot tell them from absent)",
        [
            TOOL_CALL,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_1",
                "title": None,
                "status": None,
                "content": None,
                "rawInput": None,
            },
        ],
        {"tool_calls": views(TOOL_VIEW)},
    ),
    (
        "update for an unknown id creates the entry",
        [{"sessionUpdate": "tool_call_update", "toolCallId": "x", "status": "in_progress"}],
        {"tool_calls": views(ToolCallView(tool_call_id="x", status="in_progress"))},
    ),
    (
        "out of order: update before its tool_call, which then replaces it",
        [
            {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "failed"},
            TOOL_CALL,
        ],
        {"tool_calls": views(TOOL_VIEW)},
    ),
    (
        "tool_call again replaces, keeping its place",
        [
            TOOL_CALL,
            {"sessionUpdate": "tool_call", "toolCallId": "call_2", "title": "Two"},
            {**TOOL_CALL, "title": "Again", "status": "in_progress", "content": []},
        ],
        {
            "tool_calls": views(
                ToolCallView(
                    tool_call_id="call_1",
                    title="Again",
                    kind="read",
                    status="in_progress",
                    locations=TOOL_VIEW.locations,
                    raw_input={"path": "/a.py"},
                ),
                ToolCallView(tool_call_id="call_2", title="Two"),
            )
        },
    ),
    # ---- plan, commands, mode, config, usage
    (
        "plan",
        [PLAN_1],
        {
            "plan": (
                PlanEntry(content="one", priority="high", status="pending"),
                PlanEntry(content="two", priority="low", status="pending"),
            )
        },
    ),
    (
        "plan replaced whole",
        [PLAN_1, PLAN_2],
        {"plan": (PlanEntry(content="one", priority="high", status="completed"),)},
    ),
    ("empty plan", [PLAN_1, {"sessionUpdate": "plan", "entries": []}], {"plan": ()}),
    (
        "available commands",
        [COMMANDS],
        {"available_commands": (AvailableCommand(name="web", description="Search the web"),)},
    ),
    (
        "available commands replaced",
        [COMMANDS, {"sessionUpdate": "available_commands_update", "availableCommands": []}],
        {"available_commands": ()},
    ),
    (
        "current mode, latest wins",
        [
            {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
            {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
        ],
        {"current_mode_id": "code"},
    ),
    (
        "config options",
        [CONFIG],
        {
            "config_options": (
                SessionConfigOptionBoolean(id="fast", name="Fast", current_value=True),
            )
        },
    ),
    (
        "usage, latest wins",
        [USAGE_1, USAGE_2],
        {"usage": UsageUpdate(used=53000, size=200000, cost=Cost(amount=0.045, currency="USD"))},
    ),
    # ---- session info: absent keeps, explicit null clears
    (
        "session info sets",
        [{"sessionUpdate": "session_info_update", "title": "T", "updatedAt": "2025-01-01"}],
        {"title": "T", "updated_at": "2025-01-01"},
    ),
    (
        "session info: absent keeps",
        [
            {"sessionUpdate": "session_info_update", "title": "T", "updatedAt": "2025-01-01"},
            {"sessionUpdate": "session_info_update", "title": "U"},
            {"sessionUpdate": "session_info_update"},
        ],
        {"title": "U", "updated_at": "2025-01-01"},
    ),
    (
        "session info: explicit null clears",
        [
            {"sessionUpdate": "session_info_update", "title": "T", "updatedAt": "2025-01-01"},
            {"sessionUpdate": "session_info_update", "title": None},
        ],
        {"updated_at": "2025-01-01"},
    ),
    (
        "session info: both cleared",
        [
            {"sessionUpdate": "session_info_update", "title": "T", "updatedAt": "2025-01-01"},
            {"sessionUpdate": "session_info_update", "title": None, "updatedAt": None},
        ],
        {},
    ),
    # ---- tool names
    (
        "a tool call keeps its name; an update's name replaces it, null keeps it",
        [
            {**TOOL_CALL, "name": "read_file"},
            {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "name": None},
        ],
        {"tool_calls": views(attrs.evolve(TOOL_VIEW, name="read_file"))},
    ),
    (
        "an update names a tool call",
        [TOOL_CALL, {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "name": "grep"}],
        {"tool_calls": views(attrs.evolve(TOOL_VIEW, name="grep"))},
    ),
    # ---- compactions: upserts by id, patch semantics
    (
        "a compaction update creates its entry where the conversation is",
        [user("q"), agent("a"), compaction("c1", "in_progress")],
        {
            "messages": (msg("user", "q"), msg("agent", "a")),
            "compactions": compactions(CompactionView(compaction_id="c1", position=2)),
        },
    ),
    (
        "omitted fields keep their values, status replaces",
        [
            compaction("c1", "in_progress", summary=[text("s")], error="e", _meta={"k": 1}),
            compaction("c1", "completed"),
        ],
        {"compactions": compactions(view("c1", "completed", ["s"], error="e", meta={"k": 1}))},
    ),
    (
        "null clears summary, error and _meta",
        [
            compaction("c1", "in_progress", summary=[text("s")], error="e", _meta={"k": 1}),
            compaction("c1", "failed", summary=None, error=None, _meta=None),
        ],
        {"compactions": compactions(view("c1", "failed"))},
    ),
    (
        "an empty summary clears it; a summary replaces it whole",
        [
            compaction("c1", "in_progress", summary=[text("a"), text("b")]),
            compaction("c1", "in_progress", summary=[]),
            compaction("c2", "in_progress", summary=[text("a")]),
            compaction("c2", "completed", summary=[text("z")]),
        ],
        {"compactions": compactions(view("c1", "in_progress"), view("c2", "completed", ["z"]))},
    ),
    (
        "summary chunks append; a first-seen id starts an in-progress compaction",
        [
            agent("a"),
            summary_chunk("c1", "Sum"),
            agent("b"),
            summary_chunk("c1", "mary"),
            compaction("c1", "completed"),
        ],
        {
            "messages": (msg("agent", "a", "b"),),
            "compactions": compactions(view("c1", "completed", ["Sum", "mary"], position=1)),
        },
    ),
    (
        "a compaction status of a newer schema is kept",
        [compaction("c1", "_vendor.paused")],
        {"compactions": compactions(view("c1", "_vendor.paused"))},
    ),
    # ---- notices: live events, not history
    (
        "notices are not folded",
        [agent("a"), NOTICE, {**NOTICE, "severity": "error", "description": "d"}],
        {"messages": (msg("agent", "a"),)},
    ),
    # ---- unknown kinds
    (
        "unknown kinds kept in order",
        [UNKNOWN, agent("a"), {"sessionUpdate": "other"}],
        {
            "unknown_updates": (
                UnknownSessionUpdate(raw=UNKNOWN),
                UnknownSessionUpdate(raw={"sessionUpdate": "other"}),
            ),
            "messages": (msg("agent", "a"),),
        },
    ),
]


@pytest.mark.parametrize(("updates", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fold(updates: list[Wire], expected: dict[str, Any]) -> None:
    state = fold(updates)
    assert state == SessionState(**expected)
    # insertion order is part of the value (mapping == ignores it)
    assert list(state.tool_calls) == list(expected.get("tool_calls", {}))
    assert list(state.compactions) == list(expected.get("compactions", {}))


def test_compaction_text_and_lookup() -> None:
    state = fold([summary_chunk("c1", "Sum"), summary_chunk("c1", "mary")])
    found = state.compaction("c1")
    assert found is not None
    assert found.text == "Summary"
    assert found.status == "in_progress"
    assert state.compaction("nope") is None


def test_a_notice_leaves_the_state_as_it_was() -> None:
    state = fold([agent("a"), TOOL_CALL])
    assert state.apply(decode(NOTICE)) is state


def test_every_update_kind_is_covered() -> None:
    kinds = {getattr(decode(u), "TAG", "unknown") for _, updates, _ in CASES for u in updates}
    arms = SessionUpdate.__args__
    assert kinds == {getattr(arm, "TAG", "unknown") for arm in arms}


def test_message_text_and_session_text() -> None:
    state = fold([user("q"), agent("Hello, "), thought("hm"), agent("world", "m2"), agent("!")])
    assert [m.text for m in state.messages] == ["q", "Hello, ", "hm", "world!"]
    assert state.text == "Hello, world!"
    assert SessionState().text == ""
    assert Message(role="agent").text == ""


def test_message_text_is_derived() -> None:
    with pytest.raises(TypeError):
        Message(role="agent", text="x")  # type: ignore[call-arg]


def test_tool_call_lookup() -> None:
    state = fold([TOOL_CALL])
    assert state.tool_call("call_1") == TOOL_VIEW
    assert state.tool_call("nope") is None


def test_apply_never_mutates_and_returns_new_states() -> None:
    history = [SessionState()]
    updates = [
        user("q"),
        agent("a", "m1"),
        agent("b", "m1"),
        TOOL_CALL,
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed"},
        PLAN_1,
        PLAN_2,
        COMMANDS,
        CONFIG,
        USAGE_1,
        {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
        {"sessionUpdate": "session_info_update", "title": "T"},
        UNKNOWN,
    ]
    snapshots = [repr(history[0])]
    for update in updates:
        before = history[-1]
        after = before.apply(decode(update))
        assert after is not before
        assert after != before
        history.append(after)
        snapshots.append(repr(after))
    # no earlier state changed while later ones were built
    assert [repr(state) for state in history] == snapshots
    assert history[0] == SessionState()


def test_values_are_immutable() -> None:
    state = fold([agent("a"), TOOL_CALL])
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        state.title = "x"  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        state.messages[0].role = "user"  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        state.tool_calls["call_1"].title = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        state.tool_calls["new"] = TOOL_VIEW  # type: ignore[index]
    assert state.tool_calls == dict(state.tool_calls)
    assert not hasattr(state, "__dict__")  # slotted
    assert not hasattr(state.messages[0], "__dict__")
    assert not hasattr(TOOL_VIEW, "__dict__")


def test_constructed_states_compare_with_folded() -> None:
    folded = fold([agent("a"), {"sessionUpdate": "current_mode_update", "currentModeId": "m"}])
    built = SessionState(messages=(msg("agent", "a"),), current_mode_id="m")
    assert folded == built
    assert folded != attrs.evolve(built, current_mode_id="n")


def test_apply_accepts_models_built_in_code() -> None:
    state = SessionState().apply(AgentMessageChunk(content=TextContent(text="x")))
    state = state.apply(CurrentModeUpdate(current_mode_id="ask")).apply(
        ConfigOptionUpdate(config_options=[])
    )
    assert state.text == "x"
    assert state.current_mode_id == "ask"
    assert state.config_options == ()


# ------------------------------------------------------------------------- property

_IDS = st.sampled_from(["a", "b", "c"])


@st.composite
def wire_updates(draw: Callable[..., Any]) -> Wire:
    """A schema-valid update, its ids drawn from a small set so updates meet, or an update
    of a kind this SDK does not know."""
    if draw(st.integers(0, 9)) == 0:
        tag = draw(st.text(min_size=1, max_size=6).filter(lambda t: not t.islower()))
        return {"sessionUpdate": tag, "n": draw(st.integers())}
    value: Wire = dict(draw(valid("SessionUpdate")))
    if "toolCallId" in value:
        value["toolCallId"] = draw(_IDS)
    if "messageId" in value and value["messageId"] is not None:
        value["messageId"] = draw(_IDS)
    return value


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(updates=st.lists(wire_updates(), max_size=12))
def test_folding_decoded_updates_never_raises(updates: list[Wire]) -> None:
    decoded = [decode(u) for u in updates]
    states = [SessionState()]
    for update in decoded:
        states.append(states[-1].apply(update))
    final = states[-1]

    # the reducer is deterministic, and every intermediate state survives unchanged
    again = [SessionState()]
    for update in decoded:
        again.append(again[-1].apply(update))
    assert again == states

    assert final.text == "".join(
        u.content.text
        for u in decoded
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    )
    assert final.unknown_updates == tuple(u for u in decoded if isinstance(u, UnknownSessionUpdate))
    seen = dict.fromkeys(u.tool_call_id for u in decoded if hasattr(u, "tool_call_id"))
    assert list(final.tool_calls) == list(seen)
    chunks = sum(1 for u in decoded if hasattr(u, "message_id"))
    assert sum(len(m.content) for m in final.messages) == chunks

    # apply_all (what a live client uses) reaches the same state, in any split
    assert SessionState().apply_all(decoded) == final
    half = len(decoded) // 2
    assert SessionState().apply_all(decoded[:half]).apply_all(decoded[half:]) == final


def test_a_bare_tool_call_update_folds_like_tool_call_progress() -> None:
    # e.g. the `toolCall` of a `session/request_permission`, folded in by a client
    bare = ToolCallUpdate(tool_call_id="call_1", status="failed")
    state = fold([TOOL_CALL]).apply(bare)
    assert state.tool_calls == views(attrs.evolve(TOOL_VIEW, status="failed"))
