"""A recording nobody vouches for: a frame whose `t`, `text` or `b64` has the wrong
shape is refused naming its line (`RecordingError`; exit code 2 from `show` and
`replay`), never a traceback."""

from __future__ import annotations

from pathlib import Path

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
