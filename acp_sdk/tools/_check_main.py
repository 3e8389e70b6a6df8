"""The main connection of `python -m acp_sdk check`: the cases that need sessions and
turns, in order, and `run_cases`, which runs them beside the side connections.

Split from `_check_cases.py` (the case table, the run's state, turn helpers and side
connections) to keep each module readable; the order of the flows below is the order
of the cases in the table.
"""

# The checker reads the agent's raw JSON on purpose (it must see what a typed client
# would refuse), so its values are `Any` narrowed by checks, and `x.get(k) or {}` mixes
# them with empty literals: pyright's unknown-type reports say nothing useful here.
# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import asyncio
from typing import Any

from acp_sdk.tools._check import (
    FAIL,
    PASS,
    SKIP,
    CheckOptions,
    InitializeUnanswered,
    NoAnswer,
    Peer,
    Report,
    short,
)
from acp_sdk.tools._check_cases import (
    CASES,
    CLIENT_VERSION,
    HIGH_VERSION,
    TURN_UPDATES,
    UNASKED_CANCEL_SKIP,
    Fail,
    Run,
    Skip,
    Turn,
    answers_a_notification,
    cancel_request_case,
    cancelled_turn,
    crossed,
    eof_case,
    error_code,
    finish_turn,
    judge,
    judge_versions,
    response_seq,
    result_of,
    session_cancel_case,
    side_bad_frames,
    side_version,
    start_turn,
    update_kind,
)

__all__ = ["run_cases"]


