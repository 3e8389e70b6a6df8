"""Install node's side of the interop tests (see node_setup.py) once, before they run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop import node_setup

HERE = Path(__file__).resolve().parent


def pytest_collection_finish(session: pytest.Session) -> None:
    """Before the first test, so `npm ci` is bounded by its own timeout, not a test's."""
    if session.config.option.collectonly:
        return
    if any(HERE in Path(item.path).resolve().parents for item in session.items):
        node_setup.prepare()
