"""Facts about fields that both the model and the codec emitters need."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from acp_sdk._codegen.ir import (
    ClassDef,
    Field,
    LiteralDef,
    Model,
    SchemaError,
    TList,
    TMap,
    TPrim,
    TRef,
    TypeExpr,
    UnionDef,
    UnknownArmDef,
)

LINE = 100

_PRIM_PY = {"str": "str", "int": "int", "float": "float", "bool": "bool", "any": "Any"}


def py_type(expr: TypeExpr) -> str:
    if isinstance(expr, TPrim):
        if expr.kind == "object":
            return "Mapping[str, Any]"
        return _PRIM_PY[expr.kind]
    if isinstance(expr, TRef):
        return expr.name
    if isinstance(expr, TList):
        return f"Sequence[{py_type(expr.item)}]"
    if isinstance(expr, TMap):
        return f"Mapping[str, {py_type(expr.value)}]"
    return f'Literal["{expr.value}"]'


@dataclass(frozen=True)
class Default:
    """How an optional field defaults, and how the codec spots that default."""

    kind: str  # "none" | "unset" | "empty_seq" | "empty_map" | "false" | "const" | "factory"
    python: str  # the attrs default / factory expression
    value_repr: str = ""  # for "const": the Python literal


def default_of(model: Model, owner: str, field: Field) -> Default | None:
    """None for a required field."""
    if field.required:
        return None
    if field.null_is_meaningful:
        return Default("unset", "UNSET")
    if field.nullable:
        if field.has_default and field.default is not None:
            raise SchemaError(f"{owner}.{field.wire}: nullable field with a non-null default")
        return Default("none", "None")
    expr = field.type
    if field.has_default:
        value = field.default
        if value is False and expr == TPrim("bool"):
            return Default("false", "False")
        if value == [] and isinstance(expr, TList):
            return Default("empty_seq", "()")
        if value == {} and isinstance(expr, (TMap, TPrim)):
            return Default("empty_map", "EMPTY")
        if isinstance(value, str) and isinstance(expr, TRef):
            target = model.defs[expr.name]
            if isinstance(target, LiteralDef) and value in target.values:
                return Default("const", repr(value), repr(value))
        # The schema's default object spells out each nested default; an instance
        # built with no arguments carries exactly those defaults.
        if isinstance(value, dict) and isinstance(expr, TRef) and _is_class(model, expr.name):
            return Default("factory", expr.name)
        raise SchemaError(f"{owner}.{field.wire}: unsupported default {value!r}")
    if isinstance(expr, TList):
        return Default("empty_seq", "()")
    if isinstance(expr, TMap):
        return Default("empty_map", "EMPTY")
    return Default("none", "None")


def null_note(wire: str) -> str:
    """What `_explicit` holds for a default-on-null field that was `null` on the wire
    (a wire name never holds `:`, so it cannot be taken for a field's own note). The
    decoder writes it; the encoder reads it to write `null` again."""
    return f"{wire}:null"


def _is_class(model: Model, name: str) -> bool:
    return isinstance(model.defs[name], ClassDef)


def annotation(model: Model, owner: str, field: Field) -> str:
    base = py_type(field.type)
    default = default_of(model, owner, field)
    if default is None:
        return base + (" | None" if field.nullable else "")
    if default.kind == "unset":
        return f"{base} | UnsetType | None"
    if default.kind == "none":
        return f"{base} | None"
    return base


def docstring(text: str, indent: str) -> list[str]:
    """A docstring block, wrapped to the line length, never ending in a quote."""
    text = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    text = (
        text.replace("\u2019", "'")
        .replace("\u2018", "'")
        .replace("\u201c", '"')
        .replace("\u201d", '"')
    )
    if not text:
        return []
    width = LINE - len(indent)
    lines: list[str] = []
    for paragraph in text.split("\n\n"):
        flowed = " ".join(line.strip() for line in paragraph.splitlines())
        wrapped = textwrap.wrap(flowed, width=width, break_long_words=False, break_on_hyphens=False)
        lines.extend(wrapped or [""])
        lines.append("")
    lines = lines[:-1]
    if len(lines) == 1 and len(lines[0]) + 6 <= width:
        one = lines[0]
        if one.endswith('"'):
            one += " "
        return [f'{indent}"""{one}"""']
    if lines[-1].endswith('"'):
        lines[-1] += " "
    return [
        f'{indent}"""{lines[0]}',
        *[f"{indent}{ln}" if ln else "" for ln in lines[1:]],
        f'{indent}"""',
    ]


def class_order(model: Model) -> list[ClassDef]:
    """Classes sorted by name, with every base before its subclasses."""
    classes = {d.name: d for d in model.defs.values() if isinstance(d, ClassDef)}
    done: set[str] = set()
    out: list[ClassDef] = []

    def visit(name: str) -> None:
        if name in done:
            return
        done.add(name)
        cls = classes[name]
        # A base class, and a class built as a field default, must exist first.
        deps = [cls.base] if cls.base is not None else []
        deps += [f.type.name for f in cls.fields if f.has_default and isinstance(f.type, TRef)]
        for dep in deps:
            if dep in classes:
                visit(dep)
        out.append(cls)

    for name in sorted(classes):
        visit(name)
    return out


def all_fields(model: Model, cls: ClassDef) -> list[Field]:
    """Own fields plus inherited ones, base first."""
    if cls.base is None:
        return list(cls.fields)
    base = model.defs[cls.base]
    assert isinstance(base, ClassDef)
    return all_fields(model, base) + list(cls.fields)


def union_members(model: Model, union: UnionDef) -> list[str]:
    names = [arm for _, arm in union.tagged] + list(union.untagged)
    if union.unknown is not None:
        names.append(union.unknown)
    return names


def is_model_class(model: Model, name: str) -> bool:
    return isinstance(model.defs.get(name), (ClassDef, UnknownArmDef))


def is_union(model: Model, name: str) -> bool:
    return isinstance(model.defs.get(name), UnionDef)
