"""Emit straight-line decode/encode functions for every model of one schema file.

One function per class keeps the hot path free of per-field interpretation: a decoder
reads each required key by subscript and checks it with a `type(v) is ...` test, looks
for optional keys only when the dict holds more than the required ones, counts the keys
it knew (so unknown keys are collected only when there are any), and fills a mutable twin
of the model (`_codec_support.twin`) whose class it then sets to the frozen model. Unions
dispatched by a tag are decoded inline where a field holds one (the usual case: a dict
with a known tag), and a tagged arm's body (`_a_`) skips re-reading its tag. The
encoders, which check every value they write, are emitted by `emit_encoders`.
"""

from __future__ import annotations

import re

from acp_sdk._codegen.common import (
    Default,
    all_fields,
    class_order,
    default_of,
    null_note,
)
from acp_sdk._codegen.emit_encoders import EncoderEmitter
from acp_sdk._codegen.ir import (
    INT_RANGES,
    AliasDef,
    ClassDef,
    Field,
    LiteralDef,
    Model,
    SchemaError,
    TConst,
    TList,
    TMap,
    TPrim,
    TRef,
    TypeExpr,
    UnionDef,
    UnknownArmDef,
)
from acp_sdk._codegen.reuse import Shared

_PRIM_CHECK = {
    "str": ("type(v) is not str", '"a string"'),
    "bool": ("type(v) is not bool", '"a boolean"'),
    "float": ("type(v) is not float and type(v) is not int", '"a number"'),
    "object": ("type(v) is not dict", '"an object"'),
}


