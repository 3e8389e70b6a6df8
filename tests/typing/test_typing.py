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

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import venv
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from tests._parallel import once_per_run

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
    the remote and mcp extras: the docs and examples on them import them), built once per
    run and shared by the xdist workers."""
    work = once_per_run(tmp_path_factory, "wheel", _build_and_install)
    return work / "venv" / "bin" / "python"


def _build_and_install(work: Path) -> None:
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


def _errors_by_file(
    checker: str, result: subprocess.CompletedProcess[str], cwd: Path
) -> dict[str, set[int]]:
    """Line numbers with at least one error, by file (relative to `cwd`), from a
    checker's output."""
    found: dict[str, set[int]] = {}
    if checker == "mypy":
        for line in result.stdout.splitlines():
            if ": error:" in line:
                path, number, _ = line.split(":", 2)
                found.setdefault(path, set()).add(int(number))
        return found
    report = json.loads(result.stdout)
    for d in report["generalDiagnostics"]:
        if d["severity"] == "error":
            path = str(Path(d["file"]).relative_to(cwd))
            found.setdefault(path, set()).add(d["range"]["start"]["line"] + 1)
    return found


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


NegativeRun = tuple[subprocess.CompletedProcess[str], Path]


@pytest.fixture(scope="session")
def negative_run(
    installed: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], NegativeRun]:
    """A checker's one run over every `negative/` case, as written and with its markers
    stripped (`stripped_{checker}_{case}`), and the tree it ran in; made once per test run
    and shared by the xdist workers. One run for all cases, not two per case: each run
    checks the installed package again, which is most of its time."""

    @functools.cache
    def run(checker: str) -> NegativeRun:
        build = partial(_check_negative, checker, installed)
        tree = once_per_run(tmp_path_factory, f"negative-{checker}", build)
        saved = json.loads((tree / "result.json").read_text(encoding="utf-8"))
        result = subprocess.CompletedProcess(
            saved["args"], saved["returncode"], saved["stdout"], saved["stderr"]
        )
        return result, tree

    return run


def _check_negative(checker: str, installed: Path, tree: Path) -> None:
    shutil.copytree(HERE / "negative", tree / "negative")
    (tree / "pyrightconfig.json").write_text(json.dumps(PYRIGHT_CONFIG), encoding="utf-8")
    for case in NEGATIVE:
        source = (HERE / "negative" / case).read_text(encoding="utf-8")
        (tree / "negative" / f"stripped_{checker}_{case}").write_text(
            "\n".join(MARKED.sub("", line) for line in source.splitlines()) + "\n",
            encoding="utf-8",
        )
    result = _check(checker, installed, tree, "negative")
    record = {key: getattr(result, key) for key in ("args", "returncode", "stdout", "stderr")}
    (tree / "result.json").write_text(json.dumps(record), encoding="utf-8")


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("case", NEGATIVE)
def test_mistakes_are_reported(
    negative_run: Callable[[str], NegativeRun], case: str, checker: str
) -> None:
    result, tree = negative_run(checker)
    output = result.stdout + result.stderr
    assert result.returncode in (0, 1), output  # 1: errors found; anything else: it broke
    errors = _errors_by_file(checker, result, tree)
    assert all(path.startswith("negative/") for path in errors), output
    # Clean with the markers: each one suppressed exactly the error it names.
    assert f"negative/{case}" not in errors, output
    # Without them, exactly the marked lines fail.
    source = (HERE / "negative" / case).read_text(encoding="utf-8")
    marked = {n for n, line in enumerate(source.splitlines(), 1) if MARKED.search(line)}
    assert errors.get(f"negative/stripped_{checker}_{case}", set()) == marked, output
