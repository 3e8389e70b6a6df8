"""Typing tests against what users install: the built wheel, in a fresh virtual environment.

mypy --strict must report every mistake in `negative/` (each marked with the error code
it must raise; `--warn-unused-ignores` fails the run if one stops being reported) and
nothing in `positive/`, in the README, in docs/ or in examples/. pyright (basic mode)
checks the same positive code. Both run from outside the source tree, so only the
installed package is visible.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.timeout(900)

MYPY_FLAGS = ["--strict", "--warn-unused-ignores", "--python-version", "3.10", "--no-incremental"]


def _code_blocks() -> dict[str, str]:
    """Every python code block of the README and docs/, by a file name to check it under."""
    blocks: dict[str, str] = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, block in enumerate(
            re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
        ):
            blocks[f"doc_{page.stem.replace('-', '_')}_{number}.py"] = block
    return blocks


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with only the wheel built from this tree (and its dependencies, with
    the remote extras: the docs and examples on remote agents import them)."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work), str(ROOT)],
        check=True,
        capture_output=True,
    )
    [wheel] = work.glob("acp_typed-*.whl")
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"{wheel}[server,ws,http]"],
        check=True,
        capture_output=True,
    )
    return python


@pytest.fixture(scope="session")
def checked_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files to check, copied away from the source tree."""
    tree = tmp_path_factory.mktemp("typing")
    shutil.copytree(HERE / "positive", tree / "positive")
    shutil.copytree(HERE / "negative", tree / "negative")
    for name, code in _code_blocks().items():
        (tree / "positive" / name).write_text(code, encoding="utf-8")
    for example in sorted((ROOT / "examples").glob("*.py")):
        shutil.copy(example, tree / "positive" / f"example_{example.name}")
    return tree


def _mypy(python: Path, cwd: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", *MYPY_FLAGS, "--python-executable", str(python), *targets],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": ""},
    )


def test_wheel_ships_typing_marker_and_no_generator(installed: Path) -> None:
    site = subprocess.run(
        [
            str(installed),
            "-c",
            "import acp_sdk, pathlib; print(pathlib.Path(acp_sdk.__file__).parent)",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    ).stdout.strip()
    package = Path(site)
    assert (package / "py.typed").exists()
    assert not (package / "_codegen").exists()
    assert str(ROOT) not in site


def test_positive_code_is_clean(installed: Path, checked_tree: Path) -> None:
    result = _mypy(installed, checked_tree, "positive")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("case", sorted(p.name for p in (HERE / "negative").glob("*.py")))
def test_mistakes_are_reported(installed: Path, checked_tree: Path, case: str) -> None:
    result = _mypy(installed, checked_tree, f"negative/{case}")
    # Success means every `# type: ignore[code]` suppressed exactly the error expected.
    assert result.returncode == 0, result.stdout + result.stderr
    marked = (HERE / "negative" / case).read_text(encoding="utf-8").count("# type: ignore[")
    unmarked = _mypy(
        installed, checked_tree, "--disable-error-code", "unused-ignore", f"negative/{case}"
    )
    assert unmarked.returncode == 0
    # Stripping the ignores must surface one error per marked line.
    stripped = checked_tree / "negative" / f"stripped_{case}"
    stripped.write_text(
        re.sub(
            r"  # type: ignore\[[a-z-]+\]",
            "",
            (HERE / "negative" / case).read_text(encoding="utf-8"),
        ),
        encoding="utf-8",
    )
    raw = _mypy(installed, checked_tree, f"negative/stripped_{case}")
    errors = [line for line in raw.stdout.splitlines() if ": error:" in line]
    assert len({line.split(":")[1] for line in errors}) == marked, raw.stdout


def test_pyright_accepts_the_positive_code(installed: Path, checked_tree: Path) -> None:
    pyright = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    result = subprocess.run(
        [pyright, "--pythonpath", str(installed), "positive"],
        cwd=checked_tree,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
