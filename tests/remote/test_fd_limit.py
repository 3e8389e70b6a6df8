"""`serve` raises its open-file limit to what --max-connections needs (past the limit
the server cannot accept, and clients hang instead of getting 503), never above the hard
limit, and warns when the hard limit is too low. Run in a child process, whose limits
are set first, so that the test process's own stay as they are."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)

CHILD = """
import logging, resource
from acp_sdk.remote._serve import raise_fd_limit
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
print(raise_fd_limit(100), resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"""


def run_with_limits(soft: int, hard: int) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return subprocess.run(
        [sys.executable, "-c", CHILD],
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )


def hard_limit() -> int:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 1 << 20 if hard == resource.RLIM_INFINITY else hard


@pytest.mark.skipif(hard_limit() < 1000, reason="the hard open-file limit is below 1000")
def test_the_soft_limit_is_raised_to_what_the_connections_need() -> None:
    done = run_with_limits(128, hard_limit())
    assert done.stdout.split() == ["864", "864"]  # 100 connections x 8 + 64 spare
    assert "WARNING" not in done.stderr


def test_a_hard_limit_too_low_is_kept_and_named_in_a_warning() -> None:
    done = run_with_limits(128, 300)
    assert done.stdout.split() == ["300", "300"]
    assert "WARNING the open-file limit (300) is below what 100 connections" in done.stderr
    assert "ulimit -n" in done.stderr


def test_a_high_enough_limit_is_left_alone() -> None:
    done = run_with_limits(900, 900)
    assert done.stdout.split() == ["900", "900"]
    assert done.stderr == ""
