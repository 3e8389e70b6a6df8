"""The cases `python -m acp_sdk check` runs, each with the spec rule it checks.

One agent connection (the main one) carries the sequence that needs sessions and turns;
three short side connections run at the same time for what needs a fresh `initialize`
(version negotiation) or may break the agent (malformed JSON, an invalid request), so a
broken agent fails those cases and not every case after them. Observations that span the
run (stdout junk, fs or terminal calls, late or doubled updates, an unasked `cancelled`)
are collected on the way and judged at the end. The main connection's flows are in
`_check_main.py`; this module holds the case table, the run's state, the turn and cancel
helpers, the side connections and the end-of-run judgements.
"""

# The checker reads the agent's raw JSON on purpose (it must see what a typed client
# would refuse), so its values are `Any` narrowed by checks, and `x.get(k) or {}` mixes
# them with empty literals: pyright's unknown-type reports say nothing useful here.
# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import attrs
import orjson

from acp_sdk.tools._check import (
    FAIL,
    MUST,
    PASS,
    SHOULD,
    SKIP,
    WARN,
    AgentGone,
    CheckOptions,
    Inbound,
    NoAnswer,
    Peer,
    Report,
    Result,
    StdioLink,
    make_link,
    short,
)

__all__ = ["CASES", "Case"]


@attrs.frozen(kw_only=True, order=False)
class Case:
    id: str
    spec: str  # doc § section of the v1 docs
    level: str  # MUST or SHOULD


def _c(case_id: str, spec: str, level: str = MUST) -> Case:
    return Case(id=case_id, spec=spec, level=level)


CASES: Final = (
    _c("stdout-json-only", "transports.mdx § stdio"),
    _c("initialize", "initialization.mdx § Initialization"),
    _c("agent-info", "initialization.mdx § Implementation Information", SHOULD),
    _c("version-higher", "initialization.mdx § Version Negotiation"),
    _c("version-lower", "initialization.mdx § Version Negotiation"),
    _c("unknown-method", "overview.mdx § Error Handling (JSON-RPC -32601)"),
    _c("unknown-notification", "extensibility.mdx § Custom Notifications", SHOULD),
    _c("malformed-json", "overview.mdx § Error Handling (JSON-RPC -32700)"),
    _c("invalid-request", "overview.mdx § Error Handling (JSON-RPC -32600)"),
    _c("session-new", "session-setup.mdx § Creating a Session"),
    _c("session-id-unique", "session-setup.mdx § Creating a Session"),
    _c("prompt-turn", "prompt-turn.mdx § 4. Check for Completion"),
    _c("updates-before-response", "prompt-turn.mdx § Cancellation"),
    _c("late-usage-update", "prompt-turn.mdx § Session Usage Updates", SHOULD),
    _c("updates-not-duplicated", "prompt-turn.mdx § 3. Agent Reports Output", SHOULD),
    _c("stop-reason-honest", "prompt-turn.mdx § Stop Reasons"),
    _c("session-cancel", "prompt-turn.mdx § Cancellation"),
    _c("cancel-request", "cancellation.mdx § $/cancel_request Notification"),
    _c("no-fs-without-capability", "file-system.mdx § Checking Support"),
    _c("no-terminal-without-capability", "terminals.mdx § Checking Support"),
    _c("set-mode", "session-modes.mdx § From the Client"),
    _c("unknown-mode-rejected", "session-modes.mdx § From the Client", SHOULD),
    _c("set-config-option", "session-config-options.mdx § From the Client"),
    _c("session-load", "session-setup.mdx § Loading a Session"),
    _c("session-resume", "session-setup.mdx § Resuming a Session"),
    _c("session-list", "session-list.mdx § Listing Sessions"),
    _c("session-list-invalid-cursor", "session-list.mdx § Pagination", SHOULD),
    _c("session-close", "session-setup.mdx § Closing a Session"),
    _c("session-delete", "session-delete.mdx § Semantics"),
    _c("big-prompt", "initialization.mdx § Prompt capabilities (text baseline)"),
    _c("eof-exit", "transports.mdx § stdio"),
)
_BY_ID: Final = {case.id: case for case in CASES}

