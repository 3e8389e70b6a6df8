"""The main connection of `python -m acp_sdk check`: the cases that need sessions and
turns, in order, and `run_cases`, which runs them beside the side connections.

Split from `_check_cases.py` (the case table, the run's state, turn helpers and side
connections) to keep each module readable; the order of the flows below is the order
of the cases in the table.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp_sdk.tools._check import FAIL, PASS, SKIP, CheckOptions, Peer, Report, short
from acp_sdk.tools._check_cases import (
    CASES,
    CLIENT_VERSION,
    HIGH_VERSION,
    TURN_UPDATES,
    _answers_a_notification,
    _cancel_request,
    _cancelled_turn,
    _code,
    _crossed,
    _eof,
    _Fail,
    _finish_turn,
    _judge,
    _response_seq,
    _result,
    _Run,
    _session_cancel,
    _side_bad_frames,
    _side_version,
    _Skip,
    _start_turn,
    _Turn,
    _update_kind,
    _versions,
)

__all__ = ["run_cases"]


async def _main(run: _Run) -> None:
    o = run.options
    timeout = o.request_timeout
    peer: Peer | None = None
    state: dict[str, Any] = {}

    async def start() -> None:
        nonlocal peer
        peer = await run.open_peer("main")
        result = await run.initialize(peer, CLIENT_VERSION)
        run.init = result
        run.report.agent.update(result)
        version = result.get("protocolVersion")
        if type(version) is not int or not 0 <= version <= CLIENT_VERSION:
            raise _Fail(f"asked {CLIENT_VERSION}, got protocolVersion {short(version)}")
        run.set("initialize", PASS, f"protocolVersion {version}")
        info = result.get("agentInfo")
        if isinstance(info, dict) and info.get("name") and info.get("version"):
            run.set("agent-info", PASS, short(f"{info.get('name')} {info.get('version')}"))
        else:
            run.set("agent-info", FAIL, "no agentInfo with a name and a version")

    await run.guard(("initialize", "agent-info"), start)
    if peer is None or "initialize" not in run.report.results:
        run.gone = "initialize failed"
        return
    p: Peer = peer
    caps = run.init.get("agentCapabilities") or {}
    session_caps = caps.get("sessionCapabilities") or {}

    async def unknown() -> None:
        since = len(p.inbound)
        await p.notify("_acp_check/notice", {"note": "an unknown notification"})
        await asyncio.sleep(o.grace)
        response = await p.call("_acp_check/no_such_method", {}, timeout)
        stray = [f for f in p.inbound[since:] if _answers_a_notification(f)]
        if stray:
            run.set("unknown-notification", FAIL, f"answered: {short(stray[0].raw)}")
        else:
            run.set("unknown-notification", PASS, "ignored, and the agent kept working")
        if _code(response) == -32601:
            run.set("unknown-method", PASS, "-32601")
        else:
            run.set("unknown-method", FAIL, f"expected -32601, got {short(response)}")

    await run.guard(("unknown-notification", "unknown-method"), unknown)

    async def sessions() -> None:
        if o.auth:
            _result(await p.call("authenticate", {"methodId": o.auth}, o.turn_timeout), "auth")
        ids = []
        for _ in range(2):
            response = await p.call("session/new", {"cwd": run.cwd, "mcpServers": []}, timeout)
            if _code(response) == -32000:
                methods = ", ".join(
                    f"{m.get('id')} ({m.get('name')})"
                    for m in run.init.get("authMethods") or []
                    if isinstance(m, dict)
                )
                run.session_skip = f"the agent needs authentication (methods: {methods or 'none'})"
                raise _Skip(run.session_skip)
            result = _result(response, "session/new")
            if not isinstance(result.get("sessionId"), str) or not result["sessionId"]:
                raise _Fail(f"no sessionId: {short(response)}")
            ids.append(result["sessionId"])
            state.setdefault("first", result)
        state["ids"] = ids
        run.set("session-new", PASS, f"cwd {run.cwd}")
        if ids[0] == ids[1]:
            run.set("session-id-unique", FAIL, f"two session/new answered {ids[0]!r}")
        else:
            run.set("session-id-unique", PASS, "two sessions, two ids")

    await run.guard(("session-new", "session-id-unique"), sessions)
    if "ids" not in state:
        run.gone = run.session_skip or "no session"
        return
    s1, s2 = state["ids"]

    async def modes() -> None:
        mode_state = state["first"].get("modes")
        if not isinstance(mode_state, dict) or not mode_state.get("availableModes"):
            raise _Skip("the agent lists no modes")
        current = mode_state.get("currentModeId")
        params = {"sessionId": s2, "modeId": current}
        _result(await p.call("session/set_mode", params, timeout), "session/set_mode")
        run.set("set-mode", PASS, f"set the current mode {current!r}")
        params = {"sessionId": s2, "modeId": "acp-check-no-such-mode"}
        response = await p.call("session/set_mode", params, timeout)
        if "error" in response:
            run.set("unknown-mode-rejected", PASS, f"rejected: {short(response, 100)}")
        else:
            run.set(
                "unknown-mode-rejected", FAIL, f"accepted an unlisted modeId: {short(response)}"
            )

    await run.guard(("set-mode", "unknown-mode-rejected"), modes)

    async def config() -> None:
        options = state["first"].get("configOptions")
        if not isinstance(options, list) or not options:
            raise _Skip("the agent lists no config options")
        option = options[0]
        params: dict[str, Any] = {"sessionId": s2, "configId": option.get("id")}
        params["value"] = option.get("currentValue")
        if option.get("type") == "boolean":
            params["type"] = "boolean"
        response = await p.call("session/set_config_option", params, timeout)
        _result(response, "session/set_config_option")
        run.set("set-config-option", PASS, f"set {option.get('id')!r} to its current value")

    await run.guard(("set-config-option",), config)

    async def plain() -> None:
        turn = await _start_turn(p, s1, o.prompt)
        response = await p.wait(turn.future, o.turn_timeout, "the prompt")
        reason = await _finish_turn(run, p, turn, response)
        updates = len(p.updates(s1, turn.start))
        run.set("prompt-turn", PASS, f"stopReason {reason} after {updates} updates")
        state["prompted"] = True

    await run.guard(("prompt-turn",), plain)
    prompt_skip = None if state.get("prompted") else run.report.results["prompt-turn"].detail

    async def listing() -> None:
        if session_caps.get("list") is None:
            raise _Skip("sessionCapabilities.list not advertised")
        seen: list[Any] = []
        cursor = None
        for _ in range(50):
            params = {"cwd": run.cwd} if cursor is None else {"cwd": run.cwd, "cursor": cursor}
            result = _result(await p.call("session/list", params, timeout), "session/list")
            if not isinstance(result.get("sessions"), list):
                raise _Fail(f"no sessions array: {short(result)}")
            seen += [s.get("sessionId") for s in result["sessions"] if isinstance(s, dict)]
            cursor = result.get("nextCursor")
            if not cursor:
                break
        if state.get("prompted") and s1 not in seen:
            detail = f"the live session {s1!r}, after a turn, is not listed: {short(seen)}"
            run.set("session-list", FAIL, detail)
        else:
            run.set("session-list", PASS, f"{len(seen)} sessions for the cwd")
        params = {"cursor": "acp-check-not-a-cursor"}
        response = await p.call("session/list", params, timeout)
        if "error" in response:
            run.set("session-list-invalid-cursor", PASS, "an error, as it should")
        else:
            run.set("session-list-invalid-cursor", FAIL, f"accepted: {short(response)}")

    await run.guard(("session-list", "session-list-invalid-cursor"), listing)

    async def load() -> None:
        if not caps.get("loadSession"):
            raise _Skip("loadSession not advertised")
        if prompt_skip:
            raise _Skip(f"needs a turn to replay: {prompt_skip}")
        start = len(p.inbound)
        params = {"sessionId": s1, "cwd": run.cwd, "mcpServers": []}
        request_id, future = await p.start_call("session/load", params)
        response = await p.wait(future, o.turn_timeout, "session/load")
        _result(response, "session/load")
        await asyncio.sleep(o.grace)
        end = _response_seq(p, request_id, start)
        replayed = [f for f in p.updates(s1, start, end) if _update_kind(f) in TURN_UPDATES]
        late = [f for f in p.updates(s1, end + 1) if _update_kind(f) in TURN_UPDATES]
        if late:
            raise _Fail(f"replayed after answering: {short(late[0].raw)}")
        if not replayed:
            raise _Fail("no conversation replayed before the answer")
        run.set("session-load", PASS, f"{len(replayed)} updates replayed before the answer")

    await run.guard(("session-load",), load)

    async def resume() -> None:
        if session_caps.get("resume") is None:
            raise _Skip("sessionCapabilities.resume not advertised")
        start = len(p.inbound)
        params = {"sessionId": s1, "cwd": run.cwd, "mcpServers": []}
        request_id, future = await p.start_call("session/resume", params)
        _result(await p.wait(future, timeout, "session/resume"), "session/resume")
        end = _response_seq(p, request_id, start)
        replayed = [f for f in p.updates(s1, start, end) if _update_kind(f) in TURN_UPDATES]
        if replayed:
            raise _Fail(f"replayed history (MUST NOT): {short(replayed[0].raw)}")
        run.set("session-resume", PASS, "resumed without a replay")

    await run.guard(("session-resume",), resume)

    async def cancel() -> None:
        if prompt_skip:
            raise _Skip(f"needs a turn: {prompt_skip}")
        await _session_cancel(run, p, s1)

    await run.guard(("session-cancel",), cancel)

    async def cancel_request() -> None:
        if prompt_skip:
            raise _Skip(f"needs a turn: {prompt_skip}")
        await _cancel_request(run, p, s1)

    await run.guard(("cancel-request",), cancel_request)

    async def close() -> None:
        if session_caps.get("close") is None:
            raise _Skip("sessionCapabilities.close not advertised")
        if prompt_skip:
            raise _Skip(f"needs a turn: {prompt_skip}")
        new = await p.call("session/new", {"cwd": run.cwd, "mcpServers": []}, timeout)
        s3 = _result(new, "session/new")["sessionId"]
        closing: list[asyncio.Future[dict[str, Any]]] = []

        async def send_close(turn: _Turn) -> None:
            closing.append((await p.start_call("session/close", {"sessionId": s3}))[1])

        turn, response = await _cancelled_turn(run, p, s3, send_close)
        if response is None:
            raise _Fail(f"the running turn got no answer within {o.cancel_timeout:g}s of close")
        _result(await p.wait(closing[0], timeout, "session/close"), "session/close")
        result = response.get("result") or {}
        if result.get("stopReason") == "cancelled" or _code(response) == -32800:
            run.set("session-close", PASS, "the running turn ended cancelled; closed")
        elif _crossed(turn):
            run.set("session-close", SKIP, "inconclusive: the turn ended as close was sent")
        else:
            run.set("session-close", FAIL, f"the running turn was not cancelled: {short(response)}")

    await run.guard(("session-close",), close)

    async def big() -> None:
        if o.big_prompt_size <= 0:
            raise _Skip("--big-prompt-size 0")
        if prompt_skip:
            raise _Skip(f"needs a turn: {prompt_skip}")
        text = "Ignore the filler and reply with the single word: ok\n"
        text += "x" * max(0, o.big_prompt_size - len(text))
        turn = await _start_turn(p, s2, text)
        response = await p.wait(turn.future, o.turn_timeout, f"a {len(text)}-byte prompt")
        if "error" in response:  # refusing it in words is an answer too
            run.set("big-prompt", PASS, f"answered with an error: {short(response, 120)}")
            await asyncio.sleep(o.grace)
            return
        reason = await _finish_turn(run, p, turn, response)
        run.set("big-prompt", PASS, f"{len(text)} bytes: stopReason {reason}")

    await run.guard(("big-prompt",), big)

    async def delete() -> None:
        if session_caps.get("delete") is None:
            raise _Skip("sessionCapabilities.delete not advertised")
        response = await p.call("session/delete", {"sessionId": s2}, timeout)
        _result(response, "session/delete")
        if session_caps.get("list") is not None:
            result = _result(await p.call("session/list", {}, timeout), "session/list")
            listed = [s.get("sessionId") for s in result.get("sessions") or []]
            if s2 in listed:
                raise _Fail(f"the deleted session {s2!r} is still listed")
        run.set("session-delete", PASS, "deleted, and no longer listed")

    await run.guard(("session-delete",), delete)


async def run_cases(options: CheckOptions, cwd: str, report: Report) -> None:
    """Run every case; each ends with a result in `report`."""
    run = _Run(options=options, cwd=cwd, report=report)
    try:
        sides = [
            run.guard(
                ("version-higher",), lambda: _side_version(run, "higher", HIGH_VERSION), False
            ),
            run.guard(("version-lower",), lambda: _side_version(run, "lower", 0), False),
            run.guard(("malformed-json", "invalid-request"), lambda: _side_bad_frames(run), False),
        ]
        await asyncio.gather(_main(run), *sides)
        _versions(run)
        await _eof(run)
        _judge(run)
    finally:
        for peer in run.peers:
            await peer.aclose()
    reason = f"not run: {run.gone}" if run.gone else "not run"
    for case in CASES:
        if case.id not in report.results:
            run.set(case.id, SKIP, reason)
