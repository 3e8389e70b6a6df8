"""Emit the attrs model module for one schema file."""

from __future__ import annotations

from acp_sdk._codegen import emit_model_methods
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
    Field,
    LiteralDef,
    Model,
    TList,
    TMap,
    TRef,
    TypeExpr,
    UnionDef,
    UnknownArmDef,
)
from acp_sdk._codegen.reuse import Shared


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
        args = _field_args(model, cls.name, field)
        args.append(f'metadata={{"wire": "{field.wire}"}}')
        lines.append("")
        lines.append(
            f"    {field.py}: {annotation(model, cls.name, field)} = attrs.field({', '.join(args)})"
        )
        lines += docstring(field.description, "    ")
    lines += emit_model_methods.methods(cls.name, _slots(model, cls))
    return lines


def _slots(model: Model, cls: ClassDef) -> list[emit_model_methods.Slot]:
    """Every attrs field of `cls` in attrs order: WireModel's, the base classes', its own."""
    if cls.base is None:
        inherited = list(emit_model_methods.WIRE_MODEL_SLOTS)
    else:
        base = model.defs[cls.base]
        assert isinstance(base, ClassDef)
        inherited = _slots(model, base)
    own = [
        emit_model_methods.slot_from_args(
            field.py, annotation(model, cls.name, field), _field_args(model, cls.name, field)
        )
        for field in cls.fields
    ]
    names = {slot.name for slot in own}
    return [slot for slot in inherited if slot.name not in names] + own


def _field_args(model: Model, owner: str, field: Field) -> list[str]:
    """The default or factory argument of the field's `attrs.field(...)`, if any."""
    default = default_of(model, owner, field)
    args = []
    if default is not None:
        if default.kind == "factory":
            args.append(f"factory={default.python}")
        elif default.kind == "empty_seq":
            args.append("factory=list")
        else:
            args.append(f"default={default.python}")
    return args


_RAW = emit_model_methods.Slot(name="raw", annotation="Mapping[str, Any]", default=None)


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
        *emit_model_methods.methods(arm.name, [_RAW]),
        "",
        "    @property",
        "    def tag(self) -> str:",
        f'        """The unrecognised `{arm.tag_prop}` value."""',
        "        value = self.raw.get(self.TAG_PROPERTY)",
        '        return value if isinstance(value, str) else ""',
    ]


def emit(model: Model, header: str, shared: Shared | None = None) -> str:
    """The models module; with `shared`, those definitions are imported, not emitted."""
    reused = shared.names if shared is not None else frozenset()
    lines = [
        header,
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Mapping, Sequence",
        "from typing import Any, ClassVar, Final, Literal, TypeAlias",
        "",
        "import attrs",
        "",
        "__NOTHING_IMPORT__",
        "from acp_sdk.protocol._model_support import (",
        "    OBJECT_SETATTR,",
        "    EMPTY,",
        "    NO_EXPLICIT,",
        "    UNSET,",
        "    UnknownVariant,",
        "    UnsetType,",
        "    WireModel,",
        "    model_repr,",
        ")",
    ]
    if shared is not None and reused:
        # Re-exported under the same names: this module still holds every definition.
        lines += [
            "# What this schema defines exactly as the stable one (acp_sdk._codegen.reuse):",
            "# the stable objects themselves.",
            f"from {shared.models_module} import (",
        ]
        lines += [f"    {name} as {name}," for name in sorted(reused)]
        lines.append(")")
    lines += [
        "",
        "_BIND_SETATTR: Final = OBJECT_SETATTR.__get__",
        '"""`object.__setattr__` bound to an instance: what each `__init__` stores fields with."""',
    ]
    for cls in class_order(model):
        if cls.name not in reused:
            lines += _class(model, cls)
    for arm in sorted(
        (d for d in model.defs.values() if isinstance(d, UnknownArmDef)), key=lambda d: d.name
    ):
        if arm.name not in reused:
            lines += _unknown(arm)
    lines.append("")
    for alias in _alias_order(model):
        if alias.name in reused:
            continue
        lines.append("")
        lines.append(f"{alias.name}: TypeAlias = {_alias_value(model, alias)}")
        lines += docstring(alias.description, "")
    names = sorted(model.defs)
    lines += ["", "", "__all__ = ["]
    lines += [f'    "{name}",' for name in names]
    lines += ["]", ""]
    text = "\n".join(lines)
    # `attrs.NOTHING` is the default of a factory field's `__init__` parameter.
    uses_nothing = "= NOTHING" in text
    return text.replace(
        "__NOTHING_IMPORT__\n", "from attrs import NOTHING, NothingType\n\n" if uses_nothing else ""
    )
