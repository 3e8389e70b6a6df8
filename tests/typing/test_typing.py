"""Typing tests against what users install: the built wheel, in a fresh virtual environment.

Two checkers, both strict: `mypy --strict` and pyright in strict mode (the checker most
editors run). `positive/`, every python block of the README and docs/, and examples/ must
be clean under both. Each line of `negative/` is a mistake a user makes, marked with the
mypy error code and the pyright rule it must raise:

    client.new_session(cwdd=".")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]

mypy runs with --warn-unused-ignores and pyright with reportUnnecessaryTypeIgnoreComment
(and without honouring `# type: ignore`), so a mistake that stops being reported, or is
reported under another code, fails the run; with the markers stripped, exactly the marked
lines must fail. Both run from outside the source tree, so only the installed package
is visible.
"""

from __future__ import annotations

import json
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
PYRIGHT_CONFIG = {
    "typeCheckingMode": "strict",
    "pythonVersion": "3.10",
    "enableTypeIgnoreComments": False,
    "reportUnnecessaryTypeIgnoreComment": "error",
}
MARKED = re.compile(r"  # type: ignore\[[a-z-, ]+\]  # pyright: ignore\[[A-Za-z, ]+\]$")
CHECKERS = ["mypy", "pyright"]
NEGATIVE = sorted(p.name for p in (HERE / "negative").glob("*.py"))


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
    the remote and mcp extras: the docs and examples on them import them)."""
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
        [str(python), "-m", "pip", "install", "-q", f"{wheel}[server,ws,http,mcp]"],
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
        # Also under its own name: docs/agents.md tests an example by importing it.
        shutil.copy(example, tree / "positive" / example.name)
    (tree / "pyrightconfig.json").write_text(json.dumps(PYRIGHT_CONFIG), encoding="utf-8")
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


def _pyright(python: Path, cwd: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    pyright = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    return subprocess.run(
        [pyright, "--outputjson", "--pythonpath", str(python), *targets],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def _error_lines(checker: str, result: subprocess.CompletedProcess[str]) -> set[int]:
    """Line numbers with at least one error, from a checker's output."""
    if checker == "mypy":
        return {
            int(line.split(":")[1]) for line in result.stdout.splitlines() if ": error:" in line
        }
    report = json.loads(result.stdout)
    return {
        d["range"]["start"]["line"] + 1
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    }


def _check(checker: str, python: Path, cwd: Path, target: str) -> subprocess.CompletedProcess[str]:
    return (_mypy if checker == "mypy" else _pyright)(python, cwd, target)


@pytest.mark.parametrize("checker", CHECKERS)
def test_positive_code_is_clean(installed: Path, checked_tree: Path, checker: str) -> None:
    result = _check(checker, installed, checked_tree, "positive")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_mistake_is_marked_for_both_checkers() -> None:
    for case in NEGATIVE:
        for number, line in enumerate((HERE / "negative" / case).read_text().splitlines(), 1):
            if "# type: ignore" in line or "# pyright: ignore" in line:
                assert MARKED.search(line), f"{case}:{number}: mark both checkers, in order"


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("case", NEGATIVE)
def test_mistakes_are_reported(
    installed: Path, checked_tree: Path, case: str, checker: str
) -> None:
    source = (HERE / "negative" / case).read_text(encoding="utf-8")
    # Clean with the markers: each one suppressed exactly the error it names.
    marked_run = _check(checker, installed, checked_tree, f"negative/{case}")
    assert marked_run.returncode == 0, marked_run.stdout + marked_run.stderr
    # Without them, exactly the marked lines fail.
    marked = {n for n, line in enumerate(source.splitlines(), 1) if MARKED.search(line)}
    stripped = checked_tree / "negative" / f"stripped_{checker}_{case}"
    stripped.write_text(
        "\n".join(MARKED.sub("", line) for line in source.splitlines()) + "\n", encoding="utf-8"
    )
    raw = _check(checker, installed, checked_tree, str(stripped.relative_to(checked_tree)))
    assert _error_lines(checker, raw) == marked, raw.stdout
