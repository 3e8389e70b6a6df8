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
