"""`python -m acp_sdk --debug serve ...` shows each log line once (it printed every line
twice: a handler on `acp_sdk.remote` and another on `acp_sdk`)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from acp_sdk.remote import _serve
from acp_sdk.tools import _cli as cli

pytestmark = pytest.mark.timeout(30)


def fake_serve(command: Any, **_: Any) -> None:
    logging.getLogger("acp_sdk.remote").info("a connection opened")
    logging.getLogger("acp_sdk.agent.stderr").info("the agent said hello")


@pytest.mark.parametrize("debug", [[], ["--debug"]])
def test_serve_logs_each_line_once(
    debug: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_serve, "serve", fake_serve)
    assert cli.main([*debug, "serve", "--", "agent"]) == 0
    err = capsys.readouterr().err
    assert err.count("a connection opened") == 1, err
    assert err.count("the agent said hello") == 1, err
    # Nothing left behind on the loggers.
    assert not logging.getLogger("acp_sdk.remote").handlers
    assert not logging.getLogger("acp_sdk").handlers
