"""`python -m acp_sdk replay`: a recorded scenario turn played back to both clients, and
`replay --against` re-driving a real agent. Real processes throughout."""

from __future__ import annotations

import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from acp_sdk import Client
from acp_sdk.handlers import AllowOnce
from acp_sdk.schema import RequestPermissionRequest, RequestPermissionResponse
from tests.client.facades import FACADES
from tests.tools._recording_helpers import AGENT, CLI, ROOT, relay, run_cli

pytestmark = pytest.mark.timeout(90)


class Asked(AllowOnce):
    """Allows, and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        self.asked.append(str(params.tool_call.title))
        return super().request_permission(params)


def record_demo(path: Path) -> tuple[str, list[Any], str]:
    """Record a full `demo` turn of the scenario agent; returns what the client saw."""
    with Client.spawn(relay(path, *AGENT), handlers=[AllowOnce()], cwd=ROOT) as client:
        session = client.new_session(cwd="/tmp")
        turn = session.prompt("demo")
        updates = list(turn)
        return session.session_id, updates, str(turn.stop_reason)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[Any], str]:
    path = tmp_path_factory.mktemp("rec") / "demo.jsonl"
    return (path, *record_demo(path))


@pytest.mark.parametrize("facade", sorted(FACADES))
def test_a_recorded_turn_replays_to_both_clients(
    facade: str, demo: tuple[Path, str, list[Any], str]
) -> None:
    path, session_id, updates, stop_reason = demo
    handler = Asked()
    with FACADES[facade]([*CLI, "replay", str(path)], handlers=[handler]) as driver:
        assert driver.agent_info.name == "acp-sdk-scenario-agent"
        session = driver.new_session()
        assert session.session_id == session_id
        replayed, response = driver.prompt(session, "demo")
    assert replayed == updates
    assert str(response.stop_reason) == stop_reason
    assert handler.asked == ["Edit config.json"]  # the recorded permission request, asked again


def test_a_request_the_recording_has_no_answer_for_gets_an_error(
    demo: tuple[Path, str, list[Any], str],
) -> None:
    path = demo[0]
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {}},
    ]
    result = run_cli("replay", str(path), stdin=b"".join(orjson.dumps(m) + b"\n" for m in lines))
    assert result.returncode == 0, result.stderr
    # Answered concurrently, as an agent may: in any order.
    answers = sorted(
        (orjson.loads(line) for line in result.stdout.splitlines()), key=lambda a: a["id"]
    )
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[0]["result"]["protocolVersion"] == 1
    assert answers[1]["error"]["code"] == -32603
    assert "no more answers for session/list" in answers[1]["error"]["data"]["reason"]


def test_replay_against_the_same_agent_reports_no_difference(
    demo: tuple[Path, str, list[Any], str],
) -> None:
    result = run_cli("replay", str(demo[0]), "--against", "--", *AGENT)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout.decode()
    assert "session/prompt (id 2): same" in out
    assert "all 3 the same" in out


def test_replay_against_reports_where_answers_differ(
    demo: tuple[Path, str, list[Any], str], tmp_path: Path
) -> None:
    # The recorded agent answered differently: its stop reason and its last words.
    edited = tmp_path / "edited.jsonl"
    lines = []
    for line in demo[0].read_bytes().splitlines():
        entry = orjson.loads(line)
        text = entry.get("text", "")
        if entry.get("from") == "agent" and '"stopReason"' in text:
            entry["text"] = text.replace('"end_turn"', '"max_tokens"')
        if entry.get("from") == "agent" and '"text":"request. "' in text:
            entry["text"] = text.replace("request. ", "request! ")
        lines.append(orjson.dumps(entry))
    edited.write_bytes(b"\n".join(lines) + b"\n")
    result = run_cli("replay", str(edited), "--against", "--", *AGENT)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout.decode()
    assert "session/prompt (id 2): differs" in out
    assert 'result.stopReason: recorded "max_tokens", now "end_turn"' in out
    assert 'recorded "request! ", now "request. "' in out
    assert "1 of 3 answers differ" in out
    assert "initialize (id 0): same" in out


@pytest.fixture(scope="module")
def cancelled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recorded `wait` turn, cancelled by the client."""
    path = tmp_path_factory.mktemp("rec") / "wait.jsonl"
    with FACADES["sync"](relay(path, *AGENT)) as driver:
        _, response = driver.prompt_and_cancel(driver.new_session(), "wait", after=0.2)
        assert str(response.stop_reason) == "cancelled"
    return path


@pytest.mark.parametrize("facade", sorted(FACADES))
def test_a_recorded_cancelled_turn_replays_when_the_client_cancels(
    facade: str, cancelled: Path
) -> None:
    with FACADES[facade]([*CLI, "replay", str(cancelled)]) as driver:
        _, response = driver.prompt_and_cancel(driver.new_session(), "wait", after=0.2)
    assert str(response.stop_reason) == "cancelled"


def test_the_replayed_agent_answers_a_cancelled_turn_only_after_the_cancel(
    cancelled: Path,
) -> None:
    with Client.spawn([*CLI, "replay", str(cancelled)]) as client:
        session = client.new_session(cwd="/tmp")
        turn = session.prompt("wait")
        done = threading.Event()

        def drain() -> None:
            list(turn)
            done.set()

        threading.Thread(target=drain, daemon=True).start()
        assert not done.wait(0.5)  # the recorded agent waited for the cancel: so does this
        session.cancel()
        assert done.wait(30)
        assert str(turn.stop_reason) == "cancelled"


def test_a_cancel_in_the_same_read_as_its_prompt_still_counts(cancelled: Path) -> None:
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp"}},
    ]
    replay = subprocess.Popen(
        [*CLI, "replay", str(cancelled)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert replay.stdin is not None
    assert replay.stdout is not None
    reader = threading.Thread()
    try:
        replay.stdin.write(b"".join(orjson.dumps(f) + b"\n" for f in frames))
        replay.stdin.flush()
        answers: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()

        def read() -> None:
            for line in replay.stdout:  # type: ignore[union-attr]
                answers.put(orjson.loads(line))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        session = None
        while session is None:
            answer = answers.get(timeout=30)
            session = (
                (answer.get("result") or {}).get("sessionId") if answer.get("id") == 2 else None
            )
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]}
        both = [
            {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt},
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}},
        ]
        replay.stdin.write(b"".join(orjson.dumps(f) + b"\n" for f in both))  # one write
        replay.stdin.flush()
        while (answer := answers.get(timeout=30)).get("id") != 3:
            pass
        assert answer["result"]["stopReason"] == "cancelled"
    finally:
        replay.stdin.close()
        replay.wait(30)
        if reader.ident is not None:
            reader.join(30)
        replay.stdout.close()


def test_replay_against_sends_the_cancel_as_the_recorded_client_did(cancelled: Path) -> None:
    result = run_cli("replay", str(cancelled), "--against", "--", *AGENT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "session/prompt (id 2): same" in result.stdout.decode()  # cancelled, as recorded
