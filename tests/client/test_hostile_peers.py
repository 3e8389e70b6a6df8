"""Hostile and broken agents, on both facades: raw JSON-line peers (tests/client/peers/,
independent of acp_sdk) that stall, die, send malformed answers or junk.

Every blocking step is `guarded`: a hang fails the test (and the harness kills the peer at
teardown) instead of stalling the suite.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from acp_sdk import ConnectionClosed, RemoteProtocolError, RequestTimeout, Side
from acp_sdk.methods import TABLE, Method
from acp_sdk.schema import AgentMessageChunk, TextContent
from tests._parallel import load_factor
from tests.client.facades import FACADES, Harness, close_bound, guarded

pytestmark = pytest.mark.timeout(90)

PEERS = Path(__file__).with_name("peers")
RAW = [sys.executable, str(PEERS / "raw_agent.py")]
FLOOD_AGENT = [sys.executable, str(PEERS / "flood_agent.py")]
SCENARIO = [sys.executable, "-m", "acp_sdk", "agent"]
STEP = 10.0  # seconds any single step may take before it counts as hung


@attrs.frozen(kw_only=True, order=False)
class Blob:
    text: str
    length: int = 0


ECHO = Method.extension("_torture/echo", handled_by=Side.AGENT, params_type=Blob, result_type=Blob)
EXTENDED = TABLE.extend([ECHO])


@pytest.fixture(params=sorted(FACADES))
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    made = Harness(FACADES[request.param], tmp_path)
    yield made
    made.cleanup()


def texts(updates: list[Any]) -> list[str]:
    return [
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    ]


def numbered(count: int) -> list[str]:
    """The "<index:07d> " prefixes raw_agent.py puts on its streamed updates."""
    return [f"{index:07d} " for index in range(count)]


def prefixes(updates: list[Any]) -> list[str]:
    return [text[:8] for text in texts(updates)]


# ------------------------------------------------------------------ 2. request timeouts


@pytest.mark.parametrize("payload", [16, 8 << 20], ids=["fits-the-pipe", "8MiB-never-sent"])
def test_a_request_to_a_peer_that_stopped_reading_times_out(harness: Harness, payload: int) -> None:
    """The timeout covers queueing and sending, not only waiting for the answer."""
    driver = harness.open(
        [*RAW, "--stall"], table=EXTENDED, close_timeout=0.5, terminate_timeout=0.5
    )
    started = time.monotonic()
    with pytest.raises(RequestTimeout) as caught:
        guarded(
            lambda: driver.call("request", ECHO, Blob(text="x" * payload), timeout=1.0),
            6.0,
            "a request with timeout=1",
        )
    assert time.monotonic() - started < 4.0 * load_factor()
    assert isinstance(caught.value, TimeoutError)
    guarded(driver.close, close_bound(0.5, 0.5), "close after the timeout")


def test_a_prompt_timeout_covers_sending_to_a_peer_that_stopped_reading(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The send buffer is already full (an 8 MiB request the peer never read): a prompt
    with a timeout is queued behind it and still times out (the peer never reads the
    cancel either, so the grace ends it with RequestTimeout)."""
    from acp_sdk._driver import turn as turn_rules

    monkeypatch.setattr(turn_rules, "CANCEL_GRACE", 0.5)
    driver = harness.open(
        [*RAW, "--stall"], table=EXTENDED, close_timeout=0.5, terminate_timeout=0.5
    )
    with pytest.raises(RequestTimeout):
        guarded(
            lambda: driver.call("request", ECHO, Blob(text="x" * (8 << 20)), timeout=0.5),
            6.0,
            "filling the send buffer",
        )
    turn = driver.start(driver.client.session("s1"), "hello", timeout=0.5)
    _updates, error = guarded(lambda: driver.drain(turn), 6.0, "a prompt with timeout=0.5")
    assert isinstance(error, RequestTimeout)
    guarded(driver.close, close_bound(0.5, 0.5), "close after the timeout")


# ------------------------------------------------------------------ 3. malformed responses

BAD_RESPONSES = ["both", "error-not-object", "code-string", "no-message"]


@pytest.mark.parametrize("kind", BAD_RESPONSES)
def test_a_malformed_response_fails_its_call_and_only_it(harness: Harness, kind: str) -> None:
    driver = harness.open([*RAW, "--bad-response", kind], table=EXTENDED)
    with pytest.raises(RemoteProtocolError):
        guarded(
            lambda: driver.call("request", ECHO, Blob(text="first", length=1)),
            5.0,
            f"a call answered with a malformed response ({kind})",
        )
    again = guarded(
        lambda: driver.call("request", ECHO, Blob(text="second", length=2)), STEP, "next call"
    )
    assert again == Blob(text="second", length=2)


# ------------------------------------------------------------------ 5. finished turns

RERUNS = [("drain", "drain"), ("drain", "finish"), ("finish", "finish"), ("finish", "drain")]