async def _main(run: Run) -> None:
    o = run.options
    timeout = o.request_timeout
    peers: list[Peer] = []  # the main peer, once initialize was answered
    state: dict[str, Any] = {}

    async def start() -> None:
        peer = await run.open_peer("main")
        try:
            result = await run.initialize(peer, CLIENT_VERSION)
        except NoAnswer as error:  # not an agent, or silent: nothing else can be checked
            raise InitializeUnanswered(str(error) + peer.stderr_hint()) from error
        peers.append(peer)  # answered: the cases go on even if the version is wrong
        run.init = result
        run.report.agent.update(result)
        version = result.get("protocolVersion")
        if type(version) is not int or not 0 <= version <= CLIENT_VERSION:
            raise Fail(f"asked {CLIENT_VERSION}, got protocolVersion {short(version)}")
        caps = result.get("agentCapabilities")
        if caps is not None and not isinstance(caps, dict):
            raise Fail(f"agentCapabilities is not an object: {short(caps)}")
        run.set("initialize", PASS, f"protocolVersion {version}")
        info = result.get("agentInfo")
        if isinstance(info, dict) and info.get("name") and info.get("version"):
            run.set("agent-info", PASS, short(f"{info.get('name')} {info.get('version')}"))
        else:
            run.set("agent-info", FAIL, "no agentInfo with a name and a version")

    await run.guard(("initialize", "agent-info"), start)
    if not peers:
        run.gone = "initialize failed"
        return
    p = peers[0]
    # The agent's JSON, any shape: what is not an object advertises nothing.
    caps = _object(run.init.get("agentCapabilities"))
    session_caps = _object(caps.get("sessionCapabilities"))

    async def unknown() -> None:
        since = len(p.inbound)
        await p.notify("_acp_check/notice", {"note": "an unknown notification"})
        await asyncio.sleep(o.grace)
        response = await p.call("_acp_check/no_such_method", {}, timeout)
        stray = [f for f in p.inbound[since:] if answers_a_notification(f)]
        if stray:
            run.set("unknown-notification", FAIL, f"answered: {short(stray[0].raw)}")
        else:
            run.set("unknown-notification", PASS, "ignored, and the agent kept working")
        if error_code(response) == -32601:
            run.set("unknown-method", PASS, "-32601")
        else:
            run.set("unknown-method", FAIL, f"expected -32601, got {short(response)}")

    await run.guard(("unknown-notification", "unknown-method"), unknown)

    async def sessions() -> None:
        if o.auth:
            result_of(await p.call("authenticate", {"methodId": o.auth}, o.turn_timeout), "auth")
        ids = []
        for _ in range(2):
            response = await p.call("session/new", {"cwd": run.cwd, "mcpServers": []}, timeout)
            if error_code(response) == -32000:
                methods = ", ".join(
                    f"{m.get('id')} ({m.get('name')})"
                    for m in _list(run.init.get("authMethods"))
                    if isinstance(m, dict)
                )
                run.session_skip = f"the agent needs authentication (methods: {methods or 'none'})"
                raise Skip(run.session_skip)
            result = result_of(response, "session/new")
            if not isinstance(result.get("sessionId"), str) or not result["sessionId"]:
                raise Fail(f"no sessionId: {short(response)}")
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
            raise Skip("the agent lists no modes")
        current = mode_state.get("currentModeId")
        params = {"sessionId": s2, "modeId": current}
        result_of(await p.call("session/set_mode", params, timeout), "session/set_mode")
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
            raise Skip("the agent lists no config options")
        option = options[0]
        if not isinstance(option, dict):
            raise Fail(f"configOptions[0] is not an object: {short(option)}")
        params: dict[str, Any] = {"sessionId": s2, "configId": option.get("id")}
        params["value"] = option.get("currentValue")
        if option.get("type") == "boolean":
            params["type"] = "boolean"
        response = await p.call("session/set_config_option", params, timeout)
        result_of(response, "session/set_config_option")
        run.set("set-config-option", PASS, f"set {option.get('id')!r} to its current value")

    await run.guard(("set-config-option",), config)

    async def plain() -> None:
        turn = await start_turn(p, s1, o.prompt)
        response = await p.wait(turn.future, o.turn_timeout, "the prompt")
        reason = await finish_turn(run, p, turn, response)
        updates = len(p.updates(s1, turn.start))
        run.set("prompt-turn", PASS, f"stopReason {reason} after {updates} updates")
        state["prompted"] = True

    await run.guard(("prompt-turn",), plain)
    prompt_skip = None if state.get("prompted") else run.report.results["prompt-turn"].detail

    async def listing() -> None:
        if session_caps.get("list") is None:
            raise Skip("sessionCapabilities.list not advertised")
        seen: list[Any] = []
        cursor = None
        for _ in range(50):
            params = {"cwd": run.cwd} if cursor is None else {"cwd": run.cwd, "cursor": cursor}
            result = result_of(await p.call("session/list", params, timeout), "session/list")
            if not isinstance(result.get("sessions"), list):
                raise Fail(f"no sessions array: {short(result)}")
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
            raise Skip("loadSession not advertised")
        if prompt_skip:
            raise Skip(f"needs a turn to replay: {prompt_skip}")
        start = len(p.inbound)
        params = {"sessionId": s1, "cwd": run.cwd, "mcpServers": []}
        request_id, future = await p.start_call("session/load", params)
        response = await p.wait(future, o.turn_timeout, "session/load")
        result_of(response, "session/load")
        await asyncio.sleep(o.grace)
        end = response_seq(p, request_id, start)
        replayed = [f for f in p.updates(s1, start, end) if update_kind(f) in TURN_UPDATES]
        late = [f for f in p.updates(s1, end + 1) if update_kind(f) in TURN_UPDATES]
        if late:
            raise Fail(f"replayed after answering: {short(late[0].raw)}")
        if not replayed:
            raise Fail("no conversation replayed before the answer")
        run.set("session-load", PASS, f"{len(replayed)} updates replayed before the answer")

    await run.guard(("session-load",), load)

    async def resume() -> None:
        if session_caps.get("resume") is None:
            raise Skip("sessionCapabilities.resume not advertised")
        start = len(p.inbound)
        params = {"sessionId": s1, "cwd": run.cwd, "mcpServers": []}
        request_id, future = await p.start_call("session/resume", params)
        result_of(await p.wait(future, timeout, "session/resume"), "session/resume")
        end = response_seq(p, request_id, start)
        replayed = [f for f in p.updates(s1, start, end) if update_kind(f) in TURN_UPDATES]
        if replayed:
            raise Fail(f"replayed history (MUST NOT): {short(replayed[0].raw)}")
        run.set("session-resume", PASS, "resumed without a replay")

    await run.guard(("session-resume",), resume)

    async def cancel() -> None:
        if prompt_skip:
            raise Skip(f"needs a turn: {prompt_skip}")
        await session_cancel_case(run, p, s1)

    await run.guard(("session-cancel",), cancel)

    async def cancel_request() -> None:
        if prompt_skip:
            raise Skip(f"needs a turn: {prompt_skip}")
        await cancel_request_case(run, p, s1)

    await run.guard(("cancel-request",), cancel_request)

    async def close() -> None:
        if session_caps.get("close") is None:
            raise Skip("sessionCapabilities.close not advertised")
        if prompt_skip:
            raise Skip(f"needs a turn: {prompt_skip}")
        new = await p.call("session/new", {"cwd": run.cwd, "mcpServers": []}, timeout)
        s3 = result_of(new, "session/new")["sessionId"]
        closing: list[asyncio.Future[dict[str, Any]]] = []

        async def send_close(turn: Turn) -> None:
            closing.append((await p.start_call("session/close", {"sessionId": s3}))[1])

        turn, response = await cancelled_turn(run, p, s3, send_close)
        if response is None:
            raise Fail(f"the running turn got no answer within {o.cancel_timeout:g}s of close")
        result_of(await p.wait(closing[0], timeout, "session/close"), "session/close")
        result = _object(response.get("result"))
        if result.get("stopReason") == "cancelled" and run.unasked_cancel:
            run.set("session-close", SKIP, UNASKED_CANCEL_SKIP)
        elif result.get("stopReason") == "cancelled" or error_code(response) == -32800:
            run.set("session-close", PASS, "the running turn ended cancelled; closed")
        elif crossed(turn):
            run.set("session-close", SKIP, "inconclusive: the turn ended as close was sent")
        else:
            run.set("session-close", FAIL, f"the running turn was not cancelled: {short(response)}")

    await run.guard(("session-close",), close)

    async def big() -> None:
        if o.big_prompt_size <= 0:
            raise Skip("--big-prompt-size 0")
        if prompt_skip:
            raise Skip(f"needs a turn: {prompt_skip}")
        text = "Ignore the filler and reply with the single word: ok\n"
        text += "x" * max(0, o.big_prompt_size - len(text))
        turn = await start_turn(p, s2, text)
        response = await p.wait(turn.future, o.turn_timeout, f"a {len(text)}-byte prompt")
        if "error" in response:  # refusing it in words is an answer too
            run.set("big-prompt", PASS, f"answered with an error: {short(response, 120)}")
            await asyncio.sleep(o.grace)
            return
        reason = await finish_turn(run, p, turn, response)
        run.set("big-prompt", PASS, f"{len(text)} bytes: stopReason {reason}")

    await run.guard(("big-prompt",), big)

    async def delete() -> None:
        if session_caps.get("delete") is None:
            raise Skip("sessionCapabilities.delete not advertised")
        response = await p.call("session/delete", {"sessionId": s2}, timeout)
        result_of(response, "session/delete")
        if session_caps.get("list") is not None:
            result = result_of(await p.call("session/list", {}, timeout), "session/list")
            listed = [_object(s).get("sessionId") for s in _list(result.get("sessions"))]
            if s2 in listed:
                raise Fail(f"the deleted session {s2!r} is still listed")
        run.set("session-delete", PASS, "deleted, and no longer listed")

    await run.guard(("session-delete",), delete)


