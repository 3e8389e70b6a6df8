"""`session.state` is the caller's view on both facades: an `on_update` callback sees the
state after exactly the updates handed to it so far (here: a `load_session` replay)."""

from __future__ import annotations

from typing import Any

import pytest

from acp_sdk.protocol._session_state import SessionState
from tests.client.facades import FACADES, SCENARIO, Facade, guarded

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=sorted(FACADES))
def facade(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_on_update_sees_the_state_after_exactly_the_updates_handed_to_it(facade: str) -> None:
    seen: list[tuple[Any, SessionState]] = []
    box: dict[str, Facade] = {}

    def on_update(notification: Any) -> None:
        client = box["driver"].client
        seen.append((notification.update, client.session(notification.session_id).state))

    driver = FACADES[facade](SCENARIO, on_update=on_update, track_state=True)
    box["driver"] = driver
    with driver:
        session = driver.new_session()
        driver.prompt(session, "echo hello there")
        guarded(
            lambda: driver.call(
                "load_session", session_id=session.session_id, cwd="/tmp", mcp_servers=[]
            ),
            15.0,
            "load_session",
        )
    assert len(seen) >= 3  # the replayed user prompt and the agent's words
    for index, (_update, state) in enumerate(seen):
        expected = SessionState().apply_all([update for update, _ in seen[: index + 1]])
        assert state.messages == expected.messages