class _Emitter:
    def __init__(self, model: Model, models_module: str, shared: Shared | None) -> None:
        self.model = model
        self.models_module = models_module
        self.shared = shared
        self.reused = shared.names if shared is not None else frozenset()
        self.lines: list[str] = []

    # ------------------------------------------------------------------ type helpers

    def trivial_alias(self, name: str) -> TypeExpr | None:
        """An alias of a single scalar (SessionId = str) is decoded inline."""
        definition = self.model.defs[name]
        if isinstance(definition, AliasDef) and len(definition.options) == 1:
            option = definition.options[0]
            if isinstance(option, TPrim) and not definition.nullable:
                return option
        return None

    def item_fn(self, expr: TypeExpr) -> str:
        """A callable that decodes one value of `expr`."""
        if isinstance(expr, TPrim):
            if expr.kind == "int":
                return f'_s.D_INT["{expr.int_format}"]'
            return f"_s.d_{expr.kind if expr.kind != 'object' else 'object'}"
        if isinstance(expr, TRef):
            inline = self.trivial_alias(expr.name)
            if inline is not None:
                return self.item_fn(inline)
            return f"_d_{expr.name}"
        raise SchemaError(f"no item decoder for {expr}")

    def decode_stmts(self, expr: TypeExpr, indent: str) -> list[str]:
        """Statements that decode `v` into `r`, raising DecodeError without a path."""
        if isinstance(expr, TPrim):
            if expr.kind == "any":
                return [f"{indent}r = v"]
            if expr.kind == "int":
                low_high = f'_s.INT_LIMITS["{expr.int_format}"]'
                return [
                    f"{indent}if type(v) is not int or not {low_high}[0] <= v <= {low_high}[1]:",
                    f'{indent}    raise _s.bad_int(v, "{expr.int_format}")',
                    f"{indent}r = v",
                ]
            check, expected = _PRIM_CHECK[expr.kind]
            return [
                f"{indent}if {check}:",
                f"{indent}    raise _s.wrong({expected}, v)",
                f"{indent}r = v",
            ]
        if isinstance(expr, TConst):
            return [
                f'{indent}if v != "{expr.value}":',
                f'{indent}    raise _s.bad_literal(v, ("{expr.value}",))',
                f"{indent}r = v",
            ]
        if isinstance(expr, TRef):
            inline = self.trivial_alias(expr.name)
            if inline is not None:
                return self.decode_stmts(inline, indent)
            target = self.model.defs[expr.name]
            if isinstance(target, LiteralDef):
                if target.open:
                    return self.decode_stmts(TPrim("str"), indent)
                return [
                    f"{indent}if type(v) is not str or v not in _L_{expr.name}:",
                    f"{indent}    raise _s.bad_literal(v, _L_{expr.name})",
                    f"{indent}r = v",
                ]
            if isinstance(target, UnionDef) and target.tag_prop is not None:
                # The usual case inline (a dict with a known tag: call the arm's body);
                # anything else goes through the union's decoder, for the same errors.
                name = expr.name
                return [
                    f"{indent}if (",
                    f"{indent}    type(v) is dict",
                    f'{indent}    and type(t := v.get("{target.tag_prop}")) is str',
                    f"{indent}    and (f := _T_{name}.get(t)) is not None",
                    f"{indent}):",
                    f"{indent}    r = f(v)",
                    f"{indent}else:",
                    f"{indent}    r = _d_{name}(v)",
                ]
            return [f"{indent}r = _d_{expr.name}(v)"]
        if isinstance(expr, TList):
            union = self.tagged_union(expr.item)
            if union is not None:
                # Content blocks and the like: each item's usual case inline, as for a
                # single union field; on any error, `d_list` decodes the list again and
                # raises with the failing index.
                name = union.name
                return [
                    f"{indent}if type(v) is list:",
                    f"{indent}    try:",
                    f"{indent}        r = [",
                    f"{indent}            f(x)",
                    f"{indent}            if type(x) is dict",
                    f'{indent}            and type(t := x.get("{union.tag_prop}")) is str',
                    f"{indent}            and (f := _T_{name}.get(t)) is not None",
                    f"{indent}            else _d_{name}(x)",
                    f"{indent}            for x in v",
                    f"{indent}        ]",
                    f"{indent}    except DecodeError:",
                    f"{indent}        r = _s.d_list(v, _d_{name})",
                    f"{indent}else:",
                    f"{indent}    r = _s.d_list(v, _d_{name})",
                ]
            return [f"{indent}r = _s.d_list(v, {self.item_fn(expr.item)})"]
        return [f"{indent}r = _s.d_map(v, {self.item_fn(expr.value)})"]

    def tagged_union(self, expr: TypeExpr) -> UnionDef | None:
        """The union `expr` refers to, if it is one dispatched by a tag property."""
        if isinstance(expr, TRef):
            target = self.model.defs[expr.name]
            if isinstance(target, UnionDef) and target.tag_prop is not None:
                return target
        return None

    # ------------------------------------------------------------------ defaults

    def default_value(
        self, owner: str, field: Field, default: Default | None, *, present: bool = False
    ) -> str:
        """The Python value a field takes when absent or (default-on-error) invalid.

        With `present`, the wire carried the field (as `null` or an invalid value), so the
        decoded model remembers it and re-encodes it: an empty map is then a fresh `{}`,
        never the shared read-only `_EMPTY`, because a decoded value must always encode
        (a `mappingproxy` is not JSON) and every other decoded map is a plain dict too."""
        value = self._default_value(owner, field, default)
        return "{}" if present and value == "_EMPTY" else value

    def _default_value(self, owner: str, field: Field, default: Default | None) -> str:
        if default is None:
            if field.nullable:
                return "None"
            if isinstance(field.type, TList):
                return "[]"
            if isinstance(field.type, TMap) or field.type == TPrim("object"):
                return "_EMPTY"
            if field.type == TPrim("any"):
                return "None"
            raise SchemaError(f"{owner}.{field.wire}: required field has no default-on-error value")
        return {
            "none": "None",
            "unset": "_UNSET",
            "empty_seq": "[]",
            "empty_map": "_EMPTY",
            "false": "False",
        }.get(default.kind) or (
            default.value_repr if default.kind == "const" else f"_DF_{owner}_{field.py}"
        )

    def is_default_test(
        self, owner: str, field: Field, default: Default, var: str, *, negate: bool = False
    ) -> str:
        """An expression: `var` holds the value the encoder would otherwise omit
        (or, with `negate`, does not)."""
        kind = default.kind
        tests = {
            "none": (f"{var} is None", f"{var} is not None"),
            "empty_seq": (f"not {var}", var),
            "empty_map": (f"not {var}", var),
            "false": (f"{var} is False", f"{var} is not False"),
            "const": (f"{var} == {default.value_repr}", f"{var} != {default.value_repr}"),
            # The shared default object itself (what decoding an absent field gives) is
            # recognised by identity, before comparing fields.
            "factory": (
                f"({var} is _DF_{owner}_{field.py} or {var} == _DF_{owner}_{field.py})",
                f"({var} is not _DF_{owner}_{field.py} and {var} != _DF_{owner}_{field.py})",
            ),
        }
        if kind not in tests:
            raise SchemaError(f"{owner}.{field.wire}: no default test for {kind}")
        return tests[kind][1 if negate else 0]

    # ------------------------------------------------------------------ classes

    def emit_class_decoder(self, cls: ClassDef) -> None:
        name = cls.name
        out = self.lines
        out += ["", "", f"def _d_{name}(d: Any) -> {name}:"]
        out += ["    if type(d) is not dict:", "        raise _s.not_object(d)"]
        if cls.tag is None:
            self.emit_class_body(cls, 0)
            return
        # A tagged class's body (`_a_`) is what its unions call once they have read the
        # tag; decoded on its own, the tag may be left out, and is checked when present.
        prop, value = cls.tag
        out += [
            f'    v = d.get("{prop}", _MISSING)',
            "    if v is _MISSING:",
            f'        return _a_{name}({{"{prop}": "{value}", **d}})',
            f'    if v != "{value}":',
            f'        raise _s.bad_literal(v, ("{value}",)).at("{prop}")',
            f"    return _a_{name}(d)",
        ]
        out += ["", "", f"def _a_{name}(d: Any) -> {name}:"]
        self.emit_class_body(cls, 1)

    def emit_class_body(self, cls: ClassDef, known: int) -> None:
        """Decode `d` (a dict, with `known` keys already checked) into `cls`.

        Required fields are read first, by subscript; when they (and the tag) are all the
        keys there are, every optional field is absent and takes its default without a
        lookup (the usual case for streamed chunks). Each value is stored in its slot as
        soon as it is checked, into an instance of the class's mutable twin (`_s.twin`:
        plain slot stores, which the interpreter specialises), whose class is then switched
        to the frozen model: about half the cost of storing through the slot descriptors,
        and a third of attrs' frozen __init__."""
        name = cls.name
        fields = all_fields(self.model, cls)
        out = self.lines
        uses_ex = self.tracks_explicit(cls)
        out += [f"    w: Any = _new(_W_{name})", f"    o: {name}"]
        if fields:
            out.append("    v: Any")
        declare = len(out)
        optional = [f for f in fields if default_of(self.model, name, f) is not None]
        required = [f for f in fields if f not in optional]
        # A required default-on-null field can note its `null` before the optional ones.
        early_ex = any(f.default_on_null for f in required)
        if early_ex:
            out.append("    ex: list[str] | None = None")
        for field in required:
            self.emit_field_decode(cls, field, "    ")
        count = known + len(required)
        explicit = "_NO_EXPLICIT if ex is None else frozenset(ex)" if uses_ex else "_NO_EXPLICIT"
        if not optional:
            out.append(f"    w.extra = _EMPTY if len(d) == {count} else _s.extras(d, _K_{name})")
            out += [f"    w._explicit = {explicit}", *self.finish(name)]
            self.declare_r(declare)
            return
        out.append(f"    if len(d) == {count}:")
        for field in optional:
            value = self.default_value(name, field, default_of(self.model, name, field))
            out.append(f"        {self.store(cls, field, value)}")
        out.append("        w.extra = _EMPTY")
        out.append(f"        w._explicit = {explicit if early_ex else '_NO_EXPLICIT'}")
        out += ["    " + line for line in self.finish(name)]
        out.append(f"    n = {count}")
        if uses_ex and not early_ex:
            out.append("    ex: list[str] | None = None")
        for field in optional:
            self.emit_field_decode(cls, field, "    ")
        out.append(f"    w.extra = _EMPTY if n == len(d) else _s.extras(d, _K_{name})")
        out += [f"    w._explicit = {explicit}", *self.finish(name)]
        self.declare_r(declare)

    def declare_r(self, at: int) -> None:
        """Declare the scratch variable `r` at line `at` if the body uses it."""
        if any(re.search(r"\br = ", line) for line in self.lines[at:]):
            self.lines.insert(at, "    r: Any")

    def store(self, cls: ClassDef, field: Field, value: str) -> str:
        """The statement storing `value` in `field`'s slot of the twin `w`."""
        return f"w.{field.py} = {value}"

    @staticmethod
    def finish(name: str) -> list[str]:
        """Make the filled twin `w` the frozen model, and return it."""
        return [f"    w.__class__ = {name}", "    o = w", "    return o"]

    def tracks_explicit(self, cls: ClassDef) -> bool:
        """Whether any field can be present on the wire yet hold its omitted default, or
        hold its default although the wire carried `null` (default-on-null)."""
        for field in all_fields(self.model, cls):
            default = default_of(self.model, cls.name, field)
            if field.default_on_null or (default is not None and default.kind != "unset"):
                return True
        return False

    def simple_check(self, expr: TypeExpr) -> tuple[str, str] | None:
        """For a value checked in one expression: (is-invalid test on `v`, error to raise).
        An empty test means every value is valid. None: the value needs a decoder call."""
        if isinstance(expr, TPrim):
            if expr.kind == "any":
                return ("", "")
            if expr.kind == "int":
                fmt = expr.int_format or "int64"
                low, high = INT_RANGES[fmt]
                return (
                    f"type(v) is not int or not {low} <= v <= {high}",
                    f'_s.bad_int(v, "{fmt}")',
                )
            check, expected = _PRIM_CHECK[expr.kind]
            return (check, f"_s.wrong({expected}, v)")
        if isinstance(expr, TConst):
            return (f'v != "{expr.value}"', f'_s.bad_literal(v, ("{expr.value}",))')
        if isinstance(expr, TRef):
            inline = self.trivial_alias(expr.name)
            if inline is not None:
                return self.simple_check(inline)
            target = self.model.defs[expr.name]
            if isinstance(target, LiteralDef):
                if target.open:
                    return self.simple_check(TPrim("str"))
                return (
                    f"type(v) is not str or v not in _L_{expr.name}",
                    f"_s.bad_literal(v, _L_{expr.name})",
                )
        return None

    def emit_field_decode(self, cls: ClassDef, field: Field, indent: str) -> None:
        """Read `field` from `d`, check or decode it, and store it in `o`.

        A required field is read by subscript (a missing key raises); an optional one is
        looked for with `in`, counted in `n` when present, and takes its default when
        absent."""
        owner = cls.name
        out = self.lines
        default = default_of(self.model, owner, field)
        wire = field.wire
        if default is None:
            out += [
                f"{indent}try:",
                f'{indent}    v = d["{wire}"]',
                f"{indent}except KeyError:",
                f'{indent}    raise _s.missing("{wire}") from None',
            ]
            body_indent = indent
        else:
            value = self.default_value(owner, field, default)
            out += [
                f'{indent}if "{wire}" not in d:',
                f"{indent}    {self.store(cls, field, value)}",
                f"{indent}else:",
                f'{indent}    v = d["{wire}"]',
                f"{indent}    n += 1",
            ]
            body_indent = indent + "    "
        inner = body_indent
        if field.default_on_null:
            # The schema's default-on-null: `null` decodes as the default, and the model
            # remembers it was `null` (`<wire>:null`), so it re-encodes as `null`.
            value = self.default_value(owner, field, default, present=True)
            out.append(f"{body_indent}if v is None:")
            out.append(f"{body_indent}    {self.store(cls, field, value)}")
            out.append(f'{body_indent}    ex = _s.note(ex, "{null_note(wire)}")')
            out.append(f"{body_indent}else:")
            inner = body_indent + "    "
        elif field.nullable or (default is not None and field.default_on_error):
            # `null` is a value of its own (nullable) or tolerated (default-on-error).
            out.append(f"{body_indent}if v is None:")
            if field.nullable or (default is not None and default.kind == "none"):
                out.append(f"{body_indent}    {self.store(cls, field, 'None')}")
            else:
                value = self.default_value(owner, field, default, present=True)
                out.append(f"{body_indent}    {self.store(cls, field, value)}")
            if default is not None and default.kind != "unset":
                out.append(f'{body_indent}    ex = _s.note(ex, "{wire}")')
            out.append(f"{body_indent}else:")
            inner = body_indent + "    "
        simple = None if field.skip_invalid_items else self.simple_check(field.type)
        result = "r"
        if simple is not None:
            test, error = simple
            if not test:
                result = "v"
            elif field.default_on_error:
                out += [
                    f"{inner}if {test}:",
                    f"{inner}    r = {self.default_value(owner, field, default, present=True)}",
                    f"{inner}else:",
                    f"{inner}    r = v",
                ]
            else:
                out += [f"{inner}if {test}:", f'{inner}    raise {error}.at("{wire}")']
                result = "v"
        else:
            out.append(f"{inner}try:")
            out += self.decode_stmts_for_field(field, inner + "    ")
            if field.default_on_error:
                out.append(f"{inner}except DecodeError:")
                fallback = self.default_value(owner, field, default, present=True)
                out.append(f"{inner}    r = {fallback}")
            else:
                out.append(f"{inner}except DecodeError as e:")
                out.append(f'{inner}    raise e.at("{wire}") from None')
        # A value that passed a type check is never None: no test for a None default then.
        checked = simple is not None and bool(simple[0]) and not field.default_on_error
        if (
            default is not None
            and default.kind != "unset"
            and not (checked and default.kind == "none")
        ):
            out.append(f"{inner}if {self.is_default_test(owner, field, default, result)}:")
            out.append(f'{inner}    ex = _s.note(ex, "{wire}")')
        out.append(f"{inner}{self.store(cls, field, result)}")

    def decode_stmts_for_field(self, field: Field, indent: str) -> list[str]:
        if isinstance(field.type, TList) and field.skip_invalid_items:
            return [f"{indent}r = _s.d_list_skip(v, {self.item_fn(field.type.item)})"]
        return self.decode_stmts(field.type, indent)

    # ------------------------------------------------------------------ unions and aliases

    def arm_fn(self, union: UnionDef, tag: str, arm: str) -> str:
        """What the union calls for an arm once the tag matched: its body, if it has one."""
        definition = self.model.defs[arm]
        if isinstance(definition, ClassDef) and definition.tag == (union.tag_prop, tag):
            return f"_a_{arm}"
        return f"_d_{arm}"

    def emit_union(self, union: UnionDef) -> None:
        name = union.name
        out = self.lines
        table = ", ".join(f'"{tag}": {self.arm_fn(union, tag, arm)}' for tag, arm in union.tagged)
        out += ["", "", f"_T_{name}: Final[dict[str, Callable[[Any], {name}]]] = {{{table}}}"]
        fallback = (
            f'_s.first_of(d, ({", ".join(f"_d_{a}" for a in union.untagged)},), "{name}")'
            if union.untagged
            else None
        )
        out += ["", "", f"def _d_{name}(d: Any) -> Any:"]
        if union.tag_prop is None:
            assert fallback is not None
            out.append(f"    return {fallback}")
            return
        prop = union.tag_prop
        out += ["    if type(d) is not dict:", "        raise _s.not_object(d)"]
        out += [f'    t = d.get("{prop}", _MISSING)', "    if type(t) is str:"]
        out += [
            f"        f = _T_{name}.get(t)",
            "        if f is not None:",
            "            return f(d)",
        ]
        if union.unknown is not None:
            out.append(f"        return {union.unknown}(raw=d)")
        elif fallback is not None:
            out.append(f"        return {fallback}")
        else:
            out.append(f'        raise _s.bad_tag("{prop}", _T_{name})')
        out.append("    if t is _MISSING:")
        if fallback is not None:
            out.append(f"        return {fallback}")
        else:
            out.append(f'        raise _s.missing("{prop}")')
        out.append(f'    raise _s.wrong("a string", t).at("{prop}")')

    def emit_alias(self, alias: AliasDef) -> None:
        name = alias.name
        out = self.lines
        out += ["", "", f"def _d_{name}(v: Any) -> Any:"]
        if alias.nullable:
            out += ["    if v is None:", "        return None"]
        if len(alias.options) == 1:
            out += _returning(self.decode_stmts(alias.options[0], "    "))
        else:
            for option in alias.options:
                out.append("    try:")
                out += _returning(self.decode_stmts(option, "        "))
                out.append("    except DecodeError:")
                out.append("        pass")
            out.append(f'    raise DecodeError("matches none of the alternatives of {name}")')

    def emit_literal(self, literal: LiteralDef) -> None:
        values = ", ".join(f'"{v}"' for v in literal.values)
        self.lines += ["", "", f"_L_{literal.name}: Final = frozenset({{{values}}})"]
        self.lines += ["", "", f"def _d_{literal.name}(v: Any) -> Any:"]
        if literal.open:
            self.lines += ["    if type(v) is not str:", '        raise _s.wrong("a string", v)']
        else:
            self.lines += [
                f"    if type(v) is not str or v not in _L_{literal.name}:",
                f"        raise _s.bad_literal(v, _L_{literal.name})",
            ]
        self.lines.append("    return v")

    # ------------------------------------------------------------------ module

    def emit(self, header: str) -> str:
        model = self.model
        all_classes = class_order(model)
        all_unknowns = sorted(
            (d for d in model.defs.values() if isinstance(d, UnknownArmDef)), key=lambda d: d.name
        )
        # Shared definitions keep their stable functions: only the others are emitted.
        classes = [c for c in all_classes if c.name not in self.reused]
        unknowns = [u for u in all_unknowns if u.name not in self.reused]
        names = sorted(model.defs)
        encoders = EncoderEmitter(self)
        out = self.lines
        out += [
            header,
            "",
            "from __future__ import annotations",
            "",
            "from collections.abc import Callable, Mapping",
            "from typing import Any, Final",
            "",
            "from acp_sdk.protocol import _codec_support as _s",
            "from acp_sdk.protocol._model_support import EMPTY as _EMPTY",
            "from acp_sdk.protocol._model_support import NO_EXPLICIT as _NO_EXPLICIT",
            "from acp_sdk.protocol._model_support import UNSET as _UNSET",
            "from acp_sdk.protocol._errors import DecodeError, EncodeError",
            "__MODEL_IMPORTS__",
            "",
            "_MISSING: Final[Any] = _s.MISSING",
            "_new: Final = object.__new__",
        ]
        # Each decoded class's mutable twin (see `emit_class_body`).
        for cls in classes:
            out.append(f"_W_{cls.name}: Final = _s.twin({cls.name})")
        for cls in classes:
            known = sorted(
                {f.wire for f in all_fields(model, cls)} | ({cls.tag[0]} if cls.tag else set())
            )
            keys = f"frozenset({{{', '.join(repr(k) for k in known)}}})"
            out.append(f"_K_{cls.name}: Final = {keys if known else 'frozenset[str]()'}")
        for cls in classes:
            for field in cls.fields:
                default = default_of(model, cls.name, field)
                if default is not None and default.kind == "factory":
                    out.append(f"_DF_{cls.name}_{field.py}: Final = {default.python}()")
        for cls in classes:
            self.emit_class_decoder(cls)
            out += encoders.class_encoder(cls)
        for unknown in unknowns:
            out += encoders.unknown_encoder(unknown)
        for definition in sorted(model.defs.values(), key=lambda d: d.name):
            if definition.name in self.reused:
                continue
            if isinstance(definition, UnionDef):
                self.emit_union(definition)
                out += encoders.union_encoder(definition)
            elif isinstance(definition, AliasDef):
                self.emit_alias(definition)
                out += encoders.alias_encoder(definition)
            elif isinstance(definition, LiteralDef):
                self.emit_literal(definition)
        out += encoders.tail()
        out += [
            "",
            "",
            "ENCODERS: Final[Mapping[type, Callable[[Any], dict[str, Any]]]] = {",
            *[
                f"    {c}: _e_{c},"
                for c in sorted([c.name for c in all_classes] + [u.name for u in all_unknowns])
            ],
            "}",
            '"""Model class -> function producing its JSON-ready dict, checking every value."""',
            "",
            "",
            "DECODERS: Final[Mapping[Any, Callable[[Any], Any]]] = {",
        ]
        for definition in sorted(model.defs.values(), key=lambda d: d.name):
            if isinstance(definition, AliasDef) and self.trivial_alias(definition.name) is not None:
                continue
            if isinstance(definition, AliasDef) and definition.options == (TPrim("any"),):
                continue
            if isinstance(definition, UnknownArmDef):
                continue
            out.append(f"    {definition.name}: _d_{definition.name},")
        out += [
            "}",
            '"""Model class or union alias -> function decoding parsed JSON into it."""',
            "",
        ]
        text = "\n".join(out)
        used = [n for n in names if re.search(rf"\b{n}\b", text)]
        imports = [f"from {self.models_module} import (", *[f"    {n}," for n in used], ")"]
        if self.shared is not None:
            # The shared definitions' decoders, encoders, literal sets, slot setters and
            # union encoder tables, from the stable codec: whatever the text uses and does
            # not define.
            defined = set(re.findall(r"^(?:def )?(_\w+)\b", text, re.MULTILINE))
            borrowed = set(re.findall(r"\b(_(?:a|d|e|L|W|DF|T|EU|x)_\w+)", text)) - defined
            if borrowed:
                imports += [
                    "# The stable functions of the definitions shared with the stable schema.",
                    f"from {self.shared.codec_module} import (",
                ]
                imports += [f"    {n}," for n in sorted(borrowed)] + [")"]
        return text.replace("__MODEL_IMPORTS__", "\n".join(imports))


def _returning(stmts: list[str]) -> list[str]:
    """Turn a trailing `r = EXPR` into `return EXPR`."""
    last = stmts[-1]
    stripped = last.lstrip()
    assert stripped.startswith("r = ")
    return [*stmts[:-1], last[: len(last) - len(stripped)] + "return " + stripped[4:]]


def emit(model: Model, header: str, models_module: str, shared: Shared | None = None) -> str:
    """The codec module; with `shared`, those definitions' functions are imported."""
    return _Emitter(model, models_module, shared).emit(header)