@pytest.mark.parametrize(("first", "second"), RERUNS, ids=["-then-".join(r) for r in RERUNS])
def test_a_finished_turn_run_again_ends_at_once(harness: Harness, first: str, second: str) -> None:
    """drain = iterate the turn (`list(turn)` / `async for`); finish = `wait()` / `await`."""
    driver = harness.open([*RAW, "--stream", "3"])
    session: Any = guarded(driver.new_session, STEP, "session/new")
    turn = driver.start(session, "go")

    def run(way: str) -> tuple[list[Any], Any]:
        if way == "drain":
            updates, error = driver.drain(turn)
            assert error is None
            return updates, turn.response
        return [], driver.finish(turn)

    updates, response = guarded(lambda: run(first), STEP, "the turn")
    assert response is not None
    assert response.stop_reason == "end_turn"
    if first == "drain":
        assert prefixes(updates) == numbered(3)
    replayed, again = guarded(lambda: run(second), 3.0, f"{second} on a finished turn")
    assert replayed == []  # nothing is replayed
    assert again == response
    assert turn.response == response


# ------------------------------------------------------------------ 8. byte order mark


def test_a_bom_before_the_first_frame_is_tolerated(harness: Harness) -> None:
    driver = harness.open([*RAW, "--bom", "--stream", "2"], timeout=STEP)
    session: Any = guarded(driver.new_session, STEP, "session/new")
    updates, response = guarded(lambda: driver.prompt(session, "go"), STEP, "the turn")
    assert prefixes(updates) == numbered(2)
    assert response.stop_reason == "end_turn"


# ------------------------------------------------------------------ 10. the agent dies

DEATHS = [
    pytest.param("exit3", {"exit_code": 3}, ["agent exited with code 3"], id="exit-code-3"),
    pytest.param("sigkill", {"signal": 9}, ["signal", "9"], id="sigkill"),
]


@pytest.mark.parametrize(("how", "attributes", "words"), DEATHS)
def test_an_agent_dying_mid_turn_is_explained(
    harness: Harness, how: str, attributes: dict[str, int], words: list[str]
) -> None:
    driver = harness.open([*RAW, "--die", how, "--stream", "10"])
    session: Any = guarded(driver.new_session, STEP, "session/new")
    turn = driver.start(session, "go")
    updates, error = guarded(lambda: driver.drain(turn), STEP, "a turn whose agent died")
    assert prefixes(updates) == numbered(2)  # what came before the death is delivered
    assert isinstance(error, ConnectionClosed), repr(error)
    assert isinstance(error, ConnectionError)
    for name, value in attributes.items():
        assert getattr(error, name, None) == value, name
    assert "boom: fatal" in getattr(error, "stderr_tail", "")
    message = str(error)
    assert "boom: fatal" in message
    for word in words:
        assert word in message


def test_a_pending_request_fails_with_the_agents_exit(harness: Harness) -> None:
    driver = harness.open([*RAW, "--die-on-request"], table=EXTENDED)
    with pytest.raises(ConnectionClosed) as caught:
        guarded(lambda: driver.call("request", ECHO, Blob(text="x")), STEP, "a request")
    assert getattr(caught.value, "exit_code", None) == 3
    assert "boom: fatal" in getattr(caught.value, "stderr_tail", "")
    assert "agent exited with code 3" in str(caught.value)


# ------------------------------------------------------------------ 13. one malformed frame

JUNK = [
    "not-json",
    "array",
    "unknown-id",
    "garbage-10mb",
    "scalar",
    "unknown-request",
    "bad-params",
    "crlf-blank",
]


@pytest.mark.parametrize("junk", JUNK)
def test_one_malformed_frame_among_valid_ones_loses_nothing(harness: Harness, junk: str) -> None:
    driver = harness.open([*RAW, "--stream", "50", "--junk", junk])
    session: Any = guarded(driver.new_session, STEP, "session/new")
    for _ in range(2):  # and the client stays usable
        updates, response = guarded(lambda: driver.prompt(session, "go"), 20.0, "the turn")
        assert prefixes(updates) == numbered(50)
        assert response.stop_reason == "end_turn"


# ------------------------------------------------------------------ 6. agent at EOF

AGENTS = {"scenario": SCENARIO, "run_agent": FLOOD_AGENT}
STDINS = ["devnull", "empty-pipe"]


@pytest.mark.parametrize("stdin", STDINS)
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_an_agent_whose_stdin_is_at_eof_exits_cleanly(agent: str, stdin: str) -> None:
    if stdin == "devnull":
        result = subprocess.run(
            AGENTS[agent], stdin=subprocess.DEVNULL, capture_output=True, timeout=15
        )
    else:
        result = subprocess.run(AGENTS[agent], input=b"", capture_output=True, timeout=15)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert b"Traceback" not in result.stderr
    assert result.stdout == b""
