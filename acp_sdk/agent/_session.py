"""The agent author's toolkit: a session handle and tool calls that always finish.

    s = ctx.session(params.session_id)
    await s.think("The user wants a rename.")
    await s.plan(["Find the variable", ("Rename it", "in_progress")])
    async with s.tool_call("Rename x", kind="edit") as call:
        if await call.request_permission() is None:
            return PromptResponse(stop_reason="cancelled")
        await call.complete(diff("/app.py", old="x = 1", new="total = 1"))
    await s.say("Renamed x to total.")

Theory of operation. Everything is sent with `AgentContext.send_update`, the one path
every update takes (so whatever watches that path, such as a session store, sees the
handle's updates too). The rules:

1. A tool call opened with `async with s.tool_call(...)` has a final status (`completed`
   or `failed`) once its block is left, unless one was already sent: leaving normally
   completes it; leaving on an exception fails it and the exception propagates; leaving
   after its permission question was rejected or cancelled fails it.
2. Turn cancellation (`session/cancel`) cancels the prompt task, so `CancelledError`
   leaves the block: it fails the tool call, and that `failed` update is written before
   the turn's `cancelled` answer. The spec asks clients to mark a cancelled turn's
   unfinished tool calls themselves, and has no `cancelled` tool-call status; the agent
   may still send tool-call updates before it answers. Sending `failed` makes the call
   end for every client, also those that do not mark it.
3. An exception's text is never sent (it may hold paths or secrets): say why with
   `call.fail("...")` before raising.
4. An `allow_always` or `reject_always` answer is remembered per session (in the
   `AgentContext`, so for as long as the connection lives), under a permission key that
   defaults to the tool call's kind; the next question with that key in that session is
   answered from memory, without asking. Another session asks again.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from acp_sdk.protocol._errors import ConnectionClosed, RemoteProtocolError
from acp_sdk.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AudioContent,
    Content,
    ContentBlock,
    Diff,
    EmbeddedResource,
    ImageContent,
    PermissionOption,
    Plan,
    PlanEntry,
    PlanEntryPriority,
    PlanEntryStatus,
    ResourceLink,
    SelectedPermissionOutcome,
    SessionUpdate,
    Terminal,
    TextContent,
    ToolCall,
    ToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
)

if TYPE_CHECKING:
    from acp_sdk.agent._runtime import AgentContext
    from acp_sdk.protocol._session_state import SessionState

__all__ = [
    "DEFAULT_PERMISSION_OPTIONS",
    "LocationLike",
    "PlanItem",
    "SessionHandle",
    "ToolCallHandle",
    "ToolContentLike",
    "diff",
    "terminal",
]

PlanItem: TypeAlias = (
    PlanEntry | str | tuple[str, PlanEntryStatus] | tuple[str, PlanEntryStatus, PlanEntryPriority]
)
"""A plan entry, or a short form of one: `"Run the tests"` (pending, medium priority),
`("Run the tests", "in_progress")` or `("Run the tests", "completed", "high")`."""

ToolContentLike: TypeAlias = ToolCallContent | ContentBlock | str
"""What a tool call may carry: a `Content`, `Diff` or `Terminal` as the schema has them,
a content block (wrapped in `Content`), or a string (wrapped as text)."""

LocationLike: TypeAlias = ToolCallLocation | str | tuple[str, int]
"""A location a tool call works on: `"/abs/path"`, `("/abs/path", line)`, or the model."""

DEFAULT_PERMISSION_OPTIONS: Final[tuple[PermissionOption, ...]] = (
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Allow always", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
)
"""What `ToolCallHandle.request_permission()` offers when given no options."""

_FINAL: Final = frozenset({"completed", "failed"})
_BLOCKS: Final = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


def diff(path: str, *, new: str, old: str | None = None) -> Diff:
    """A file edit to show in a tool call: `diff("/abs/app.py", old="x", new="y")`.

    `old=None` (the default) is a new file."""
    return Diff(path=path, old_text=old, new_text=new)


def terminal(terminal_id: str) -> Terminal:
    """A terminal (from `ctx.create_terminal`) whose live output the tool call shows."""
    return Terminal(terminal_id=terminal_id)


def _content(item: ToolContentLike) -> ToolCallContent:
    if isinstance(item, str):
        return Content(content=TextContent(text=item))
    if isinstance(item, _BLOCKS):
        return Content(content=item)
    return item


def _contents(items: Iterable[ToolContentLike] | None) -> list[ToolCallContent] | None:
    return None if items is None else [_content(item) for item in items]


def _location(item: LocationLike) -> ToolCallLocation:
    if isinstance(item, str):
        return ToolCallLocation(path=item)
    if isinstance(item, tuple):
        return ToolCallLocation(path=item[0], line=item[1])
    return item


def _locations(items: Iterable[LocationLike] | None) -> list[ToolCallLocation] | None:
    return None if items is None else [_location(item) for item in items]


def _plan_entry(item: PlanItem) -> PlanEntry:
    if isinstance(item, str):
        return PlanEntry(content=item, priority="medium", status="pending")
    if isinstance(item, tuple):
        priority: PlanEntryPriority = item[2] if len(item) == 3 else "medium"
        return PlanEntry(content=item[0], priority=priority, status=item[1])
    return item


def _block(text: str | ContentBlock) -> ContentBlock:
    return TextContent(text=text) if isinstance(text, str) else text


class SessionHandle:
    """One session, seen from the agent: stream to it, open tool calls in it.

    Get one with `ctx.session(session_id)`; it is cheap, and every handle on the same
    session of one connection shares what the session remembers (permission answers).
    Every update it sends, its tool calls' included, goes through `send`: a subclass
    that overrides `send` sees them all (to record a history, say).
    """

    __slots__ = ("_ctx", "_remembered", "session_id")

    def __init__(self, ctx: AgentContext, session_id: str) -> None:
        self._ctx = ctx
        self._remembered = ctx._remembered.setdefault(session_id, {})
        self.session_id: Final = session_id

    @property
    def context(self) -> AgentContext:
        """The connection's context (typed calls to the client: files, terminals, ...)."""
        return self._ctx

    async def send(self, update: SessionUpdate) -> None:
        """Send any `session/update` to this session (see `AgentContext.send_update`)."""
        await self._ctx.send_update(self.session_id, update)

    async def say(self, text: str | ContentBlock) -> None:
        """Stream a chunk of the agent's message (`agent_message_chunk`)."""
        await self.send(AgentMessageChunk(content=_block(text)))

    async def think(self, text: str | ContentBlock) -> None:
        """Stream a chunk of the agent's reasoning (`agent_thought_chunk`)."""
        await self.send(AgentThoughtChunk(content=_block(text)))

    async def plan(self, entries: Iterable[PlanItem]) -> None:
        """Send the whole plan (`plan`); the client replaces the plan it shows.

        Args:
            entries: `PlanEntry` models or short forms (see `PlanItem`): `"step"`,
                `("step", "in_progress")`, `("step", "completed", "high")`.
        """
        await self.send(Plan(entries=[_plan_entry(entry) for entry in entries]))

    async def history(self) -> SessionState:
        """The session as the store recorded it, folded into a `SessionState` (messages
        with roles, merged tool calls, plan, mode): what the agent rebuilds its model's
        context from after `session/load` or `session/resume`.

        Raises:
            RuntimeError: The agent runs without a store (`run_agent(agent, store=...)`).
        """
        return await self._ctx.history(self.session_id)

    async def load_data(self) -> Any:
        """The JSON value last saved for this session with `save_data`, or None.

        Raises:
            RuntimeError: The agent runs without a store.
        """
        return await self._ctx.load_data(self.session_id)

    async def save_data(self, value: Any) -> None:
        """Keep one JSON value for this session in the store (the agent's own
        conversation format, model settings), replacing the last; deleted with the session.

        Raises:
            RuntimeError: The agent runs without a store.
        """
        await self._ctx.save_data(self.session_id, value)

    def tool_call(
        self,
        title: str,
        *,
        kind: ToolKind | None = None,
        status: ToolCallStatus = "pending",
        content: Iterable[ToolContentLike] | None = None,
        locations: Iterable[LocationLike] | None = None,
        raw_input: Any | None = None,
        tool_call_id: str | None = None,
        permission_key: str | None = None,
    ) -> ToolCallHandle:
        """A tool call, announced on `async with` and finished when the block is left.

            async with s.tool_call("Read config", kind="read", locations=[path]) as call:
                text = await read(path)
                await call.complete(text)

        Leaving the block normally sends `completed` (unless a final status was sent, or
        the permission question was rejected or cancelled: then `failed`); an exception,
        the turn's cancellation included, sends `failed` and propagates.

        Args:
            title: What the user sees.
            kind: The tool's kind (icons, and the default permission key).
            status: The status announced (`pending` until it runs, by default).
            content: What it shows (strings, content blocks, `diff(...)`, `terminal(...)`).
            locations: The files it works on (`"/abs/path"` or `("/abs/path", line)`).
            raw_input: The tool's raw input, for clients that show it.
            tool_call_id: The id to use (default: a new unique one).
            permission_key: Under what remembered permission answers are kept (default:
                `kind`, else `"other"`).
        """
        collections: dict[str, Any] = {}  # absent unless given, as on the wire
        if content is not None:
            collections["content"] = _contents(content)
        if locations is not None:
            collections["locations"] = _locations(locations)
        announce = ToolCall(
            tool_call_id=tool_call_id or f"call_{os.urandom(8).hex()}",
            title=title,
            kind=kind,
            status=status,
            raw_input=raw_input,
            **collections,
        )
        return ToolCallHandle(self, announce, permission_key or kind or "other")

    def forget_permissions(self) -> None:
        """Forget this session's remembered `allow_always`/`reject_always` answers."""
        self._remembered.clear()


