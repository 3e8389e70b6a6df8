"""Frames recorded from real ACP agents (tests/fixtures/real_agents, see its README).

Every recorded frame decodes with acp_sdk to the type its method gives it (a response:
the result type of the request it answers; an error response: `Error`) and encodes back
to exactly the recorded JSON. Then both clients run the recorded conversation against
`replay_agent.py`, which answers with the recorded frames: what they return (or raise)
must be exactly what the real agent said.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

import acp_sdk
from acp_sdk import RequestError
from acp_sdk.methods import TABLE
from acp_sdk.schema import (
    Error,
    SessionConfigOptionSelect,
    SessionNotification,
    UnknownSessionUpdate,
)
from tests.client.facades import FACADES, Facade, Harness, guarded

pytestmark = pytest.mark.timeout(60)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "real_agents"
REPLAY = FIXTURES / "replay_agent.py"
RECORDINGS = sorted(FIXTURES.glob("*.jsonl"))
ROWS = {row.wire: row for row in TABLE}
STEP_TIMEOUT = 10.0

Json = dict[str, Any]


@dataclass(frozen=True)
class Recorded:
    """One recorded frame, classified."""

    recording: str
    index: int
    direction: str  # "out": recorder -> agent; "in": agent -> recorder
    frame: Json
    method: str  # its own method, or the method of the request it answers
    kind: str  # "request", "notification", "result" or "error"

    @property
    def payload(self) -> Any:
        return self.frame[{"request": "params", "notification": "params"}.get(self.kind, self.kind)]

    @property
    def model_type(self) -> Any:
        if self.kind == "error":
            return Error
        row = ROWS[self.method]
        return row.result_type if self.kind == "result" else row.params_type

    def __str__(self) -> str:
        return f"{self.recording}:{self.index:02d}-{self.direction}-{self.method}-{self.kind}"


def load(path: Path) -> list[Recorded]:
    frames: list[Recorded] = []
    asked: dict[tuple[str, Any], str] = {}  # (direction, id) -> method of that request
    for index, line in enumerate(path.read_bytes().splitlines()):
        record = orjson.loads(line)
        direction, frame = record["dir"], record["frame"]
        assert direction in ("in", "out"), record
        assert frame.get("jsonrpc") == "2.0", record
        if "method" in frame:
            method = frame["method"]
            kind = "request" if "id" in frame else "notification"
            if kind == "request":
                asked[direction, frame["id"]] = method
        else:
            other = "out" if direction == "in" else "in"
            method = asked.pop((other, frame["id"]))
            kind = "error" if "error" in frame else "result"
        frames.append(Recorded(path.stem, index, direction, frame, method, kind))
    return frames


FRAMES = [frame for path in RECORDINGS for frame in load(path)]


def wire(model: Any) -> Any:
    return orjson.loads(acp_sdk.encode(model))


def test_the_recordings_are_there() -> None:
    names = {path.stem.rsplit("-", 1)[0] for path in RECORDINGS}
    assert names == {"codex-acp", "claude-agent-acp", "claude-code-acp"}
    for path in RECORDINGS:
        methods = {(f.method, f.kind) for f in load(path) if f.direction == "in"}
        assert ("initialize", "result") in methods, path.name
        assert ("authenticate", "error") in methods, path.name


@pytest.mark.parametrize("recorded", FRAMES, ids=str)
def test_every_recorded_frame_round_trips(recorded: Recorded) -> None:
    """decode(payload, type of its method) then encode gives exactly the recorded JSON."""
    assert recorded.method in ROWS, f"no row for {recorded.method}"
    decoded = acp_sdk.decode(recorded.payload, recorded.model_type)
    assert wire(decoded) == recorded.payload
    if recorded.method == "session/update":
        assert isinstance(decoded, SessionNotification)
        assert not isinstance(decoded.update, UnknownSessionUpdate), recorded.payload
    for option in getattr(decoded, "config_options", None) or []:
        assert isinstance(option, SessionConfigOptionSelect), option  # all are selects


# ------------------------------------------------------------------ replayed conversations


@pytest.fixture(params=sorted(FACADES))
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    made = Harness(FACADES[request.param], tmp_path)
    yield made
    made.cleanup()


@dataclass
class Conversation:
    driver: Facade
    session: Any = None


def _new_session(talk: Conversation, params: Json) -> Any:
    talk.session = talk.driver.new_session(cwd=params["cwd"])
    return talk.session.response


def _set_mode(talk: Conversation, params: Json) -> Any:
    return talk.driver.call("set_mode", session_id=params["sessionId"], mode_id=params["modeId"])


def _set_config_option(talk: Conversation, params: Json) -> Any:
    row = ROWS["session/set_config_option"]
    return talk.driver.call("set_config_option", acp_sdk.decode(params, row.params_type))


def _prompt(talk: Conversation, params: Json) -> Any:
    [block] = params["prompt"]
    _updates, response = talk.driver.prompt(talk.session, block["text"])
    return response


def _authenticate(talk: Conversation, params: Json) -> Any:
    return talk.driver.call("authenticate", method_id=params["methodId"])


STEPS: dict[str, Callable[[Conversation, Json], Any]] = {
    "session/new": _new_session,
    "session/set_mode": _set_mode,
    "session/set_config_option": _set_config_option,
    "session/prompt": _prompt,
    "authenticate": _authenticate,
}


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda path: path.stem)
def test_our_clients_get_what_the_agent_said(harness: Harness, recording: Path) -> None:
    frames = load(recording)
    requests = [f for f in frames if f.direction == "out" and f.kind == "request"]
    answers = {
        (f.method, f.frame["id"]): f
        for f in frames
        if f.direction == "in" and f.kind in ("result", "error")
    }
    notified = [f.payload for f in frames if f.direction == "in" and f.kind == "notification"]
    seen: list[SessionNotification] = []
    driver = harness.open(
        [sys.executable, str(REPLAY), str(recording)],
        timeout=STEP_TIMEOUT,
        request_timeout=STEP_TIMEOUT,
        on_update=seen.append,
    )
    [initialize, *rest] = requests
    assert initialize.method == "initialize"
    answer = answers["initialize", initialize.frame["id"]]
    assert wire(driver.client.initialize_response) == answer.frame["result"]

    talk = Conversation(driver)
    for request in rest:
        answer = answers[request.method, request.frame["id"]]
        step = functools.partial(STEPS[request.method], talk, request.frame["params"])
        if answer.kind == "result":
            result = guarded(step, STEP_TIMEOUT + 5, request.method)
            assert wire(result) == answer.frame["result"], request.method
        else:
            with pytest.raises(RequestError) as caught:
                guarded(step, STEP_TIMEOUT + 5, request.method)
            error = answer.frame["error"]
            assert caught.value.code == error["code"], request.method
            assert caught.value.message == error["message"], request.method
            assert caught.value.data == error.get("data"), request.method

    deadline = time.monotonic() + STEP_TIMEOUT
    while len(seen) < len(notified) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [wire(notification) for notification in seen] == notified


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda p: p.stem)
def test_session_state_folds_every_recorded_update(recording: Path) -> None:
    """What real agents send folds into a `SessionState` without error, and nothing
    they send is left as an unknown update."""
    from acp_sdk import SessionState
    from acp_sdk.schema import SessionNotification

    updates = [
        acp_sdk.decode(f.frame["params"], SessionNotification).update
        for f in load(recording)
        if f.method == "session/update" and f.kind == "notification"
    ]
    state = SessionState()
    for update in updates:
        state = state.apply(update)
    assert state.unknown_updates == ()
    if updates:  # the Claude agents announce their commands (and more) after session/new
        assert state != SessionState()
