"""docs/migrating.md ports one agent from agent-client-protocol 0.12.1 to the toolkit: both
versions, driven over stdio by our `Client`, send the same updates and ask the same
questions (allow always remembered in the session, not in the next one); the page's line
counts are the files' own."""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path

import acp  # noqa: F401 - the incumbent (a dev dependency): the ported agent's side
import pytest

from acp_sdk import Client
from acp_sdk.handlers import AskPermission
from acp_sdk.schema import (
    PermissionOptionKind,
    RequestPermissionRequest,
    SessionUpdate,
    ToolCall,
    ToolCallProgress,
)

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent / "migration"
VERSIONS = ["incumbent_renamer", "ported_renamer"]


class ByKind:
    """Answers with the offered option of each kind in turn (None: cancel)."""

    def __init__(self, *kinds: PermissionOptionKind | None) -> None:
        self._kinds = list(kinds)
        self.asked = 0
        self._lock = threading.Lock()

    def __call__(self, request: RequestPermissionRequest) -> str | None:
        with self._lock:
            self.asked += 1
            kind = self._kinds.pop(0)
        return next((o.option_id for o in request.options if o.kind == kind), None)


def shape(updates: list[SessionUpdate]) -> list[tuple[str, str | None]]:
    return [
        (type(u).__name__, u.status if isinstance(u, (ToolCall, ToolCallProgress)) else None)
        for u in updates
    ]


def run(version: str, *kinds: PermissionOptionKind | None) -> tuple[list[object], int]:
    answers = ByKind(*kinds)
    argv = [sys.executable, "-m", f"tests.agent.migration.{version}"]
    seen: list[object] = []
    with Client.spawn(argv, cwd=ROOT, handlers=[AskPermission(answers)]) as client:
        first = client.new_session(cwd="/project")
        for session in (first, first, client.new_session(cwd="/project")):
            turn = session.prompt("rename x")
            seen.append((shape(list(turn)), turn.stop_reason))
    return seen, answers.asked


@pytest.mark.parametrize(
    "kinds",
    [("allow_always", "allow_once"), ("reject_once", "reject_once", "reject_once"), (None,) * 3],
    ids=["allow-always", "reject", "cancel"],
)
def test_both_versions_behave_alike(kinds: tuple[PermissionOptionKind | None, ...]) -> None:
    incumbent, ported = (run(version, *kinds) for version in VERSIONS)
    assert incumbent == ported
    if kinds[0] == "allow_always":
        assert ported[1] == 2  # the second prompt of the first session was not asked


def test_the_guide_states_the_line_counts() -> None:
    guide = (ROOT / "docs" / "migrating.md").read_text(encoding="utf-8")
    for version in VERSIONS:
        lines = len((HERE / f"{version}.py").read_text(encoding="utf-8").splitlines())
        assert re.search(rf"`{version}\.py`[^\n]*\b{lines} lines", guide), (version, lines)
