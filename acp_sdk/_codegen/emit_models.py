"""Emit the attrs model module for one schema file."""

from __future__ import annotations

from acp_sdk._codegen.common import (
    annotation,
    class_order,
    default_of,
    docstring,
    py_type,
    union_members,
)
from acp_sdk._codegen.ir import (
    AliasDef,
    ClassDef,
    LiteralDef,
    Model,
    TList,
    TMap,
    TRef,
    TypeExpr,
    UnionDef,
    UnknownArmDef,
)


def _alias_deps(expr: TypeExpr) -> set[str]:
    if isinstance(expr, TRef):
        return {expr.name}
    if isinstance(expr, TList):
        return _alias_deps(expr.item)
    if isinstance(expr, TMap):
        return _alias_deps(expr.value)
    return set()


def _alias_value(model: Model, definition: AliasDef | LiteralDef | UnionDef) -> str:
    if isinstance(definition, LiteralDef):
        # One Literal per value, joined with `|`: the same type to a checker, and a real
        # Union at runtime, which is what stubtest expects of a union alias.
        literal = " | ".join(f'Literal["{v}"]' for v in definition.values)
        return f"{literal} | str" if definition.open else literal
    if isinstance(definition, UnionDef):
        return " | ".join(union_members(model, definition))
    options = [py_type(o) for o in definition.options]
    if definition.nullable:
        options.append("None")
    return " | ".join(options)


def _alias_order(model: Model) -> list[AliasDef | LiteralDef | UnionDef]:
    aliases = {
        d.name: d for d in model.defs.values() if isinstance(d, (AliasDef, LiteralDef, UnionDef))
    }
    done: set[str] = set()
    out: list[AliasDef | LiteralDef | UnionDef] = []

    def visit(name: str) -> None:
        if name in done or name not in aliases:
            return
        done.add(name)
        definition = aliases[name]
        if isinstance(definition, AliasDef):
            for option in definition.options:
                for dep in sorted(_alias_deps(option)):
                    visit(dep)
        out.append(definition)

    for name in sorted(aliases):
        visit(name)
    return out


def _class(model: Model, cls: ClassDef) -> list[str]:
    base = cls.base or "WireModel"
    lines = ["", "", "@attrs.frozen(kw_only=True, order=False)", f"class {cls.name}({base}):"]
    lines += docstring(cls.description or f"The `{cls.name}` object.", "    ")
    if cls.tag is not None:
        prop, value = cls.tag
        lines += [
            "",
            f'    TAG_PROPERTY: ClassVar[str] = "{prop}"',
            '    """The wire property that tells this arm of its union from the others."""',
            f'    TAG: ClassVar[str] = "{value}"',
            f'    """The value of `{prop}` that selects this class."""',
        ]
    for field in cls.fields:
        default = default_of(model, cls.name, field)
        args = []
        if default is not None:
            if default.kind == "factory":
                args.append(f"factory={default.python}")
            elif default.kind == "empty_seq":
                args.append("factory=list")
            else:
                args.append(f"default={default.python}")
        args.append(f'metadata={{"wire": "{field.wire}"}}')
        lines.append("")
        lines.append(
            f"    {field.py}: {annotation(model, cls.name, field)} = attrs.field({', '.join(args)})"
        )
        lines += docstring(field.description, "    ")
    return lines


def _unknown(arm: UnknownArmDef) -> list[str]:
    return [
        "",
        "",
        "@attrs.frozen(kw_only=True, order=False)",
        f"class {arm.name}(UnknownVariant):",
        *docstring(arm.description, "    "),
        "",
        f'    TAG_PROPERTY: ClassVar[str] = "{arm.tag_prop}"',
        '    """The wire property whose value this SDK did not recognise."""',
        "",
        '    raw: Mapping[str, Any] = attrs.field(metadata={"wire": None})',
        '    """The whole JSON object as received."""',
        "",
        "    @property",
        "    def tag(self) -> str:",
        f'        """The unrecognised `{arm.tag_prop}` value."""',
        "        value = self.raw.get(self.TAG_PROPERTY)",
        '        return value if isinstance(value, str) else ""',
    ]


def emit(model: Model, header: str) -> str:
    lines = [
        header,
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Mapping, Sequence",
        "from typing import Any, ClassVar, Literal, TypeAlias",
        "",
        "import attrs",
        "",
        "from acp_sdk.protocol._model_support import (",
        "    EMPTY,",
        "    UNSET,",
        "    UnknownVariant,",
        "    UnsetType,",
        "    WireModel,",
        ")",
    ]
    for cls in class_order(model):
        lines += _class(model, cls)
    for arm in sorted(
        (d for d in model.defs.values() if isinstance(d, UnknownArmDef)), key=lambda d: d.name
    ):
        lines += _unknown(arm)
    lines.append("")
    for alias in _alias_order(model):
        lines.append("")
        lines.append(f"{alias.name}: TypeAlias = {_alias_value(model, alias)}")
        lines += docstring(alias.description, "")
    names = sorted(model.defs)
    lines += ["", "", "__all__ = ["]
    lines += [f'    "{name}",' for name in names]
    lines += ["]", ""]
    return "\n".join(lines)
