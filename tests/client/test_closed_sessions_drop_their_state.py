"""A client holds the state of the sessions it has open only: `session/close` and
`session/delete`, once answered, drop the session's state, on both facades."""

from __future__ import annotations

import pytest

from acp_sdk import RequestError
from tests.client.facades import FACADES, SCENARIO, Facade

pytestmark = pytest.mark.timeout(120)

SESSIONS = 200


def held(driver: Facade) -> frozenset[str]:
    """The sessions whose state the client's engine holds."""
    inner = driver.client._driver
    assert inner is not None
    return inner.engine.sessions_with_state()


@pytest.fixture(params=sorted(FACADES))
def facade(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("ending", ["close_session", "delete_session"])
def test_ended_sessions_leave_no_state_behind(facade: str, ending: str) -> None:
    driver = FACADES[facade](SCENARIO, track_state=True)
    with driver:
        for index in range(SESSIONS):
            session = driver.new_session()
            driver.prompt(session, f"echo turn {index}")
            assert session.state.text.strip() == f"turn {index}"
            assert session.session_id in held(driver)
            driver.call(ending, session_id=session.session_id)
            assert held(driver) == frozenset(), index


def test_a_failed_delete_keeps_the_state(facade: str) -> None:
    driver = FACADES[facade](SCENARIO, track_state=True)
    with driver:
        session = driver.new_session()
        driver.prompt(session, "echo kept")
        driver.call("close_session", session_id=session.session_id)
        kept = driver.new_session()
        driver.prompt(kept, "echo still here")
        with pytest.raises(RequestError):  # the agent's error answer
            driver.call("delete_session", session_id="no-such-session")
        assert held(driver) == {kept.session_id}
        assert kept.state.text.strip() == "still here"
