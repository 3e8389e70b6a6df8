"""What a test does when something outside Python it needs is missing.

The README's test command needs only python3 (and the package index): a test that needs a
system program the `dev` extra cannot install (haproxy), or a set-up step that needs what
this machine may lack (the npm registry for the TypeScript SDK), skips, saying what is
missing and how to get it. CI is different: `.ci/run` installs all of it and sets
`ACP_SDK_CI=1`, and under that variable the same absence fails the test, so CI can never
pass with a check quietly skipped. Every such test goes through `unavailable` (or
`program`), so the rule is kept in one place.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import NoReturn

import pytest

CI_VARIABLE = "ACP_SDK_CI"
"""Set (to anything but "" or "0") by .ci/run: a missing requirement fails instead of skipping."""


def under_ci() -> bool:
    """True when `ACP_SDK_CI` asks for missing requirements to fail the tests."""
    return os.environ.get(CI_VARIABLE, "") not in ("", "0")


def unavailable(reason: str) -> NoReturn:
    """Skip the calling test because what `reason` names is not on this machine (say what
    is missing and how to get it); under CI, fail it instead."""
    if under_ci():
        message = f"{reason}\n({CI_VARIABLE} is set, so this fails instead of skipping)"
        pytest.fail(message, pytrace=False)
    pytest.skip(reason)


def program(name: str, remedy: str, *, also_in: Sequence[str] = ()) -> str:
    """The path of system program `name`, looked up on PATH and then in `also_in`; if it is
    missing, the calling test skips (fails under CI) with `remedy` as the way to get it."""
    path = os.pathsep.join([os.environ.get("PATH", os.defpath), *also_in])
    found = shutil.which(name, path=path)
    if found is None:
        unavailable(f"`{name}` is not installed: {remedy}")
    return found