class ToolCallHandle:
    """A tool call opened with `SessionHandle.tool_call`: update it, finish it, ask about it.

    Use it as `async with ... as call:` (the `tool_call` update is sent on entry).
    """

    __slots__ = ("_announce", "_declined", "_key", "_session", "_status", "_title")

    def __init__(self, session: SessionHandle, announce: ToolCall, key: str) -> None:
        self._session = session
        self._announce = announce
        self._key = key
        self._status: ToolCallStatus | None = None
        self._title = announce.title
        self._declined = False

    @property
    def tool_call_id(self) -> str:
        """The tool call's id (given to `tool_call`, or a new unique one)."""
        return self._announce.tool_call_id

    @property
    def status(self) -> ToolCallStatus | None:
        """The last status sent (None before the block is entered)."""
        return self._status

    @property
    def finished(self) -> bool:
        """Whether a final status (`completed` or `failed`) was sent."""
        return self._status in _FINAL

    async def __aenter__(self) -> ToolCallHandle:
        await self._session.send(self._announce)
        self._status = self._announce.status or "pending"
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.finished or self._status is None:
            return
        failed = error is not None or self._declined
        try:
            try:
                await self.update(status="failed" if failed else "completed")
            except asyncio.CancelledError:
                # The turn was cancelled while this final status waited to be sent (the
                # client or the store lagging): the call still ends, as `failed`. The
                # cancellation was delivered once; this send waits as any other.
                if not self.finished:
                    await self.update(status="failed")
                raise
        except ConnectionClosed:
            if error is None:
                raise
            # The client is gone: the exception already leaving is the one to see.

    async def update(
        self,
        *,
        status: ToolCallStatus | None = None,
        title: str | None = None,
        kind: ToolKind | None = None,
        content: Iterable[ToolContentLike] | None = None,
        locations: Iterable[LocationLike] | None = None,
        raw_input: Any | None = None,
        raw_output: Any | None = None,
    ) -> None:
        """Send a `tool_call_update` with the fields given (None: unchanged).

        `content` and `locations` replace the collections the client shows (pass `[]` to
        empty them); their short forms are those of `SessionHandle.tool_call`.
        """
        await self._session.send(
            ToolCallProgress(
                tool_call_id=self.tool_call_id,
                status=status,
                title=title,
                kind=kind,
                content=_contents(content),
                locations=_locations(locations),
                raw_input=raw_input,
                raw_output=raw_output,
            )
        )
        if status is not None:
            self._status = status
        if title is not None:
            self._title = title

    async def complete(self, *content: ToolContentLike, raw_output: Any | None = None) -> None:
        """Finish it: status `completed`, with its result as content if given.

        await call.complete("3 files changed", diff(path, old=a, new=b))
        """
        await self.update(status="completed", content=content or None, raw_output=raw_output)

    async def fail(self, *content: ToolContentLike, raw_output: Any | None = None) -> None:
        """Finish it: status `failed`, with why as content if given (`call.fail("...")`)."""
        await self.update(status="failed", content=content or None, raw_output=raw_output)

    async def request_permission(
        self, options: Sequence[PermissionOption] | None = None, *, key: str | None = None
    ) -> PermissionOption | None:
        """Ask the client whether to run this tool call (`session/request_permission`).

        An `allow_always` or `reject_always` answer is remembered for this session under
        `key` (default: the tool call's `permission_key`, else its kind): the next
        question with the same key returns the remembered option without asking.

        Args:
            options: What to offer (default: `DEFAULT_PERMISSION_OPTIONS`: allow once,
                allow always, reject once).
            key: The permission key for this question.

        Returns:
            The option the user chose (check its `kind`: `allow_once`, `allow_always`,
            `reject_once`, `reject_always`), or None when the client answered `cancelled`
            (it cancelled the turn: end it with stop reason `cancelled`). After a reject
            or a cancel, leaving the block fails the tool call. If the runtime cancels the
            turn while the question is open, `CancelledError` leaves this call, as it
            leaves any await of a cancelled task.

        Raises:
            RemoteProtocolError: The client chose an option that was not offered.
        """
        key = key or self._key
        remembered = self._session._remembered.get(key)
        if remembered is not None:
            self._declined = remembered.kind.startswith("reject")
            return remembered
        offered = list(options or DEFAULT_PERMISSION_OPTIONS)
        answer = await self._session.context.request_permission(
            session_id=self._session.session_id,
            tool_call=ToolCallUpdate(
                tool_call_id=self.tool_call_id, title=self._title, kind=self._announce.kind
            ),
            options=offered,
        )
        outcome = answer.outcome
        if not isinstance(outcome, SelectedPermissionOutcome):
            self._declined = True
            return None
        chosen = next((o for o in offered if o.option_id == outcome.option_id), None)
        if chosen is None:
            raise RemoteProtocolError(
                f"the client chose permission option {outcome.option_id!r}, which was not offered"
            )
        if chosen.kind in ("allow_always", "reject_always"):
            self._session._remembered[key] = chosen
        self._declined = chosen.kind.startswith("reject")
        return chosen
