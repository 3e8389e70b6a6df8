"""CI runs exactly the test command the README gives newcomers."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _indented_commands(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^    (python3 -m venv .+)$", text, re.M)]


def test_ci_runs_the_readme_test_command() -> None:
    readme = _indented_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    test_commands = [c for c in readme if c.endswith("-m pytest")]
    assert len(test_commands) == 1
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_commands[0] in ci_lines


def test_readme_main_job_is_run_in_ci() -> None:
    readme = _indented_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    main_job = [c for c in readme if not c.endswith("-m pytest")]
    assert len(main_job) == 1
    run_step = main_job[0].rsplit(" && ", 1)[1]
    assert run_step in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_every_claimed_python_runs_the_whole_suite() -> None:
    """.ci/run installs and tests the other interpreters (.ci/other_pythons), which loops
    over every Python the classifiers claim and runs the suite unfiltered."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    claimed = re.findall(r'"Programming Language :: Python :: (3\.\d+)"', pyproject)
    assert len(claimed) >= 4, claimed
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith("bash .ci/other_pythons install ") for line in run)
    assert any(line.startswith("bash .ci/other_pythons test ") for line in run)
    other = (ROOT / ".ci" / "other_pythons").read_text(encoding="utf-8").splitlines()
    assert f"for version in {' '.join(claimed)}; do" in other
    [suite] = [line for line in other if line.startswith("suite() {")]
    assert suite.endswith('/bin/python" -m pytest; }'), suite
