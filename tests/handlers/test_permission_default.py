"""A client never leaves `session/request_permission` unanswered, and closes its handlers."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import orjson
import pytest

import acp_sdk
from acp_sdk.handlers import (
    AllowOnce,
    AsyncClientHandlers,
    ClientHandlers,
    HandlerSet,
    LocalFileSystem,
    reject_by_default,
)
from acp_sdk.schema import (
    CancelledPermissionOutcome,
    PermissionOption,
    RequestPermissionRequest,
    SelectedPermissionOutcome,
    ToolCallUpdate,
)
from tests.schema_tools import schema_errors
from tests.spec_examples import SPEC_DOCS


def _request(*kinds: str) -> RequestPermissionRequest:
    return RequestPermissionRequest(
        session_id="s",
        tool_call=ToolCallUpdate(tool_call_id="call_1"),
        options=[
            PermissionOption(option_id=f"{kind}-{n}", name=kind, kind=kind)  # type: ignore[arg-type]
            for n, kind in enumerate(kinds)
        ],
    )


@pytest.mark.parametrize(
    ("kinds", "chosen"),
    [
        (("allow_once", "reject_once"), "reject_once-1"),
        (("reject_always", "allow_always", "reject_once"), "reject_once-2"),
        (("reject_once", "reject_once"), "reject_once-0"),
        (("allow_once", "allow_always"), None),
        (("reject_always",), None),  # never a lasting decision nobody made
        ((), None),
    ],
)
def test_the_default_rejects_once_else_cancels(kinds: tuple[str, ...], chosen: str | None) -> None:
    response = HandlerSet(None).get("request_permission")(_request(*kinds))  # type: ignore[misc]
    assert response == reject_by_default(_request(*kinds))
    if chosen is None:
        assert isinstance(response.outcome, CancelledPermissionOutcome)
    else:
        assert isinstance(response.outcome, SelectedPermissionOutcome)
        assert response.outcome.option_id == chosen
    assert not schema_errors(orjson.loads(acp_sdk.encode(response)), "RequestPermissionResponse")


@pytest.mark.parametrize(
    "handlers",
    [None, [], LocalFileSystem("/"), [ClientHandlers()], [AsyncClientHandlers()]],
    ids=["none", "empty", "fs-only", "base", "async-base"],
)
def test_without_a_policy_permission_is_still_answered(handlers: Any) -> None:
    handler_set = HandlerSet(handlers)
    assert handler_set.get("request_permission") is not None
    # Nothing else is invented, and nothing is advertised that is not served.
    assert handler_set.get("read_text_file") is None or handlers is not None
    assert handler_set.get("create_terminal") is None
    assert handler_set.capabilities().terminal is False


def test_a_given_policy_wins_over_the_default() -> None:
    policy = AllowOnce()
    handler = HandlerSet([LocalFileSystem("/"), policy]).get("request_permission")
    assert handler == policy.request_permission


def test_the_default_warns_once_per_handler_set(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="acp_sdk.client")
    first = HandlerSet(None)
    for _ in range(3):
        first.get("request_permission")(_request("reject_once"))  # type: ignore[misc]
    warnings = [r for r in caplog.records if r.name == "acp_sdk.client"]
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING
    message = warnings[0].getMessage()
    for policy in ("handlers=AllowOnce()", "RejectAll()", "AskPermission(callback)"):
        assert policy in message
    HandlerSet(None).get("request_permission")(_request())  # type: ignore[misc]
    assert len([r for r in caplog.records if r.name == "acp_sdk.client"]) == 2


def test_no_warning_until_the_default_answers(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="acp_sdk.client")
    HandlerSet(None).get("request_permission")
    assert not caplog.records


def test_permission_is_the_only_baseline_client_request() -> None:
    # overview.mdx, "## Client" / "### Baseline Methods": what every client must answer.
    # Every other client method is capability-gated, so only this one needs a default.
    text = (SPEC_DOCS / "overview.mdx").read_text(encoding="utf-8")
    client = text[text.index("## Client") :]
    baseline = client[client.index("### Baseline Methods") : client.index("### Optional")]
    assert re.findall(r'name="([^"]+)"', baseline) == ["session/request_permission"]


# ------------------------------------------------------------------ through both facades


def test_the_blocking_client_answers_with_the_default(caplog: pytest.LogCaptureFixture) -> None:
    from acp_sdk import Client
    from tests.client.facades import SCENARIO

    caplog.set_level(logging.WARNING, logger="acp_sdk.client")
    with Client.spawn(SCENARIO) as client:
        session = client.new_session(cwd="/tmp")
        assert session.prompt("permission").wait().stop_reason == "end_turn"  # rejected
    assert any("AllowOnce()" in r.getMessage() for r in caplog.records)


def test_the_asyncio_client_answers_with_the_default(caplog: pytest.LogCaptureFixture) -> None:
    from acp_sdk import AsyncClient
    from tests.client.facades import SCENARIO

    caplog.set_level(logging.WARNING, logger="acp_sdk.client")

    async def go() -> str | None:
        async with AsyncClient.spawn(SCENARIO) as client:
            session = await client.new_session(cwd="/tmp")
            response = await session.prompt("permission")
            return response.stop_reason

    assert asyncio.run(go()) == "end_turn"  # rejected, not an error
    assert any("AllowOnce()" in r.getMessage() for r in caplog.records)


# ------------------------------------------------------------------ HandlerSet.close()


class Closable(ClientHandlers):
    def __init__(self, fail: bool = False) -> None:
        self.closed = 0
        self.fail = fail

    def close(self) -> None:
        self.closed += 1
        if self.fail:
            raise RuntimeError("boom")


class AsyncClosable(AsyncClientHandlers):
    async def close(self) -> None:
        raise AssertionError("never awaited")


def test_close_calls_each_close_once_and_logs_failures(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="acp_sdk.client")
    good, bad = Closable(), Closable(fail=True)
    handler_set = HandlerSet([bad, good, good, LocalFileSystem("/")])
    handler_set.close()
    handler_set.close()  # idempotent
    assert (good.closed, bad.closed) == (1, 1)  # a failure does not stop the others
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert errors[0].exc_info is not None


def test_close_discards_a_coroutine_close(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="acp_sdk.client")
    HandlerSet([AsyncClosable()]).close()  # no "never awaited" warning (warnings are errors)
    assert any("cannot await" in r.getMessage() for r in caplog.records)


def test_close_with_nothing_to_close() -> None:
    HandlerSet(None).close()
    HandlerSet([ClientHandlers(), AllowOnce()]).close()
