"""Emit the typed call methods of the facades from the method table rows.

For each method one side sends, a keyword-only method whose parameters are the fields of
the params class (same names, types and defaults), so a type checker catches a misspelled
keyword or a wrong type, and whose return type is the row's result type. The body builds
the params object and hands it to the facade's `_request` / `_notify`. Sync and async
flavours differ only in `def` vs `async def` and `await`.

Three rows return richer objects than their raw result: `session/new`, `session/load`
and `session/resume` return a session handle; `session/prompt` returns a turn. Those are
listed in `WRAPPED`. The generated class is generic in those types (the facade names
them when it subclasses), so generated code never imports the facade it serves: it sits
below it, with no import circle.

Each method imports the rows and models modules when it is called (`_rows.X`,
`_models.Y`), and the module imports the models for type checkers only: importing a
facade (`from acp_sdk import Client`) then builds no model class and no method table.
A call pays two imports of modules already loaded; `import a.b as c` is the cheap form
(about 0.15 us each, against 0.5 us for a `from` import of several names).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from acp_sdk._codegen.common import all_fields, annotation, default_of, docstring
from acp_sdk._codegen.emit_methods import Row
from acp_sdk._codegen.ir import ClassDef, Field, Model

# wire -> (hook method on the facade, the type variable the facade fills in)
WRAPPED = {
    "session/new": ("_open_session", "NewSessionT"),
    "session/load": ("_open_session", "LoadSessionT"),
    "session/resume": ("_open_session", "ResumeSessionT"),
    "session/prompt": ("_start_turn", "TurnT"),
}


# Required lists a call may leave out, sending `[]`: an empty list is the usual value
# (`client.new_session(cwd=".")` with no MCP servers). Every other required list (a
# prompt's blocks, a permission request's options) must be passed, as on the models.
EMPTY_BY_DEFAULT_IN_CALLS = frozenset({"mcpServers"})


def _param(model: Model, owner: str, field: Field) -> tuple[str, str]:
    """(signature fragment, expression passed to the params class)."""
    default = default_of(model, owner, field)
    hint = annotation(model, owner, field)
    if default is None:
        if field.type.__class__.__name__ == "TList" and not field.nullable:
            if field.wire in EMPTY_BY_DEFAULT_IN_CALLS:
                return f"{field.py}: {hint} = ()", f"list({field.py})"
            return f"{field.py}: {hint}", f"list({field.py})"
        return f"{field.py}: {hint}", field.py
    if default.kind == "factory":
        return (
            f"{field.py}: {hint} | None = None",
            f"{field.py} if {field.py} is not None else {default.python}()",
        )
    if default.kind == "empty_seq":
        return f"{field.py}: {hint} = ()", f"list({field.py})"
    return f"{field.py}: {hint} = {default.python}", field.py


GENERATED = "acp_sdk.protocol._generated"


@dataclass(frozen=True)
class Modules:
    """Where a mixin's bodies find their rows and models (stable, or unstable)."""

    rows: str = f"{GENERATED}.methods"
    models: str = f"{GENERATED}.models"

    @property
    def rows_import(self) -> str:
        return f"        import {self.rows} as _rows"

    @property
    def models_import(self) -> str:
        return f"        import {self.models} as _models"


STABLE = Modules()
UNSTABLE = Modules(f"{GENERATED}.unstable_methods", f"{GENERATED}.unstable_models")


def _lazy(model: Model, expression: str, modules: Modules) -> tuple[list[str], str]:
    """The body's imports, and its expression with each model class read off `_models`."""
    used = sorted(n for n in model.defs if re.search(rf"\b{n}\b", expression))
    if not used:
        return [modules.rows_import], expression
    names = "|".join(used)
    return [modules.rows_import, modules.models_import], re.sub(
        rf"\b({names})\b", r"_models.\1", expression
    )


