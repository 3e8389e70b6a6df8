"""A recording nobody vouches for: a frame whose `t`, `text` or `b64` has the wrong
shape is refused naming its line (`RecordingError`; exit code 2 from `show` and
`replay`), never a traceback; messages of odd shapes (ids JSON-RPC does not allow) are
shown and replayed."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from acp_sdk.tools._recording import RecordingError, load
from tests.tools._recording_helpers import run_cli

pytestmark = pytest.mark.timeout(60)
HEADER = '{"acp_sdk_recording": 1, "argv": ["agent"]}\n'


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"from": "agent", "t": "soon", "text": "{}"}', "`t` is not a number"),
        ('{"from": "agent", "t": null, "text": "{}"}', "`t` is not a number"),
        ('{"from": "agent", "t": true, "text": "{}"}', "`t` is not a number"),
        ('{"from": "agent", "t": 0, "text": 5}', "`text` is not a string"),
        ('{"from": "agent", "t": 0, "b64": "@@@"}', "`b64` is not base64"),
        ('{"from": "agent", "t": 0, "b64": 7}', "`b64` is not base64"),
        ('{"exit": 0, "t": []}', "`t` is not a number"),
    ],
)
def test_a_malformed_frame_is_refused_naming_its_line(line: str, says: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(HEADER + '{"from": "client", "t": 0.5, "text": "{}"}\n' + line + "\n")
    with pytest.raises(RecordingError, match=f":3: .*{says}"):
        load(str(path))


def test_well_formed_frames_still_load(tmp_path: Path) -> None:
    path = tmp_path / "good.jsonl"
    path.write_text(
        HEADER
        + '{"from": "client", "t": 1, "text": "{\\"id\\": 1, \\"method\\": \\"x\\"}"}\n'
        + '{"from": "agent", "t": 1.5, "b64": "/w=="}\n'
        + '{"exit": 3, "t": 2}\n'
    )
    recording = load(str(path))
    assert [frame.data for frame in recording.frames] == [b'{"id": 1, "method": "x"}', b"\xff"]
    assert recording.frames[0].is_request
    assert (recording.exit_code, recording.ended_at) == (3, 2.0)


@pytest.mark.parametrize("command", ["show", "replay"])
def test_the_cli_says_so_with_exit_code_2(command: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(HEADER + '{"from": "agent", "t": 0, "text": 5}\n')
    result = run_cli(command, str(path))
    assert result.returncode == 2, result.stderr
    assert b"bad.jsonl:2: the frame's `text` is not a string" in result.stderr
    assert b"Traceback" not in result.stderr


def test_ids_json_rpc_does_not_allow_are_shown_and_replayed(tmp_path: Path) -> None:
    """An array or object as a request id (not JSON-RPC, but a recording keeps what
    was said) is no crash (before: `TypeError: unhashable type` in show and replay)."""
    frames = [
        ("client", '{"jsonrpc": "2.0", "id": [1], "method": "session/new", "params": {}}'),
        ("agent", '{"jsonrpc": "2.0", "id": [1], "result": {"sessionId": "s"}}'),
        ("agent", '{"jsonrpc": "2.0", "id": {"a": 1}, "method": "fs/read_text_file"}'),
        ("client", '{"jsonrpc": "2.0", "id": {"a": 1}, "result": {}}'),
    ]
    path = tmp_path / "odd_ids.jsonl"
    body = "".join(
        orjson.dumps({"t": 0.1, "from": origin, "text": text}).decode() + "\n"
        for origin, text in frames
    )
    path.write_text(HEADER + body)
    shown = run_cli("show", str(path))
    assert shown.returncode == 0, shown.stderr
    assert b"Session s." in shown.stdout
    request = b'{"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {}}\n'
    replayed = run_cli("replay", str(path), stdin=request)
    assert replayed.returncode == 0, replayed.stderr
    assert b'"sessionId":"s"' in replayed.stdout
