"""Load, shutdown and memory torture for both facades, black-box: bursts against a peer
that stopped reading, process groups that ignore SIGTERM, stray warnings, bounded memory
(peak RSS of a child process, never timings), and everything at once.

Every blocking step is `guarded`, so a hang fails the test instead of stalling the suite;
the harness kills leftover peers at teardown.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from acp_sdk import ConnectionClosed, RequestTimeout, Side
from acp_sdk.methods import TABLE, Method, Notification
from acp_sdk.schema import AgentMessageChunk, TextContent
from tests.client.facades import (
    FACADES,
    Call,
    Harness,
    alive,
    close_bound,
    guarded,
    wait_gone,
)

pytestmark = pytest.mark.timeout(120)

PEERS = Path(__file__).with_name("peers")
RAW = [sys.executable, str(PEERS / "raw_agent.py")]
PROBE = [sys.executable, str(PEERS / "probe_client.py")]
FLOOD_AGENT = [sys.executable, str(PEERS / "flood_agent.py")]
ROOT = Path(__file__).resolve().parents[2]
GRACE = {"close_timeout": 0.5, "terminate_timeout": 0.5}
BOUND = close_bound(0.5, 0.5)
STEP = 10.0
MIB = 1024


@attrs.frozen(kw_only=True, order=False)
class Blob:
    text: str
    length: int = 0


ECHO = Method.extension("_torture/echo", handled_by=Side.AGENT, params_type=Blob, result_type=Blob)
COUNT = Method.extension(
    "_torture/count", handled_by=Side.AGENT, params_type=Blob, result_type=Blob
)
NOTE = Notification.extension("_torture/note", handled_by=Side.AGENT, params_type=Blob)
EXTENDED = TABLE.extend([ECHO, COUNT, NOTE])


@pytest.fixture(params=sorted(FACADES))
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    made = Harness(FACADES[request.param], tmp_path)
    yield made
    made.cleanup()


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONASYNCIODEBUG", "PYTHONWARNINGS")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def probe(*args: str, flags: tuple[str, ...] = (), timeout: float = 90) -> tuple[Any, str]:
    """Run probe_client.py in a child process: its JSON result and its stderr."""
    done = subprocess.run(
        [sys.executable, *flags, *PROBE[1:], *args],
        capture_output=True,
        timeout=timeout,
        env=child_env(),
        cwd=ROOT,
    )
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 0, stderr[-4000:]
    return json.loads(done.stdout.splitlines()[-1]), stderr


def in_order(updates: list[Any], count: int) -> bool:
    got = [
        u.content.text[:8]
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    ]
    return got == [f"{index:07d} " for index in range(count)]


# ------------------------------------------------------------------ 1. bursts, no reader

PAD = "n" * 4096
BURSTS: dict[str, tuple[str, Callable[[int], Call]]] = {
    "notify": ("notify", lambda i: ((NOTE, Blob(text=PAD, length=i)), {})),
    "notify-timeout": ("notify", lambda i: ((NOTE, Blob(text=PAD, length=i)), {"timeout": 0.5})),
    "session-cancel": ("cancel", lambda i: ((), {"session_id": f"s{i}"})),
    "request-timeout": ("request", lambda i: ((ECHO, Blob(text=PAD, length=i)), {"timeout": 5.0})),
}


@pytest.mark.parametrize("kind", sorted(BURSTS))
def test_a_burst_to_a_peer_that_stopped_reading_never_deadlocks(
    harness: Harness, kind: str
) -> None:
    """10,000 sends from 20 threads/tasks; the peer answered initialize, then stopped
    reading. Closing returns within its bound and every sender returns: sent (queued),
    ConnectionClosed or RequestTimeout, never stuck."""
    pidfile = harness.pidfile()
    driver = harness.open([*RAW, "--stall", "--pidfile", pidfile], table=EXTENDED, **GRACE)
    name, build = BURSTS[kind]
    calls = [build(index) for index in range(10_000)]
    results: list[list[BaseException | None]] = []
    senders = threading.Thread(
        target=lambda: results.append(driver.burst(name, calls, workers=20)), daemon=True
    )
    senders.start()
    time.sleep(1.0)  # the pipe is full by now: senders block, or queue and time out
    guarded(driver.close, BOUND, "close during the burst")
    senders.join(STEP)
    assert not senders.is_alive(), "senders still blocked after close"
    [outcomes] = results
    unexpected = [
        o
        for o in outcomes
        if o is not None and not isinstance(o, (ConnectionClosed, RequestTimeout))
    ]
    assert unexpected == []
    if name == "request":
        assert None not in outcomes  # the peer never answers
    assert wait_gone(harness.pids(pidfile)) == []


# ------------------------------------------------------------------ 4. process groups

WRAPPERS = {
    "exec": "exec {command}",
    "sh-parent": "{command}; exit $?",
    "background-and-wait": "exec 3<&0; {command} <&3 & wait",  # fd 3: keep stdin
}


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_close_stops_the_whole_process_group(harness: Harness, wrapper: str) -> None:
    """The agent, under a shell, ignores SIGTERM and stdin EOF; close still ends it all."""
    pidfile = harness.pidfile()
    command = shlex.join([*RAW, "--ignore-term", "--ignore-eof", "--pidfile", pidfile])
    driver = harness.open(["sh", "-c", WRAPPERS[wrapper].format(command=command)], **GRACE)
    pids = harness.pids(pidfile)
    assert len(pids) == (1 if wrapper == "exec" else 2)  # the shell stayed as the parent
    guarded(driver.close, BOUND, "close")
    assert wait_gone(pids) == []
    guarded(driver.close, 1.0, "a second close")  # idempotent: returns at once


# ------------------------------------------------------------------ 7. stray warnings

WARNING_SCENARIOS = {
    "async-cancel-turn": {},
    "async-close-mid-turn": {"closed": True},
    "async-wrapped": {},
    "sync-wrapped": {},
    "sync-close-mid-turn": {"closed": True, "joined": True},
}
STRAY = [
    "Traceback",
    "Task exception was never retrieved",
    "Event loop is closed",
    "ResourceWarning",
    "unclosed",
    "Exception ignored",
    "Exception in thread",
    "was never awaited",
]


@pytest.mark.parametrize("scenario", sorted(WARNING_SCENARIOS))
def test_no_stray_warnings_or_tracebacks(scenario: str) -> None:
    result, stderr = probe(scenario, flags=("-W", "error"), timeout=60)
    assert result == WARNING_SCENARIOS[scenario]
    assert [marker for marker in STRAY if marker in stderr] == [], stderr[-4000:]


# ------------------------------------------------------------------ 9. bounded memory

FACADE_NAMES = sorted(FACADES)


@pytest.mark.parametrize("max_buffered", [None, 256], ids=["default", "max_buffered_updates"])
@pytest.mark.parametrize("facade", FACADE_NAMES)
def test_a_slow_consumer_keeps_the_client_bounded(facade: str, max_buffered: int | None) -> None:
    """100,000 updates of ~2 KB (about 200 MB on the wire) stream while the consumer
    sleeps; buffering them all would grow the client by far more than the bound."""
    count = 100_000
    extra = [] if max_buffered is None else [str(max_buffered)]
    result, _ = probe("slow-consumer", facade, str(count), "2000", *extra)
    assert result["count"] == count  # bounded does not mean lossy
    assert result["in_order"]
    assert result["stop"] == "end_turn"
    growth_mib = (result["peak_kb"] - result["baseline_kb"]) / MIB
    assert growth_mib < 100, f"client grew {growth_mib:.0f} MiB"


def vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def frame(rid: int, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


def test_an_agent_flooding_a_client_that_stopped_reading_stays_bounded(tmp_path: Path) -> None:
    """An acp_sdk agent streams as fast as it can; the client reads nothing more. The
    agent's memory stays bounded, and it exits once the client goes away."""
    errors = (tmp_path / "stderr").open("wb")
    agent = subprocess.Popen(
        FLOOD_AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, env=child_env()
    )
    assert agent.stdin is not None
    assert agent.stdout is not None
    stdin, stdout = agent.stdin, agent.stdout
    try:
        opening: list[tuple[int, str, dict[str, Any]]] = [
            (0, "initialize", {"protocolVersion": 1}),
            (1, "session/new", {"cwd": "/tmp", "mcpServers": []}),
        ]
        for rid, method, params in opening:
            stdin.write(frame(rid, method, params))
            stdin.flush()
            assert b'"result"' in guarded(stdout.readline, STEP, f"the {method} answer")
        baseline = vm_hwm_kib(agent.pid)
        prompt = {"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]}
        stdin.write(frame(2, "session/prompt", prompt))
        stdin.flush()
        assert b"session/update" in guarded(stdout.readline, STEP, "the first update")
        time.sleep(4.0)  # the agent keeps producing; nobody reads
        growth_mib = (vm_hwm_kib(agent.pid) - baseline) / MIB
        assert growth_mib < 100, f"agent grew {growth_mib:.0f} MiB"
        stdout.close()  # the client goes away
        stdin.close()
        code = guarded(lambda: agent.wait(), STEP, "the agent exiting after the client left")
        assert code is not None
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        errors.close()


# ------------------------------------------------------------------ 11. huge stderr line


@pytest.mark.parametrize("facade", FACADE_NAMES)
def test_a_50mb_stderr_line_is_truncated_not_held(facade: str) -> None:
    stats, _ = probe("stderr-flood", facade, "50")
    assert stats["stop"] == "end_turn"  # the client stayed usable
    assert stats["x_lines"] >= 1  # the line arrived ...
    assert stats["max_len"] <= 1 << 20  # ... truncated ...
    assert stats["unmarked_long"] == 0  # ... with a visible marker
    assert stats["after"]  # and the next line arrived too
    assert "tail_error" not in stats, stats.get("tail_error")
    assert stats["tail_type"] == "str"
    assert stats["tail_len"] <= 128 * 1024
    assert stats["tail_has_after"]
    growth_mib = (stats["peak_kb"] - stats["baseline_kb"]) / MIB
    assert growth_mib < 40, f"client grew {growth_mib:.0f} MiB"


# ------------------------------------------------------------------ 12. all at once


def test_torture(harness: Harness) -> None:
    """Per facade: 10,000 messages each way at once; a peer that dies mid-turn; a wrapper
    whose grandchild ignores SIGTERM. Nothing hangs, closes are bounded, nothing is left."""
    # Both ways at once: the agent streams 10,000 updates while we send 10,000 notes.
    pidfile = harness.pidfile()
    both = harness.open(
        [*RAW, "--stream", "10000", "--size", "64", "--pidfile", pidfile],
        table=EXTENDED,
        **GRACE,
    )
    session: Any = guarded(both.new_session, STEP, "session/new")
    notes: list[Call] = [((NOTE, Blob(text="note", length=i)), {}) for i in range(10_000)]
    updates, error, outcomes = guarded(
        lambda: both.prompt_with_burst(session, "go", "notify", notes), 60.0, "both ways at once"
    )
    assert error is None
    assert in_order(updates, 10_000)
    assert [o for o in outcomes if o is not None] == []
    seen = guarded(lambda: both.call("request", COUNT, Blob(text="")), STEP, "count")
    assert seen.length == 10_000  # every notification arrived
    guarded(both.close, BOUND, "close after the bursts")
    assert wait_gone(harness.pids(pidfile)) == []

    # A peer that dies mid-turn.
    dying = harness.open([*RAW, "--die", "exit3", "--stream", "100"], **GRACE)
    session = guarded(dying.new_session, STEP, "session/new")
    _, error = guarded(lambda: dying.drain(dying.start(session, "go")), STEP, "a dying turn")
    assert isinstance(error, ConnectionClosed)
    guarded(dying.close, BOUND, "close after the death")

    # A wrapper whose grandchild ignores SIGTERM and stdin EOF.
    pidfile = harness.pidfile()
    command = shlex.join([*RAW, "--ignore-term", "--ignore-eof", "--pidfile", pidfile])
    stubborn = harness.open(["sh", "-c", f"{command}; exit $?"], **GRACE)
    pids = harness.pids(pidfile)
    assert all(alive(pid) for pid in pids)
    guarded(stubborn.close, BOUND, "close of the stubborn wrapper")
    assert wait_gone(pids) == []
