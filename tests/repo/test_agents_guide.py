"""docs/agents.md shows the worked in-process test as the file the test suite runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_worked_test_is_the_file_that_runs() -> None:
    guide = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    test = ROOT / "tests" / "agent" / "test_tool_permission_example.py"
    assert f"`{test.relative_to(ROOT)}`" in guide.replace("\n", " ")
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    assert test.read_text(encoding="utf-8") in blocks


def test_the_guide_links_the_persistence_page() -> None:
    guide = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    assert "## Sessions that persist" in guide
    assert "(persistence.md)" in guide
