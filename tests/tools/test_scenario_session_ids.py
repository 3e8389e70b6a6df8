"""The scenario agent's session ids are unique across processes (every process used to
name its first session `sess_1`, so a client that saved an id took a new session for
its old one)."""

from __future__ import annotations

import pytest

from acp_sdk import Client
from tests.tools._recording_helpers import AGENT

pytestmark = pytest.mark.timeout(60)


def first_sessions(count: int) -> list[str]:
    ids = []
    for _ in range(count):
        with Client.spawn(AGENT) as client:
            ids.append(client.new_session(cwd="/tmp").session_id)
            ids.append(client.new_session(cwd="/tmp").session_id)
    return ids


def test_session_ids_differ_across_processes() -> None:
    ids = first_sessions(2)
    assert len(set(ids)) == len(ids), ids
    assert all(i.startswith("sess_") for i in ids)
