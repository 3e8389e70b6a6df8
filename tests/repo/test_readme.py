"""The README's script example runs as written (against the bundled scenario agent)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


@pytest.mark.timeout(60)
def test_the_script_example_runs() -> None:
    script = next(block for block in BLOCKS if "Client.spawn" in block)
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=50,
        cwd=README.parent,
        check=True,
    )
    assert result.stdout.strip().endswith("end_turn")
    assert "' acp_sdk'" in result.stdout


def test_every_example_compiles() -> None:
    assert len(BLOCKS) >= 3
    for block in BLOCKS:
        compile(block, "README.md", "exec")
