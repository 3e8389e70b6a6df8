"""What an agent wrote on stdout that was not JSON-RPC is kept (the last lines) and
shown in the `ConnectionClosed` of its end, on both facades."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from acp_sdk import Connection, ConnectionClosed, Side
from tests.client.facades import FACADES

pytestmark = pytest.mark.timeout(60)
ROUGH = [sys.executable, str(Path(__file__).parents[1] / "tools" / "rough_agent.py")]


@pytest.mark.parametrize("facade", sorted(FACADES))
def test_connection_closed_carries_the_non_protocol_stdout_lines(facade: str) -> None:
    driver = FACADES[facade]([*ROUGH, "stray-stdout"])
    with pytest.raises(ConnectionClosed) as caught, driver:
        pass
    error = caught.value
    assert error.exit_code == 0
    assert error.stdout_tail.splitlines() == [
        "Usage: some-agent [--acp]  (run with --acp to speak ACP)",
        "see https://example.invalid/docs",
    ]
    assert "not JSON-RPC on its stdout: Usage: some-agent" in str(error)


def test_the_connection_keeps_the_last_ten_non_protocol_lines() -> None:
    connection = Connection(Side.CLIENT)
    lines = b"".join(b"banner %d\n" % n for n in range(12))
    connection.receive_data(lines + b"[1, 2]\n" + b'{"jsonrpc": "1.0"}\n' + b"x" * 5000 + b"\n")
    stray = connection.stray_lines
    assert len(stray) == 10
    assert stray[:8] == tuple(f"banner {n}" for n in range(4, 12))
    assert stray[8] == "[1, 2]"  # JSON, but not an object
    assert stray[9] == "x" * 1000  # cut
    assert "jsonrpc" not in "".join(stray)  # an object: JSON-RPC gone wrong, not stray output
