"""The API reference is complete.

Every public name has a docstring: each class and function in a public module's
`__all__`, and each public method and property of those classes (inherited ones from
this package included, such as the generated client calls). Every name of a public
module's `__all__` is rendered by docs/reference/, whose generated pages are current."""

from __future__ import annotations

import enum
import importlib
import inspect
import re
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.repo.test_public_surface import public_modules

ROOT = Path(__file__).resolve().parents[2]

PUBLIC_MODULES = public_modules()


def _own(cls: type) -> Iterator[tuple[str, object]]:
    """Public methods and properties users reach on `cls`, defined in this package.

    Read through the class, so an override without a docstring of its own shows the
    documented base method's (what `help()` and the API reference show too)."""
    for klass in cls.__mro__:
        if not klass.__module__.startswith("acp_sdk") or isinstance(klass, enum.EnumMeta):
            continue
        for name, member in vars(klass).items():
            if name.startswith("_"):
                continue
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if inspect.isfunction(member) or isinstance(member, property):
                yield f"{cls.__qualname__}.{name}", inspect.getattr_static(cls, name)


def _public() -> Iterator[tuple[str, object]]:
    seen: set[int] = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if id(value) in seen or not (inspect.isclass(value) or inspect.isfunction(value)):
                continue
            if typing.get_origin(value) is not None:
                continue  # a type alias (a class to `inspect` on Python 3.10): documented as data
            seen.add(id(value))
            yield f"{module_name}.{name}", value
            if inspect.isclass(value):
                for qualified, member in _own(value):
                    if id(member) not in seen:
                        seen.add(id(member))
                        yield f"{module_name}.{qualified}", member


def _doc(value: object) -> str:
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    return (inspect.getdoc(value) or "").strip()


def test_every_public_name_has_a_docstring() -> None:
    missing = [name for name, value in _public() if not _doc(value)]
    assert not missing, "no docstring:\n" + "\n".join(missing)


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_public_modules_say_what_they_are(module_name: str) -> None:
    assert (importlib.import_module(module_name).__doc__ or "").strip()


def _documented() -> tuple[set[str], set[str]]:
    """What the reference pages render: (`module.Name` paths, whole modules)."""
    names: set[str] = set()
    modules: set[str] = set()
    for page in sorted((ROOT / "docs" / "reference").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(r"^::: (\S+)\n((?:    .*\n)*)", text, re.M):
            target, options = match.group(1), match.group(2)
            members = re.search(r"members: (\[.*?\]|false)", options)
            if members is None:
                modules.add(target)
                names.add(target)
            elif members.group(1) != "false":
                names.update(f"{target}.{m.strip()}" for m in members.group(1)[1:-1].split(","))
        # Tables and lists of names: rows on the method pages, twins on the unstable page.
        module = "acp_sdk.unstable" if page.stem == "unstable" else "acp_sdk.methods"
        listed = re.findall(r"^(?:\| |- )`(\w+)`", text, re.M)
        listed += re.findall(r"`(\w+)`", "".join(re.findall(r"^As in .*$", text, re.M)))
        names.update(f"{module}.{name}" for name in listed)
        names.update(re.findall(r"`(acp_sdk\.\w+)`", text))
    return names, modules


def _resolve(path: str) -> object:
    module_name, _, name = path.rpartition(".")
    module = sys.modules.get(module_name)
    return getattr(module, name, None) if module is not None else None


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_the_reference_renders_every_public_name(module_name: str) -> None:
    names, modules = _documented()
    rendered = {id(_resolve(path)) for path in names}
    for whole in modules:
        module = sys.modules.get(whole)
        if module is not None:
            rendered |= {id(getattr(module, n)) for n in getattr(module, "__all__", ())}
    module = importlib.import_module(module_name)
    missing = [
        name
        for name in module.__all__
        if module_name not in modules
        and f"{module_name}.{name}" not in names
        and id(getattr(module, name)) not in rendered
    ]
    assert not missing, f"{module_name}: not in docs/reference: {missing}"


def test_generated_reference_pages_are_current() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "acp_sdk._codegen.reference", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
