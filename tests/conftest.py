"""The whole suite's settings: how many pytest-xdist workers `-n auto` (in pyproject's
addopts) starts, and a header line saying whether missing programs skip or fail."""

from __future__ import annotations

import os

import pytest

from tests._parallel import cpus
from tests._programs import CI_VARIABLE, under_ci

WORKERS_PER_CPU = 3
"""Most tests wait on subprocesses, pipes and sockets rather than compute, so workers
beyond the cores keep them busy (measured in docs/installation.md, "Running the tests")."""
MIN_WORKERS = 4
MAX_WORKERS = 16


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: WORKERS_PER_CPU per usable core, within [MIN_WORKERS, MAX_WORKERS];
    `PYTEST_XDIST_AUTO_NUM_WORKERS` still decides when set (xdist's own hook reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return min(max(WORKERS_PER_CPU * cpus(), MIN_WORKERS), MAX_WORKERS)


def pytest_report_header(config: pytest.Config) -> str:
    if under_ci():
        return f"{CI_VARIABLE} is set: a missing program or set-up fails its tests"
    return f"{CI_VARIABLE} is not set: a missing program or set-up skips its tests"