CLIENT_VERSION: Final = 1
HIGH_VERSION: Final = 999
STOP_REASONS: Final = frozenset(
    {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}
)
TURN_UPDATES: Final = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
    }
)
"""Updates that belong to a turn; others (commands, modes, config, session info) may come
at any time."""
CROSSED: Final = 0.25
"""A non-cancelled answer this soon after the cancel may have crossed it: inconclusive."""


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def error_code(response: dict[str, Any]) -> Any:
    error = response.get("error")
    return error.get("code") if isinstance(error, dict) else None


def result_of(response: dict[str, Any], what: str) -> dict[str, Any]:
    if "error" in response:
        raise Fail(f"{what} answered with an error: {short(response)}")
    result = response.get("result")
    if not isinstance(result, dict):
        raise Fail(f"{what} answered with a non-object result: {short(response)}")
    return result


def answers_a_notification(frame: Inbound) -> bool:
    """A response-shaped frame without an id (or with `null`): an answer to a notification
    (or a broken one, which `stdout-json-only` reports too)."""
    try:
        decoded = orjson.loads(frame.raw)
    except orjson.JSONDecodeError:
        return False
    return (
        isinstance(decoded, dict)
        and "method" not in decoded
        and ("result" in decoded or "error" in decoded)
        and decoded.get("id") is None
    )


def update_kind(frame: Inbound) -> str:
    assert frame.msg is not None
    params = frame.msg.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    return str(update.get("sessionUpdate", "")) if isinstance(update, dict) else ""


class Run:
    """The state of one check run: what the agent said, and what was seen on the way."""

    __slots__ = (
        "cwd",
        "doubled",
        "gone",
        "init",
        "late",
        "late_usage",
        "options",
        "peers",
        "report",
        "session_skip",
        "turns_seen",
        "unasked_cancel",
        "versions",
    )

    def __init__(self, *, options: CheckOptions, cwd: str, report: Report) -> None:
        self.options = options
        self.cwd = cwd
        self.report = report
        self.peers: list[Peer] = []
        self.init: dict[str, Any] = {}  # the main connection's initialize answer
        self.versions: dict[str, Any] = {}  # side connection -> version, or the error
        self.session_skip: str | None = None
        self.gone: str | None = None  # why the main connection's later flows do not run
        self.late: list[Inbound] = []  # turn updates after their turn's answer
        self.late_usage: list[Inbound] = []
        self.doubled: list[Inbound] = []
        self.unasked_cancel: list[str] = []
        self.turns_seen = 0

    def set(self, case_id: str, outcome: str, detail: str) -> None:
        case = _BY_ID[case_id]
        if outcome == FAIL and case.level == SHOULD:
            outcome = WARN  # a SHOULD not met warns; only a MUST fails
        self.report.results[case_id] = Result(
            id=case_id, spec=case.spec, level=case.level, outcome=outcome, detail=detail
        )

    def unset(self, *case_ids: str) -> list[str]:
        return [c for c in case_ids if c not in self.report.results]

    async def guard(
        self, case_ids: tuple[str, ...], flow: Callable[[], Awaitable[None]], main: bool = True
    ) -> None:
        """Run a flow that sets `case_ids`; an exception decides the ones it left unset.

        `main`: the flow runs on the main connection, whose end skips every later flow."""
        if main and self.gone is not None:
            for case_id in self.unset(*case_ids):
                self.set(case_id, SKIP, f"not run: {self.gone}")
            return
        try:
            await flow()
        except Skip as skip:
            for case_id in self.unset(*case_ids):
                self.set(case_id, SKIP, str(skip))
        except (Fail, NoAnswer, AgentGone) as error:
            detail = str(error) or "the agent closed the connection"
            if isinstance(error, AgentGone) and main:
                detail = "the agent closed the connection" + self.peers[0].stderr_hint()
                self.gone = "the agent's connection ended earlier"
            self._fail_unset(case_ids, detail)
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as error:
            # JSON of a shape no flow expected (the agent's answers are not checked
            # against the schema first): judged as that case's failure, never a crash
            # of the whole run.
            name = type(error).__name__
            self._fail_unset(case_ids, f"an answer of an unexpected shape ({name}: {error})")

    def _fail_unset(self, case_ids: tuple[str, ...], detail: str) -> None:
        unset = self.unset(*case_ids)
        if unset:
            self.set(unset[0], FAIL, detail)
        for case_id in unset[1:]:
            self.set(case_id, SKIP, f"not run: {detail}")

    async def open_peer(self, name: str) -> Peer:
        peer = Peer(make_link(self.options), name)
        self.peers.append(peer)
        try:
            await peer.start()
        except (OSError, ValueError) as error:
            raise Fail(f"could not start the agent: {error}") from error
        except Exception as error:  # a transport's own error (ConnectionClosed)
            raise Fail(f"could not connect: {error}") from error
        return peer

    async def initialize(self, peer: Peer, version: int) -> dict[str, Any]:
        params = {
            "protocolVersion": version,
            "clientCapabilities": {
                "fs": {"readTextFile": False, "writeTextFile": False},
                "terminal": False,
            },
            "clientInfo": {"name": "acp-sdk-check", "title": "ACP check", "version": "1"},
        }
        # Starting an agent may install it first (npx, uvx): the turn timeout, not the short one.
        _, future = await peer.start_call("initialize", params)
        response = await peer.wait_initialize(future, self.options.turn_timeout)
        return result_of(response, "initialize")


