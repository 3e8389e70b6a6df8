"""The package's layers import only downward, and no two subpackages import each other.

The order is docs/architecture.md's folder list. Function-local imports count (they are
found in the syntax tree, wherever they sit); imports under `if TYPE_CHECKING:` count
too, so the picture a reader gets from the imports is the true one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "acp_sdk"

# Bottom to top. The generated namespaces at the top level (`schema`, `methods`,
# `unstable`) are the public faces of `protocol/_generated` and sit in its layer.
ORDER = ["protocol", "_driver", "handlers", "agent", "remote", "client", "tools"]
FACES = {
    "schema": "protocol",
    "methods": "protocol",
    "unstable": "protocol",
    "_version": "protocol",
}
TOP = {"acp_sdk", "testing", "mcp", "__main__"}


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "acp_sdk":
        return None
    if len(parts) == 1 or parts[1] in TOP:
        return "top"
    return FACES.get(parts[1], parts[1])


def _module_or_top(name: str) -> str:
    """`from acp_sdk import X`: the submodule X, or the top-level package itself."""
    is_module = (ROOT / name).is_dir() or (ROOT / f"{name}.py").exists()
    return f"acp_sdk.{name}" if is_module else "acp_sdk"


def imports_of(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "acp_sdk":  # `from acp_sdk import schema` names a module
                found += [(node.lineno, _module_or_top(alias.name)) for alias in node.names]
            else:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def upward_imports(root: Path) -> list[str]:
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        source = layer_of(module)
        if source not in ORDER:
            continue  # the top-level modules may import anything; _codegen is a dev tool
        for line, target in imports_of(path):
            dest = layer_of(target)
            if dest is None or dest == source:
                continue
            if dest not in ORDER or ORDER.index(dest) > ORDER.index(source):
                problems.append(f"{module}:{line} ({source}) imports {target} ({dest})")
    return problems


def test_layers_import_only_downward() -> None:
    assert upward_imports(ROOT) == []


def test_every_subpackage_has_a_layer() -> None:
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert folders - {"_codegen"} == set(ORDER)


def test_an_upward_import_is_caught(tmp_path: Path) -> None:
    """The check can fail: a handler module importing the client is reported."""
    package = tmp_path / "acp_sdk"
    (package / "handlers").mkdir(parents=True)
    (package / "handlers" / "_bad.py").write_text(
        "def f() -> None:\n    from acp_sdk.client._sync import Client\n"
    )
    assert upward_imports(package) == [
        "acp_sdk.handlers._bad:2 (handlers) imports acp_sdk.client._sync (client)"
    ]


@pytest.mark.parametrize("module", ["acp_sdk", "acp_sdk.testing"])
def test_nothing_inside_imports_the_top(module: str) -> None:
    """The top-level modules re-export; a layer importing them would close a circle."""
    for path in ROOT.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
        if layer_of(name) not in ORDER:
            continue
        assert module not in {t for _, t in imports_of(path)}, name