def _method(model: Model, row: Row, flavour: str, modules: Modules) -> list[str]:
    is_async = flavour == "async"
    define = "async def" if is_async else "def"
    wait = "await " if is_async else ""
    params_def = model.defs[row.params]
    name = row.handler
    hook, wrapped_type = WRAPPED.get(row.wire, ("", ""))
    if row.kind == "REQUEST":
        returns = wrapped_type or row.result or "None"
    else:
        returns = "None"
    call = hook or ("_request" if row.kind == "REQUEST" else "_notify")
    constant = row.constant
    about = params_def.description if isinstance(params_def, ClassDef) else ""
    doc = docstring(f"`{row.wire}`: {about or ''}", "        ")
    if not isinstance(params_def, ClassDef):
        # A union of params shapes (session/set_config_option): take the object itself.
        lines = [f"    {define} {name}(self, params: {row.params}, /) -> {returns}:", *doc]
        lines += [modules.rows_import]
        lines += _body(f"{wait}self.{call}(_rows.{constant}, params)", returns if hook else "")
        return lines
    fields = all_fields(model, params_def)
    pieces = [_param(model, row.params, f) for f in fields]
    signature = ", ".join(p[0] for p in pieces)
    arguments = ", ".join(f"{f.py}={p[1]}" for f, p in zip(fields, pieces, strict=True))
    star = ", *, " if pieces else ""
    lines = [f"    {define} {name}(self{star}{signature}) -> {returns}:", *doc]
    imports, expression = _lazy(model, f"{row.params}({arguments})", modules)
    lines += imports
    lines += _body(f"{wait}self.{call}(_rows.{constant}, {expression})", returns if hook else "")
    return lines


def _body(expression: str, typevar: str) -> list[str]:
    if not typevar:
        return [f"        return {expression}"]
    # The hook returns the facade's handle: name its type for the checker.
    return [f"        handle: {typevar} = {expression}", "        return handle"]


def emit(
    model: Model,
    rows: Sequence[Row],
    header: str,
    *,
    class_name: str,
    sender: str,
    flavour: str,
    unstable: bool = False,
) -> str:
    """The mixin of typed calls to the `sender` side: the stable rows, or (with `unstable`)
    only the rows the unstable schema adds, built from the unstable models."""
    modules = UNSTABLE if unstable else STABLE
    sent = [
        r
        for r in rows
        if r.handled_by == sender and r.unstable == unstable and r.layer != "PROTOCOL"
    ]
    names = sorted({r.params for r in sent} | {r.result for r in sent if r.result})
    is_async = flavour == "async"
    define = "async def" if is_async else "def"
    lines = [
        header,
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Mapping, Sequence",
        "from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar",
        "",
        "from acp_sdk.protocol._model_support import EMPTY, UNSET, UnsetType",
        "from acp_sdk.protocol._rows import Method, Notification",
        "",
        "if TYPE_CHECKING:  # the methods import what they build when called",
        "__MODELS__",
        "",
        'P = TypeVar("P")',
        'R = TypeVar("R")',
    ]
    wires = {r.wire for r in sent}
    wrapped = [typevar for wire, (_, typevar) in WRAPPED.items() if wire in wires]
    lines += [f'{t} = TypeVar("{t}")' for t in wrapped]
    generic = f"(Generic[{', '.join(wrapped)}])" if wrapped else ""
    lines += [
        "",
        "",
        f"class {class_name}{generic}:",
        f'    """Typed calls of every {"unstable " if unstable else ""}method the '
        f'{sender.lower()} handles (generated)."""',
        "",
        "    __slots__ = ()",
        "",
        f"    {define} _request(self, row: Method[P, R], params: P) -> R:",
        "        raise NotImplementedError",
        "",
        f"    {define} _notify(self, row: Notification[P], params: P) -> None:",
        "        raise NotImplementedError",
    ]
    if wrapped:
        lines += [
            "",
            f"    {define} _open_session(self, row: Method[Any, Any], params: Any) -> Any:",
            "        raise NotImplementedError",
            "",
            f"    {define} _start_turn(self, row: Method[Any, Any], params: Any) -> Any:",
            "        raise NotImplementedError",
        ]
    for row in sent:
        lines.append("")
        lines += _method(model, row, flavour, modules)
    lines.append("")
    text = "\n".join(lines)
    # Names the signatures use (the bodies import their own): for type checkers only.
    body = text.split("__MODELS__", 1)[1]
    signatures = re.sub(r"_models\.\w+", "", body)
    used = sorted(n for n in set(model.defs) | set(names) if re.search(rf"\b{n}\b", signatures))
    imports = "\n".join(
        [
            f"    from {modules.models} import (",
            *[f"        {n}," for n in used],
            "    )",
        ]
    )
    # Unused helper imports are removed by the generator's ruff pass (F401).
    return text.replace("__MODELS__", imports)