# ---------------------------------------------------------------------- side connections


async def side_version(run: Run, key: str, version: int) -> None:
    peer = await run.open_peer(key)
    try:
        result = await run.initialize(peer, version)
        run.versions[key] = result.get("protocolVersion")
    except (Fail, NoAnswer, AgentGone) as error:
        run.versions[key] = error
    finally:
        await peer.aclose()


async def ping(peer: Peer, timeout: float) -> bool:
    """Whether the agent still answers a request (any answer counts)."""
    try:
        await peer.call("_acp_check/ping", {}, timeout)
    except (NoAnswer, AgentGone):
        return False
    return True


async def side_bad_frames(run: Run) -> None:
    timeout = run.options.request_timeout
    peer = await run.open_peer("bad-frames")
    try:
        await run.initialize(peer, CLIENT_VERSION)
        if not peer.link.raw_ok:
            raise Skip("Streamable HTTP carries only whole, parsed JSON bodies")

        async def bad_frame(case_id: str, raw: bytes, code: int, ids: tuple[Any, ...]) -> None:
            since = len(peer.inbound)
            await peer.send_raw(raw)

            def is_answer(frame: Inbound) -> bool:
                msg = frame.msg
                return msg is not None and "method" not in msg and msg.get("id") in ids

            answer = await peer.wait_for(is_answer, min(timeout, 5.0), since)
            alive = await ping(peer, timeout)
            sent = short(raw, 80)
            if not alive:
                gone = "exited" if peer.closed else "stopped answering"
                run.set(case_id, FAIL, f"the agent {gone} after {sent}" + peer.stderr_hint())
            elif answer is None:
                run.set(case_id, FAIL, f"no error response to {sent}")
            elif answer.msg is not None and error_code(answer.msg) != code:
                run.set(case_id, FAIL, f"expected error {code}, got {short(answer.raw)}")
            else:
                run.set(case_id, PASS, f"{code}, and the agent kept working")

        await run.guard(
            ("malformed-json",),
            lambda: bad_frame(
                "malformed-json",
                b'{"jsonrpc": "2.0", "id": 90, "method": "session/list", "params": {',
                -32700,
                (None, 90),  # JSON-RPC says null; an id read from the broken line passes too
            ),
            main=False,
        )
        if peer.closed:
            raise Skip("not run: the agent exited after the malformed-json case")
        await run.guard(
            ("invalid-request",),
            lambda: bad_frame(
                "invalid-request",
                b'{"jsonrpc": "2.0", "id": 91, "method": 1, "params": "bar"}',
                -32600,
                (91, None),
            ),
            main=False,
        )
    finally:
        await peer.aclose()


