"""`check` against real agent processes: ours pass every case, each broken agent fails
(or, for a SHOULD, warns on) exactly the case of the rule it breaks, and no other MUST.

All the checks run at once in one event loop (each agent is its own process), so the
file costs about as long as its slowest check.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from acp_sdk.tools._check import FAIL, MUST, PASS, SKIP, WARN, CheckOptions, Report, run_check

pytestmark = pytest.mark.timeout(90)
ROOT = Path(__file__).resolve().parents[2]
BROKEN = "tests.tools.broken_agents"
PY = sys.executable

GOOD = {
    "scenario": (PY, "-m", "acp_sdk", "agent"),
    "example-fs-terminal": (PY, str(ROOT / "examples" / "agent_fs_terminal.py")),
    "example-tool-permission": (PY, str(ROOT / "examples" / "agent_tool_permission.py")),
    "raw-base": (PY, "-m", "tests.tools.broken_agents._base"),
}
# broken agent -> (the case it breaks, the outcome it must get there)
BROKEN_CASES = {
    "prints_to_stdout": ("stdout-json-only", FAIL),
    "unknown_method_internal_error": ("unknown-method", FAIL),
    "answers_before_updates": ("updates-before-response", FAIL),
    "ignores_cancel": ("session-cancel", FAIL),
    "leaks_child": ("eof-exit", FAIL),
    "breaks_on_malformed_json": ("malformed-json", FAIL),
    "fs_without_capability": ("no-fs-without-capability", FAIL),
    "terminal_without_capability": ("no-terminal-without-capability", FAIL),
    "close_keeps_running": ("session-close", FAIL),
    "cancelled_unasked": ("stop-reason-honest", FAIL),
    "list_misses_session": ("session-list", FAIL),
    "sends_updates_twice": ("updates-not-duplicated", WARN),
    "accepts_unknown_mode": ("unknown-mode-rejected", WARN),
    "answers_notifications": ("unknown-notification", WARN),
    "usage_after_answer": ("late-usage-update", WARN),
    "odd_capabilities": ("initialize", FAIL),
    "odd_config_options": ("set-config-option", FAIL),
}
# Agents sending JSON of shapes the checker must survive (no case judges them).
ODD = ("odd_permission_options",)
# Cases that check the same rule from another side: session/close cancels the running
# turn "as if session/cancel had been called", so an agent that ignores the cancel fails
# both.
SAME_RULE = {"session-cancel": {"session-close"}}
# What an agent may skip without being at fault: a capability it does not advertise.
OPTIONAL = ("not advertised", "lists no modes", "lists no config options")


def _options(command: tuple[str, ...]) -> CheckOptions:
    return CheckOptions(
        command=command,
        grace=0.2,
        cancel_after=0.3,
        cancel_timeout=8.0,
        exit_timeout=5.0,  # the default: an agent slowed by a loaded machine still passes
        request_timeout=15.0,
        turn_timeout=30.0,
    )


@pytest.fixture(scope="module")
def reports() -> Iterator[dict[str, Report]]:
    targets = dict(GOOD)
    targets |= {
        name: (PY, "-m", f"{BROKEN}.{name}") for name in [*BROKEN_CASES, *ODD, "needs_auth"]
    }
    saved = os.environ.get("PYTHONPATH")
    # `-m acp_sdk` and `-m tests.tools...` are this checkout's, wherever pytest runs.
    os.environ["PYTHONPATH"] = str(ROOT)

    async def run_all() -> dict[str, Report]:
        runs = [run_check(_options(command)) for command in targets.values()]
        done = await asyncio.wait_for(asyncio.gather(*runs), 75)
        return dict(zip(targets, done, strict=True))

    try:
        yield asyncio.run(run_all())
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved


def _lines(report: Report) -> str:
    return "\n".join(f"{r.id} {r.outcome}: {r.detail}" for r in report.ordered())


def test_the_scenario_agent_passes_every_case(reports: dict[str, Report]) -> None:
    report = reports["scenario"]
    assert {r.outcome for r in report.results.values()} == {PASS}, _lines(report)
    assert report.agent["agentInfo"]["name"] == "acp-sdk-scenario-agent"


@pytest.mark.parametrize("name", [n for n in GOOD if n != "scenario"])
def test_good_agents_fail_nothing(reports: dict[str, Report], name: str) -> None:
    report = reports[name]
    for result in report.results.values():
        assert result.outcome in (PASS, SKIP), _lines(report)
        if result.outcome == SKIP:  # only what the agent does not offer, or a race lost
            assert any(o in result.detail for o in OPTIONAL) or "inconclusive" in result.detail, (
                _lines(report)
            )
    assert not report.must_failed()


@pytest.mark.parametrize("name", list(BROKEN_CASES))
def test_a_broken_agent_fails_its_case_and_no_other_must(
    reports: dict[str, Report], name: str
) -> None:
    report = reports[name]
    case_id, outcome = BROKEN_CASES[name]
    assert report.results[case_id].outcome == outcome, _lines(report)
    assert report.results[case_id].detail
    same_rule = SAME_RULE.get(case_id, set())
    other_musts = [
        r
        for r in report.results.values()
        if r.id != case_id and r.id not in same_rule and r.level == MUST and r.outcome == FAIL
    ]
    assert other_musts == [], _lines(report)
    assert report.must_failed() == (outcome == FAIL)


@pytest.mark.parametrize("name", ODD)
def test_json_of_odd_shapes_is_judged_not_a_crash(reports: dict[str, Report], name: str) -> None:
    """The checker's reader survives the odd JSON: the turns run, and nothing is blamed
    on the agent closing the connection."""
    report = reports[name]
    assert report.results["prompt-turn"].outcome == PASS, _lines(report)
    assert not report.must_failed(), _lines(report)


def test_an_agent_needing_credentials_gets_skips_naming_its_auth_methods(
    reports: dict[str, Report],
) -> None:
    report = reports["needs_auth"]
    assert not report.must_failed(), _lines(report)
    for case_id in ("session-new", "prompt-turn", "session-cancel", "big-prompt"):
        result = report.results[case_id]
        assert result.outcome == SKIP, _lines(report)
        assert "needs authentication (methods: api-key (API key), login (Log in))" in result.detail
    # What needs no session still ran.
    for case_id in ("initialize", "unknown-method", "malformed-json", "eof-exit"):
        assert report.results[case_id].outcome == PASS, _lines(report)


def test_a_permission_pending_at_the_cancel_is_answered_cancelled(
    reports: dict[str, Report],
) -> None:
    """The tool-permission example asks permission at once and waits for the answer: its
    turn ends `cancelled` only because the checker answers the held request `cancelled`
    after session/cancel, as a client must (prompt-turn.mdx § Cancellation)."""
    report = reports["example-tool-permission"]
    assert report.results["session-cancel"].outcome == PASS, _lines(report)


def test_cancelled_from_an_agent_that_says_cancelled_unasked_proves_nothing(
    reports: dict[str, Report],
) -> None:
    """gptme-acp without a model ends every turn `cancelled`, cancelled or not: its answer
    to session/cancel (and to session/close) is no evidence it honoured either, so both
    cases are inconclusive, not `pass`."""
    report = reports["cancelled_unasked"]
    assert report.results["stop-reason-honest"].outcome == FAIL, _lines(report)
    for case_id in ("session-cancel", "session-close"):
        result = report.results[case_id]
        assert result.outcome == SKIP, _lines(report)
        assert "inconclusive" in result.detail
        assert "stop-reason-honest" in result.detail


def test_a_long_turn_ended_cancelled_before_the_cancel_fails_stop_reason_honest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long turn answered `cancelled` before the checker could cancel it is inconclusive
    for the cancel cases, but it still is a `cancelled` nobody asked for. `--cancel-after`
    is long here so that the answer surely comes first."""
    command = (PY, "-m", f"{BROKEN}.long_turn_cancelled_unasked")
    options = attrs.evolve(_options(command), cancel_after=2.0)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    report = asyncio.run(asyncio.wait_for(run_check(options), 60))
    result = report.results["stop-reason-honest"]
    assert result.outcome == FAIL, _lines(report)
    assert "no cancel sent" in result.detail
    for case_id in ("session-cancel", "cancel-request", "session-close"):
        assert report.results[case_id].outcome == SKIP, _lines(report)
        assert "inconclusive" in report.results[case_id].detail
    others = [r.id for r in report.results.values() if r.outcome == FAIL]
    assert others == ["stop-reason-honest"], _lines(report)
