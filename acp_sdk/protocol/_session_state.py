"""`SessionState`: what a session looks like after a stream of `session/update` notifications.

A pure reducer. `SessionState()` is the empty session; `state.apply(update)` returns the next
state and leaves `state` as it was, so states can be kept as history, compared with `==` and
handed to other threads without copying:

    state = SessionState()
    for update in session.prompt("Explain this repository"):
        state = state.apply(update)
    print(state.text)

Every value is a frozen attrs class holding tuples and read-only mappings; the protocol
objects inside (content blocks, plan entries, commands, ...) are the decoded models
themselves, unchanged.

How each update kind is folded in:

- `user_message_chunk` / `agent_message_chunk` / `agent_thought_chunk`: appended to the
  last message when it has the same role and the chunk carries no `messageId` or the
  message's own; otherwise a new `Message` starts (a role switch, or a changed
  `messageId`).
- `tool_call`: sets the entry for its id (replacing an earlier one, in its place), its
  programmatic tool `name` included.
- `tool_call_update`: changes only the fields it carries (`name` too: `null` leaves it
  as it was, as the schema says); an update for an id never seen creates the entry
  (updates may overtake their `tool_call`).
- `compaction_update`: an upsert by `compactionId` with the schema's patch semantics:
  `status` replaces; `summary`, `error`, `_meta` omitted leave the value, `null` clears
  it (`summary: []` clears it too), a value replaces it. The first update or chunk of an
  id fixes its place in the timeline (`CompactionView.position`).
- `compaction_summary_chunk`: appends its block to that compaction's summary; a first
  seen id creates an `in_progress` compaction.
- `notice`: not folded. Notices are live events, not session history (the schema: "Agents
  must not rely on a notice being received, displayed, or seen"): show them as they
  arrive (a turn's updates, `on_update`); the state stays as it was.
- `plan`: replaces the whole plan (the spec requires complete plans).
- `available_commands_update`, `current_mode_update`, `config_option_update`,
  `usage_update`: the latest value wins.
- `session_info_update`: an absent field keeps its value, an explicit `null` clears it.
- an update kind this SDK does not know: kept, in order, in `unknown_updates`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

import attrs

from acp_sdk.schema import (
    UNSET,
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandsUpdate,
    CompactionStatus,
    CompactionSummaryChunk,
    CompactionUpdate,
    ConfigOptionUpdate,
    ContentBlock,
    ContentChunk,
    CurrentModeUpdate,
    Notice,
    Plan,
    PlanEntry,
    SessionConfigOption,
    SessionInfoUpdate,
    SessionUpdate,
    TextContent,
    ToolCall,
    ToolCallContent,
    ToolCallLocation,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
    UnknownSessionUpdate,
    UsageUpdate,
    UserMessageChunk,
)

__all__ = ["CompactionView", "Message", "SessionState", "ToolCallView"]

# A union of single literals (as the generated models do): a real Union at runtime,
# which stubtest can check.
_Role: TypeAlias = Literal["user"] | Literal["agent"] | Literal["thought"]

_NO_TOOL_CALLS: Mapping[str, ToolCallView] = MappingProxyType({})
_NO_COMPACTIONS: Mapping[str, CompactionView] = MappingProxyType({})


def _text_of(blocks: Iterable[ContentBlock]) -> str:
    return "".join(block.text for block in blocks if isinstance(block, TextContent))


def _message_text(message: Message) -> str:
    return _text_of(message.content)


@attrs.frozen(kw_only=True, order=False)
class Message:
    """One message of the conversation, assembled from its streamed chunks.

    Attributes:
        role: `"user"` (`user_message_chunk`), `"agent"` (`agent_message_chunk`) or
            `"thought"` (`agent_thought_chunk`).
        message_id: The `messageId` its chunks carried, or None if they carried none.
        content: Every content block of the message, in arrival order.
        text: The text of its `TextContent` blocks, joined without a separator (derived
            from `content`; not an argument).
    """

    role: Literal["user", "agent", "thought"]
    message_id: str | None = None
    content: tuple[ContentBlock, ...] = ()
    text: str = attrs.field(init=False, default=attrs.Factory(_message_text, takes_self=True))


@attrs.frozen(kw_only=True, order=False)
class ToolCallView:
    """The current picture of one tool call: its `tool_call` with every later update applied.

    Attributes:
        tool_call_id: The tool call's id within the session.
        title: Human-readable title ("" while only updates without a title were seen).
        name: The programmatic name of the tool (`read_file`), or None if the agent has
            not said.
        kind: The tool category, or None if the agent has not said.
        status: The execution status, or None if the agent has not said.
        content: Content produced by the tool call (a present list in an update replaces it).
        locations: File locations it affects (a present list in an update replaces it).
        raw_input: The raw input parameters, any JSON value, or None.
        raw_output: The raw output, any JSON value, or None.
    """

    tool_call_id: str
    title: str = ""
    name: str | None = None
    kind: ToolKind | None = None
    status: ToolCallStatus | None = None
    content: tuple[ToolCallContent, ...] = ()
    locations: tuple[ToolCallLocation, ...] = ()
    raw_input: Any | None = None
    raw_output: Any | None = None


def _view_of(call: ToolCall) -> ToolCallView:
    return ToolCallView(
        tool_call_id=call.tool_call_id,
        title=call.title,
        name=call.name,
        kind=call.kind,
        status=call.status,
        content=tuple(call.content),
        locations=tuple(call.locations),
        raw_input=call.raw_input,
        raw_output=call.raw_output,
    )


def _updated(view: ToolCallView, update: ToolCallUpdate) -> ToolCallView:
    # The generated `ToolCallUpdate` decodes an absent field and an explicit `null` alike to
    # None, and the schema gives `null` no meaning of its own there: None keeps the value.
    # A present list (even an empty one) replaces `content` / `locations`.
    return attrs.evolve(
        view,
        title=view.title if update.title is None else update.title,
        name=view.name if update.name is None else update.name,
        kind=view.kind if update.kind is None else update.kind,
        status=view.status if update.status is None else update.status,
        content=view.content if update.content is None else tuple(update.content),
        locations=view.locations if update.locations is None else tuple(update.locations),
        raw_input=view.raw_input if update.raw_input is None else update.raw_input,
        raw_output=view.raw_output if update.raw_output is None else update.raw_output,
    )


def _summary_text(view: CompactionView) -> str:
    return _text_of(view.summary)


@attrs.frozen(kw_only=True, order=False)
class CompactionView:
    """One context compaction: its `compaction_update`s and summary chunks folded.

    Attributes:
        compaction_id: The agent's id of the compaction, unique within the session.
        status: `in_progress`, `completed`, `failed`, `cancelled` (or a value of a newer
            schema, kept as it came).
        summary: The user-displayable summary: replaced whole by an update that carries
            one, cleared by `null` or `[]`, extended by each summary chunk.
        error: Human-readable error details, or None.
        meta: The compaction's `_meta`, or None.
        position: Where the compaction sits in the conversation: the number of
            `SessionState.messages` there were when its first update arrived.
        text: The text of the summary's `TextContent` blocks (derived; not an argument).
    """

    compaction_id: str
    status: CompactionStatus = "in_progress"
    summary: tuple[ContentBlock, ...] = ()
    error: str | None = None
    meta: Mapping[str, Any] | None = None
    position: int = 0
    text: str = attrs.field(init=False, default=attrs.Factory(_summary_text, takes_self=True))


def _patched(view: CompactionView, update: CompactionUpdate) -> CompactionView:
    # Patch semantics (CompactionUpdate's description): UNSET (omitted) keeps the value,
    # None (`null`) clears it, a value replaces it.
    summary = view.summary
    if update.summary is not UNSET:
        summary = () if update.summary is None else tuple(update.summary)
    return CompactionView(
        compaction_id=view.compaction_id,
        status=update.status,
        summary=summary,
        error=view.error if update.error is UNSET else update.error,
        meta=view.meta if update.meta is UNSET else update.meta,
        position=view.position,
    )


@attrs.frozen(kw_only=True, order=False)
class SessionState:
    """The state of a session, folded from its `session/update` notifications.

    Build the empty state with `SessionState()` and feed it updates with `apply`, which
    returns the next state; a state never changes, so old states can be kept and compared.

    Attributes:
        messages: The conversation: user, agent and thought messages in arrival order.
        tool_calls: Tool calls by id, in the order they were first seen (read-only).
        compactions: Context compactions by id, in the order they were first seen
            (read-only); each knows its place among `messages`.
        plan: The latest plan's entries, or None if no plan was reported.
        available_commands: The latest slash commands, or None if never reported.
        current_mode_id: The latest current mode id, or None if never reported.
        config_options: The latest configuration options, or None if never reported.
        usage: The latest `usage_update` (context size, cost), or None.
        title: The session title from `session_info_update`, or None.
        updated_at: The ISO 8601 last-activity time from `session_info_update`, or None.
        unknown_updates: Updates of kinds this SDK does not know, in arrival order.

    Notices are not kept: they are live events, outside the session's history.
    """

    messages: tuple[Message, ...] = ()
    tool_calls: Mapping[str, ToolCallView] = _NO_TOOL_CALLS
    compactions: Mapping[str, CompactionView] = _NO_COMPACTIONS
    plan: tuple[PlanEntry, ...] | None = None
    available_commands: tuple[AvailableCommand, ...] | None = None
    current_mode_id: str | None = None
    config_options: tuple[SessionConfigOption, ...] | None = None
    usage: UsageUpdate | None = None
    title: str | None = None
    updated_at: str | None = None
    unknown_updates: tuple[UnknownSessionUpdate, ...] = ()

    @property
    def text(self) -> str:
        """All agent message text of the session (role `"agent"`), joined without a separator.

        This equals the concatenation of the text of every `agent_message_chunk`; thoughts
        and user messages are left out.
        """
        return "".join(message.text for message in self.messages if message.role == "agent")

    def tool_call(self, tool_call_id: str) -> ToolCallView | None:
        """The tool call with this id.

        Args:
            tool_call_id: The id the agent gave the tool call.

        Returns:
            Its current view, or None if no update has named it.
        """
        return self.tool_calls.get(tool_call_id)

    def compaction(self, compaction_id: str) -> CompactionView | None:
        """The compaction with this id, or None if no update has named it."""
        return self.compactions.get(compaction_id)

    def apply(self, update: SessionUpdate | ToolCallUpdate) -> SessionState:
        """Fold one update into the state (a bare `ToolCallUpdate`, such as a permission
        request's `toolCall`, folds like a `tool_call_update`).

        Never raises for a decoded update, and never changes this state.

        Args:
            update: The update (`SessionNotification.update`, or an item of a turn).

        Returns:
            The next state; this state when the update changes nothing.
        """
        if isinstance(update, AgentMessageChunk):
            return self._chunk("agent", update)
        if isinstance(update, AgentThoughtChunk):
            return self._chunk("thought", update)
        if isinstance(update, UserMessageChunk):
            return self._chunk("user", update)
        if isinstance(update, ToolCall):
            return self._set_tool_call(_view_of(update))
        if isinstance(update, ToolCallUpdate):  # `ToolCallProgress`, or a bare one
            known = self.tool_calls.get(update.tool_call_id)
            base = ToolCallView(tool_call_id=update.tool_call_id) if known is None else known
            return self._set_tool_call(_updated(base, update))
        if isinstance(update, Plan):
            return attrs.evolve(self, plan=tuple(update.entries))
        if isinstance(update, AvailableCommandsUpdate):
            return attrs.evolve(self, available_commands=tuple(update.available_commands))
        if isinstance(update, CurrentModeUpdate):
            return attrs.evolve(self, current_mode_id=update.current_mode_id)
        if isinstance(update, ConfigOptionUpdate):
            return attrs.evolve(self, config_options=tuple(update.config_options))
        if isinstance(update, SessionInfoUpdate):
            return attrs.evolve(
                self,
                title=self.title if update.title is UNSET else update.title,
                updated_at=self.updated_at if update.updated_at is UNSET else update.updated_at,
            )
        if isinstance(update, UsageUpdate):
            return attrs.evolve(self, usage=update)
        if isinstance(update, CompactionUpdate):
            return self._set_compaction(_patched(self._compaction_of(update), update))
        if isinstance(update, CompactionSummaryChunk):
            view = self._compaction_of(update)
            return self._set_compaction(attrs.evolve(view, summary=(*view.summary, update.content)))
        if isinstance(update, Notice):
            return self  # a live event, not history (see the module docstring)
        # Checked although the annotation says nothing else is left: over the unstable
        # table, the updates the unstable schema changed (its own `ToolCall`, ...) are
        # `acp_sdk.unstable` classes, which fall through; the shared ones are folded above.
        if isinstance(update, UnknownSessionUpdate):  # pyright: ignore[reportUnnecessaryIsInstance]
            return attrs.evolve(self, unknown_updates=(*self.unknown_updates, update))
        return self

    def apply_all(self, updates: Iterable[SessionUpdate | ToolCallUpdate]) -> SessionState:
        """Fold many updates: the same state as applying them one by one, but a run of
        chunks is joined into its messages once, so folding a long message costs time
        linear in its chunks instead of quadratic.

        Args:
            updates: The updates, in arrival order.

        Returns:
            The state after all of them.
        """
        state = self
        chunks: list[ContentChunk] = []
        for update in updates:
            if isinstance(update, (AgentMessageChunk, AgentThoughtChunk, UserMessageChunk)):
                chunks.append(update)
                continue
            if chunks:
                state, chunks = state._chunks(chunks), []
            state = state.apply(update)
        return state._chunks(chunks) if chunks else state

    def _chunks(self, chunks: list[ContentChunk]) -> SessionState:
        messages = list(self.messages)
        # The message being extended in this run: role, id, content (not yet frozen).
        building: tuple[_Role, str | None, list[ContentBlock]] | None = None
        for chunk in chunks:
            role = _role_of(chunk)
            if building is not None:
                last_role, last_id = building[0], building[1]
            elif messages:
                last_role, last_id = messages[-1].role, messages[-1].message_id
            else:
                last_role, last_id = None, None
            if last_role == role and (chunk.message_id is None or chunk.message_id == last_id):
                if building is None:
                    last = messages.pop()
                    building = (last.role, last.message_id, list(last.content))
                building[2].append(chunk.content)
                continue
            if building is not None:
                messages.append(_message(building))
            building = (role, chunk.message_id, [chunk.content])
        if building is not None:
            messages.append(_message(building))
        return attrs.evolve(self, messages=tuple(messages))

    def _chunk(self, role: _Role, chunk: ContentChunk) -> SessionState:
        last = self.messages[-1] if self.messages else None
        if (
            last is not None
            and last.role == role
            and (chunk.message_id is None or chunk.message_id == last.message_id)
        ):
            message = Message(
                role=role, message_id=last.message_id, content=(*last.content, chunk.content)
            )
            return attrs.evolve(self, messages=(*self.messages[:-1], message))
        message = Message(role=role, message_id=chunk.message_id, content=(chunk.content,))
        return attrs.evolve(self, messages=(*self.messages, message))

    def _compaction_of(self, update: CompactionUpdate | CompactionSummaryChunk) -> CompactionView:
        known = self.compactions.get(update.compaction_id)
        if known is not None:
            return known
        return CompactionView(compaction_id=update.compaction_id, position=len(self.messages))

    def _set_compaction(self, view: CompactionView) -> SessionState:
        compactions = dict(self.compactions)
        compactions[view.compaction_id] = view
        return attrs.evolve(self, compactions=MappingProxyType(compactions))

    def _set_tool_call(self, view: ToolCallView) -> SessionState:
        calls = dict(self.tool_calls)
        calls[view.tool_call_id] = view
        return attrs.evolve(self, tool_calls=MappingProxyType(calls))


def _role_of(chunk: ContentChunk) -> _Role:
    if isinstance(chunk, AgentMessageChunk):
        return "agent"
    if isinstance(chunk, AgentThoughtChunk):
        return "thought"
    return "user"


def _message(building: tuple[_Role, str | None, list[ContentBlock]]) -> Message:
    role, message_id, content = building
    return Message(role=role, message_id=message_id, content=tuple(content))