# ---------------------------------------------------------------------- turns


class Turn:
    """A prompt sent: where its frames start, its answer to come, when it was cancelled."""

    __slots__ = ("cancel_sent", "future", "request_id", "session_id", "start")

    def __init__(
        self,
        *,
        session_id: str,
        request_id: Any,
        start: int,
        future: asyncio.Future[dict[str, Any]],
    ) -> None:
        self.session_id = session_id
        self.request_id = request_id
        self.start = start
        self.future = future
        self.cancel_sent: float | None = None


async def start_turn(peer: Peer, session_id: str, text: str) -> Turn:
    start = len(peer.inbound)
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    request_id, future = await peer.start_call("session/prompt", params)
    return Turn(session_id=session_id, request_id=request_id, start=start, future=future)


def response_seq(peer: Peer, request_id: Any, since: int) -> int:
    for frame in peer.inbound[since:]:
        msg = frame.msg
        if msg is not None and "method" not in msg and msg.get("id") == request_id:
            return frame.seq
    return len(peer.inbound)


async def finish_turn(run: Run, peer: Peer, turn: Turn, response: dict[str, Any]) -> str:
    """Note late and doubled updates of an answered turn; return its stop reason."""
    await asyncio.sleep(run.options.grace)  # anything of the turn arriving after its answer
    end = response_seq(peer, turn.request_id, turn.start)
    run.turns_seen += 1
    for frame in peer.updates(turn.session_id, end + 1):
        kind = update_kind(frame)
        if kind in TURN_UPDATES:
            run.late.append(frame)
        elif kind == "usage_update":
            run.late_usage.append(frame)
    before = peer.updates(turn.session_id, turn.start, end)
    repeats = [b for a, b in itertools.pairwise(before) if a.raw == b.raw]
    if repeats and 2 * len(repeats) >= len(before):
        run.doubled.append(repeats[0])
    if "error" in response:
        if error_code(response) == -32000:
            raise Skip(f"the prompt needs authentication: {short(response)}")
        raise Fail(f"session/prompt answered with an error: {short(response)}")
    result = response.get("result")
    reason = result.get("stopReason") if isinstance(result, dict) else None
    if reason not in STOP_REASONS:
        raise Fail(f"not a stop reason: {short(response)}")
    if reason == "cancelled" and turn.cancel_sent is None:
        run.unasked_cancel.append(short(response))
    return str(reason)


async def until_under_way(run: Run, peer: Peer, turn: Turn) -> None:
    """Wait for the turn's first update or request to us, at most `--cancel-after`."""

    def started(frame: Inbound) -> bool:
        msg = frame.msg
        return msg is not None and "method" in msg

    await peer.wait_for(started, run.options.cancel_after, turn.start)
    if turn.future.done():
        # Still a turn: its late or doubled updates, a `cancelled` nobody asked for, count.
        with contextlib.suppress(Skip, Fail):
            await finish_turn(run, peer, turn, turn.future.result())
        answer = turn.future.result().get("result")
        answer = answer if isinstance(answer, dict) else {}
        raise Skip(
            f"inconclusive: the turn ended ({short(answer.get('stopReason'))}) before the "
            "cancel was sent; give a longer --long-prompt"
        )


async def cancelled_turn(
    run: Run, peer: Peer, session_id: str, cancel: Callable[[Turn], Awaitable[None]]
) -> tuple[Turn, dict[str, Any] | None]:
    """Start a long turn, cancel it with `cancel`; the response, None if none came."""
    peer.hold_permissions = True
    try:
        turn = await start_turn(peer, session_id, run.options.long_prompt)
        await until_under_way(run, peer, turn)
        turn.cancel_sent = time.monotonic()
        await cancel(turn)
        peer.hold_permissions = False
        await peer.answer_held_cancelled()  # as a client must (prompt-turn.mdx § Cancellation)
        with contextlib.suppress(NoAnswer):
            return turn, await peer.wait(turn.future, run.options.cancel_timeout, "the prompt")
        return turn, None
    finally:
        peer.hold_permissions = False
        await peer.answer_held_cancelled()