async def run_cases(options: CheckOptions, cwd: str, report: Report) -> None:
    """Run every case; each ends with a result in `report`."""
    run = Run(options=options, cwd=cwd, report=report)
    try:
        sides = [
            run.guard(
                ("version-higher",), lambda: side_version(run, "higher", HIGH_VERSION), False
            ),
            run.guard(("version-lower",), lambda: side_version(run, "lower", 0), False),
            run.guard(("malformed-json", "invalid-request"), lambda: side_bad_frames(run), False),
        ]
        flows = [asyncio.ensure_future(flow) for flow in (_main(run), *sides)]
        try:
            await asyncio.gather(*flows)
        except InitializeUnanswered as error:
            # The side connections wait for the same answer in vain: stop them too, and
            # every process at once (none of them is an agent to end gracefully).
            for peer in run.peers:
                peer.kill()
            for flow in flows:
                flow.cancel()
            await asyncio.gather(*flows, return_exceptions=True)
            run.set("initialize", FAIL, str(error))
            report.stopped.append(str(error))
            run.gone = "the agent did not answer initialize"
        else:
            judge_versions(run)
            await eof_case(run)
            judge(run)
    finally:
        for peer in run.peers:
            await peer.aclose()
    reason = f"not run: {run.gone}" if run.gone else "not run"
    for case in CASES:
        if case.id not in report.results:
            run.set(case.id, SKIP, reason)


def _object(value: Any) -> dict[str, Any]:
    """`value` when the agent sent a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    """`value` when the agent sent a JSON array, else an empty one."""
    return value if isinstance(value, list) else []
