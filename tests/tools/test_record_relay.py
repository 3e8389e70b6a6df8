"""`python -m acp_sdk record`: the relay passes everything through unchanged and records
every frame, losslessly. Real processes throughout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_sdk import Client
from acp_sdk.handlers import AllowOnce
from acp_sdk.schema import AgentMessageChunk
from acp_sdk.tools._record import frame_bytes
from tests.tools._recording_helpers import AGENT, ROOT, entries, relay

pytestmark = pytest.mark.timeout(90)

# Copies its stdin to its stdout in whatever chunks it reads (partial lines included).
CAT = [
    sys.executable,
    "-c",
    "import os\nwhile True:\n    b = os.read(0, 65536)\n    if not b: break\n    os.write(1, b)\n",
]


def stream_bytes(entries_: list[dict[str, Any]], origin: str) -> bytes:
    """A direction's bytes rebuilt from the recording."""
    out = bytearray()
    for entry in entries_:
        if entry.get("from") == origin:
            out += frame_bytes(entry)
            if not entry.get("partial"):
                out += b"\n"
    return bytes(out)


def test_a_scenario_turn_is_recorded_frame_by_frame(tmp_path: Path) -> None:
    out = tmp_path / "turn.jsonl"
    with Client.spawn(relay(out, *AGENT), handlers=[AllowOnce()], cwd=ROOT) as client:
        session = client.new_session(cwd=str(tmp_path))
        turn = session.prompt("demo")
        updates = list(turn)
        assert str(turn.stop_reason) == "end_turn"
    recorded = entries(out)
    assert recorded[0]["acp_sdk_recording"] == 1
    assert recorded[0]["argv"] == AGENT
    assert recorded[-1]["exit"] == 0
    frames = recorded[1:-1]
    assert all(isinstance(f["t"], float) for f in frames)
    assert [f["t"] for f in frames] == sorted(f["t"] for f in frames)
    agent_updates = [f for f in frames if f["from"] == "agent" and "session/update" in f["text"]]
    assert len(agent_updates) == len(updates)
    assert any(f["from"] == "client" and '"session/prompt"' in f["text"] for f in frames)
    assert any(f["from"] == "agent" and "session/request_permission" in f["text"] for f in frames)


def test_a_burst_of_10000_updates_arrives_whole(tmp_path: Path) -> None:
    out = tmp_path / "burst.jsonl"
    with Client.spawn(relay(out, *AGENT), cwd=ROOT) as client:
        session = client.new_session(cwd=str(tmp_path))
        turn = session.prompt("stream 10000")
        updates = [u for u in turn if isinstance(u, AgentMessageChunk)]
    assert len(updates) == 10_000
    recorded = entries(out)
    assert sum(1 for f in recorded if "session/update" in str(f.get("text", ""))) == 10_000


def test_bytes_pass_byte_identical_under_a_burst(tmp_path: Path) -> None:
    """10,000 update frames written by the agent reach the client byte for byte, and the
    recording rebuilds them exactly."""
    payload = tmp_path / "payload.bin"
    lines = [
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"w%d \\u00e9"}}}}'
        % n
        for n in range(10_000)
    ]
    data = b"\n".join(lines) + b"\n"
    payload.write_bytes(data)
    out = tmp_path / "burst.jsonl"
    agent = [
        sys.executable,
        "-c",
        f"import sys; sys.stdout.buffer.write(open({str(payload)!r}, 'rb').read())",
    ]
    result = subprocess.run(
        relay(out, *agent), capture_output=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == data
    assert stream_bytes(entries(out), "agent") == data


def test_partial_lines_and_a_huge_frame_pass_unchanged(tmp_path: Path) -> None:
    huge = b'{"jsonrpc":"2.0","method":"x","params":{"blob":"' + b"a" * (8 << 20) + b'"}}'
    data = b"par" + b"tial\n" + huge + b"\n" + b"\xff\xfe not utf-8\n" + b"no newline at the end"
    out = tmp_path / "huge.jsonl"
    result = subprocess.run(relay(out, *CAT), input=data, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == data
    recorded = entries(out)
    assert stream_bytes(recorded, "client") == data
    assert stream_bytes(recorded, "agent") == data
    client = [e for e in recorded if e.get("from") == "client"]
    assert client[0]["text"] == "partial"
    assert client[1]["text"] == huge.decode()
    assert "b64" in client[2]
    assert client[-1]["partial"] is True
    assert client[-1]["text"] == "no newline at the end"


def test_exit_code_and_stderr_pass_through(tmp_path: Path) -> None:
    out = tmp_path / "exit.jsonl"
    agent = [sys.executable, "-c", "import sys; sys.stderr.write('boom\\nlast'); sys.exit(7)"]
    result = subprocess.run(
        relay(out, *agent), capture_output=True, timeout=30, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 7
    assert result.stderr == b"boom\nlast"
    assert result.stdout == b""
    recorded = entries(out)
    assert [e["text"] for e in recorded if e.get("from") == "stderr"] == ["boom", "last"]
    assert recorded[-1]["exit"] == 7


def test_a_command_that_does_not_exist(tmp_path: Path) -> None:
    out = tmp_path / "missing.jsonl"
    result = subprocess.run(
        relay(out, "/nonexistent/agent"), capture_output=True, timeout=30, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 127
    assert b"cannot start the agent" in result.stderr


# Says "ready" once its handlers are in place, then reports the signal it got.
HANDLES = (
    "import signal, sys, time\n"
    "def got(n, f):\n"
    "    sys.stderr.write(f'got {n}\\n'); sys.stderr.flush(); sys.exit(3)\n"
    "for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP): signal.signal(s, got)\n"
    "print('ready', flush=True)\n"
    "time.sleep(60)\n"
)
DIES = "import time\nprint('ready', flush=True)\ntime.sleep(60)\n"


def _started(argv: list[str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"ready\n"
    return process


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signals_are_forwarded_to_the_agent(tmp_path: Path, signum: int) -> None:
    process = _started(relay(tmp_path / "sig.jsonl", sys.executable, "-c", HANDLES))
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 3
    assert f"got {int(signum)}".encode() in err


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_an_agent_killed_by_a_signal_kills_the_relay_the_same_way(tmp_path: Path) -> None:
    out = tmp_path / "killed.jsonl"
    process = _started(relay(out, sys.executable, "-c", DIES))
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGTERM
    # The recording is complete before the relay kills itself.
    assert entries(out)[-1]["signal"] == signal.SIGTERM


def test_a_recording_that_cannot_be_written_is_a_usage_error(tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "dir.jsonl"
    result = subprocess.run(
        relay(out, *CAT), capture_output=True, timeout=30, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 2
    assert b"cannot write the recording" in result.stderr
    assert b"Traceback" not in result.stderr