# An agent seen ending a turn nobody cancelled as `cancelled` (a real agent does so for
# every turn when it has no model): its `cancelled` after a cancel shows nothing.
UNASKED_CANCEL_SKIP: Final = (
    "inconclusive: the agent also ends turns nobody cancelled as cancelled "
    "(stop-reason-honest), so this stopReason cancelled shows nothing"
)


def crossed(turn: Turn) -> bool:
    assert turn.cancel_sent is not None
    return turn.future.done() and time.monotonic() - turn.cancel_sent < CROSSED


async def session_cancel_case(run: Run, peer: Peer, session_id: str) -> None:
    async def cancel(turn: Turn) -> None:
        await peer.notify("session/cancel", {"sessionId": session_id})

    turn, response = await cancelled_turn(run, peer, session_id, cancel)
    if response is None:
        raise Fail(f"no answer to the prompt within {run.options.cancel_timeout:g}s of the cancel")
    assert turn.cancel_sent is not None
    took = time.monotonic() - turn.cancel_sent
    if "error" in response:
        raise Fail(f"a cancelled turn must end with stopReason cancelled: {short(response)}")
    reason = await finish_turn(run, peer, turn, response)
    if reason == "cancelled" and run.unasked_cancel:
        run.set("session-cancel", SKIP, UNASKED_CANCEL_SKIP)
    elif reason == "cancelled":
        run.set("session-cancel", PASS, f"stopReason cancelled {took:.2f}s after session/cancel")
    elif took < CROSSED:
        run.set("session-cancel", SKIP, f"inconclusive: {reason} crossed the cancel")
    else:
        run.set("session-cancel", FAIL, f"{took:.2f}s after session/cancel: {short(response)}")


async def cancel_request_case(run: Run, peer: Peer, session_id: str) -> None:
    async def cancel(turn: Turn) -> None:
        await peer.notify("$/cancel_request", {"requestId": turn.request_id})

    turn, response = await cancelled_turn(run, peer, session_id, cancel)
    note = ""
    if response is None:  # optional to act on; the request must still get its answer
        await peer.notify("session/cancel", {"sessionId": session_id})
        with contextlib.suppress(NoAnswer):
            response = await peer.wait(turn.future, run.options.cancel_timeout, "the prompt")
        if response is None:
            raise Fail("the cancelled request got no answer, even after session/cancel")
        note = " (not acted on, which is optional; answered after session/cancel)"
    if "error" in response and error_code(response) != -32800:
        raise Fail(f"neither a result nor -32800: {short(response)}")
    await asyncio.sleep(run.options.grace)
    run.set("cancel-request", PASS, f"answered {short(response, 120)}{note}")


async def eof_case(run: Run) -> None:
    """End the main agent's input; it should exit, and its process group with it."""
    if run.options.url is not None:
        run.set("eof-exit", SKIP, "a remote agent (--url) has no process to watch")
        return
    if not run.peers:
        return
    link = run.peers[0].link
    assert isinstance(link, StdioLink)
    proc = link.proc
    if proc is None:
        return
    if proc.returncode is not None:
        run.set("eof-exit", SKIP, f"the agent had already exited (code {proc.returncode})")
        return
    link.end_input()
    started = time.monotonic()
    # Poll the exit status: `proc.wait()` also waits for the pipes to close, which a
    # leftover child holding them open would delay past the agent's own exit.
    while proc.returncode is None and time.monotonic() - started < run.options.exit_timeout:
        await asyncio.sleep(0.02)
    if proc.returncode is None:
        run.set("eof-exit", FAIL, f"still running {run.options.exit_timeout:g}s after EOF")
        return
    while link.group_alive() and time.monotonic() - started < run.options.exit_timeout:
        await asyncio.sleep(0.05)
    if link.group_alive():
        pids = group_members(proc.pid)
        run.set(
            "eof-exit",
            FAIL,
            f"exited (code {proc.returncode}) but left processes of its group behind: {pids}",
        )
    else:
        took = time.monotonic() - started
        run.set("eof-exit", PASS, f"exited (code {proc.returncode}) {took:.2f}s after EOF")


