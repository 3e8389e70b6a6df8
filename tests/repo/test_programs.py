"""A missing system program skips its test on a user's machine and fails it under CI
(tests/_programs.py), and CI asks for the failing kind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests._programs import CI_VARIABLE, program, unavailable

ROOT = Path(__file__).resolve().parents[2]
MISSING = "acp-sdk-no-such-program"


@pytest.mark.parametrize("value", ["", "0"])
def test_without_ci_a_missing_program_skips_naming_it_and_the_remedy(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(CI_VARIABLE, value)
    with pytest.raises(pytest.skip.Exception, match=rf"`{MISSING}` is not installed: get it"):
        program(MISSING, "get it")


def test_under_ci_a_missing_program_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CI_VARIABLE, "1")
    with pytest.raises(pytest.fail.Exception, match=rf"`{MISSING}` is not installed") as info:
        program(MISSING, "get it")
    assert f"{CI_VARIABLE} is set" in str(info.value)
    with pytest.raises(pytest.fail.Exception, match="no registry"):
        unavailable("no registry")


def test_a_program_is_found_on_path_or_in_the_extra_directories(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CI_VARIABLE, "1")
    here = Path(sys.executable)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert program(here.name, "", also_in=[str(here.parent)]) == str(here)


def test_ci_sets_the_variable_before_it_runs_the_suite() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert f"export {CI_VARIABLE}=1" in ci
    first_pytest = next(n for n, line in enumerate(ci) if "-m pytest" in line)
    assert ci.index(f"export {CI_VARIABLE}=1") < first_pytest