def group_members(pgid: int) -> str:
    """`pid command` of each process in a group (Linux /proc; best effort)."""
    members = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as file:
                    stat = file.read()
                name = stat[stat.index("(") + 1 : stat.rindex(")")]
                fields = stat[stat.rindex(")") + 2 :].split()
                if int(fields[2]) == pgid:
                    members.append(f"{entry} {name}")
    return ", ".join(members) or f"process group {pgid}"


def judge(run: Run) -> None:
    """The cases that look at the whole run."""
    junk = [f for peer in run.peers for f in peer.junk]
    if junk:
        try:
            orjson.loads(junk[0].raw)
            what = "JSON, but not a JSON-RPC 2.0 message"
        except orjson.JSONDecodeError:
            what = "not a JSON-RPC message"
        run.set("stdout-json-only", FAIL, f"{what}: {short(junk[0].raw)}")
    elif any(peer.inbound for peer in run.peers):
        count = sum(len(peer.inbound) for peer in run.peers)
        run.set("stdout-json-only", PASS, f"all {count} frames were JSON-RPC messages")
    calls = [f for peer in run.peers for f in peer.agent_requests]
    for case_id, prefix, cap in (
        ("no-fs-without-capability", "fs/", "fs"),
        ("no-terminal-without-capability", "terminal/", "terminal"),
    ):
        bad = [f for f in calls if f.msg and str(f.msg.get("method", "")).startswith(prefix)]
        if bad:
            run.set(case_id, FAIL, f"called without the {cap} capability: {short(bad[0].raw)}")
        elif run.turns_seen:
            run.set(case_id, PASS, f"no {prefix}* request in {run.turns_seen} turns")
    if run.turns_seen:
        if run.late:
            run.set("updates-before-response", FAIL, f"after the answer: {short(run.late[0].raw)}")
        else:
            run.set("updates-before-response", PASS, f"{run.turns_seen} turns")
        if run.late_usage:
            # The spec says nothing of when usage_update may come; a late one only warns.
            detail = f"spec silent on timing; after the answer: {short(run.late_usage[0].raw)}"
            run.set("late-usage-update", WARN, detail)
        else:
            run.set("late-usage-update", PASS, "none after an answer")
        if run.doubled:
            run.set("updates-not-duplicated", FAIL, f"sent twice: {short(run.doubled[0].raw)}")
        else:
            run.set("updates-not-duplicated", PASS, "no update repeated back to back")
        if run.unasked_cancel:
            detail = f"stopReason cancelled with no cancel sent: {run.unasked_cancel[0]}"
            run.set("stop-reason-honest", FAIL, detail)
        else:
            run.set("stop-reason-honest", PASS, "cancelled only when cancelled")


def judge_versions(run: Run) -> None:
    """Judge the answers to a higher and a lower protocolVersion (initialization.mdx)."""
    latest = run.init.get("protocolVersion")
    higher, lower = run.versions.get("higher"), run.versions.get("lower")
    if isinstance(higher, BaseException):
        run.set("version-higher", FAIL, f"asked {HIGH_VERSION}: {higher}")
    elif "higher" in run.versions:
        if type(higher) is not int or higher >= HIGH_VERSION or higher < 1:
            run.set("version-higher", FAIL, f"asked {HIGH_VERSION}, got {short(higher)}")
        elif type(latest) is int and higher < latest:
            run.set("version-higher", FAIL, f"got {higher}, below the {latest} it supports")
        else:
            run.set("version-higher", PASS, f"asked {HIGH_VERSION}, got its latest, {higher}")
    if isinstance(lower, BaseException):
        run.set("version-lower", FAIL, f"asked 0: {lower}")
    elif "lower" in run.versions:
        if lower == 0:
            run.set("version-lower", PASS, "asked 0, got 0 (it supports 0)")
        elif type(lower) is int and lower == higher:
            run.set("version-lower", PASS, f"asked 0, got its latest, {lower}")
        else:
            detail = f"asked 0: expected 0 or its latest ({short(higher)}), got {short(lower)}"
            run.set("version-lower", FAIL, detail)
