"""Emit the checked encoders of one schema file: model -> JSON-ready dict, or EncodeError.

What the encoder writes is what the schema allows from our side: every value is checked
against its field's JSON type as it is written (a string is a `str`, an integer an `int`
that is not a `bool` and fits its format, a number is finite, a closed enum holds one of
its values, a list is a list or tuple, a nested model is of its field's class, a union
member one of its arms). A value that fails raises `EncodeError` with the wire path of the
field, as `DecodeError` does (`prompt[2].text`). Unknown variants (`raw`) and `extra` are
passed through: they are the peer's or the user's JSON, not ours to judge.

Cost: the happy path pays one inline test per written value (`type(v) is str`; a closed
enum's membership alone; `True` nothing beyond its identity), a dict lookup by class per
union member (the dispatch it paid anyway), and nothing for the optional fields at their
defaults (docs/performance.md, "Issue 28", has the figures). Anything the inline test
refuses goes to a slow checker in `_codec_support` (`_s.e_*`), which accepts what the
annotation allows beyond the exact JSON types (a `str` subclass such as a `StrEnum`
member, any `Sequence` for a list, any `Mapping` for an object) and otherwise raises. The
path is added where the error passes a field (`e.at(wire)`); `try` costs nothing on
CPython 3.11+ until something raises.

Layout of a class encoder: its required fields are read and checked first, into locals
(the one nested model of a class with a fast path is encoded inside its display instead);
when every optional field is at its omitted default (by identity), nothing was explicit
and there are no extras, the dict is one display (the usual case for streamed chunks);
otherwise the fields are written in schema order, each optional one when not at its
default, checked as written.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from acp_sdk._codegen.common import all_fields, default_of, null_note
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

if TYPE_CHECKING:
    from acp_sdk._codegen.emit_codec import _Emitter

# The slow checker of each JSON scalar kind (`_codec_support`); "int" is per format.
_SLOW_PRIM = {
    "str": "_s.e_str",
    "bool": "_s.e_bool",
    "float": "_s.e_float",
    "object": "_s.e_object",
    "any": "_s.e_any",
}


class EncoderEmitter:
    """The encoder functions and tables of one codec module (see the module docstring)."""

    def __init__(self, codec: _Emitter) -> None:
        self.codec = codec
        self.model: Model = codec.model
        self.checked_classes: set[str] = set()  # classes whose `_c_` wrapper is used
        self.helpers: dict[str, str] = {}  # source of a compound checker -> its name

    # ------------------------------------------------------------------ value checks

    def named(self, expr: TypeExpr) -> TypeExpr:
        """The definition `expr` refers to through aliases that are only another name for
        it (unstable `InitializeProxyRequest` is `InitializeRequest`): encoded as that."""
        while isinstance(expr, TRef):
            definition = self.model.defs[expr.name]
            if not (isinstance(definition, AliasDef) and _is_name_for(definition)):
                break
            expr = definition.options[0]
        return expr

    def valid_test(self, expr: TypeExpr, var: str) -> str | None:
        """An expression true when `var` is already a valid JSON value of `expr` ("" when
        every value is); None when the value needs an encoder call (models, containers)."""
        expr = self.named(expr)
        if isinstance(expr, TPrim):
            if expr.kind == "any":
                return ""
            if expr.kind == "int":
                low, high = INT_RANGES[expr.int_format or "int64"]
                return f"type({var}) is int and {low} <= {var} <= {high}"
            if expr.kind == "float":
                # `v - v` is NaN for NaN and the infinities, which JSON cannot carry; an
                # integer must be one orjson writes (64 bits).
                low, high = -(2**63), 2**64 - 1
                return (
                    f"(type({var}) is float and {var} - {var} == 0)"
                    f" or (type({var}) is int and {low} <= {var} <= {high})"
                )
            kind = {"str": "str", "bool": "bool", "object": "dict"}[expr.kind]
            return f"type({var}) is {kind}"
        if isinstance(expr, TConst):
            return f'{var} == "{expr.value}"'
        if isinstance(expr, TRef):
            definition = self.model.defs[expr.name]
            if isinstance(definition, LiteralDef):
                if definition.open:
                    return f"type({var}) is str"
                return f"type({var}) is str and {var} in _L_{expr.name}"
            if isinstance(definition, AliasDef):
                tests = [self.valid_test(option, var) for option in definition.options]
                if any(test is None for test in tests):
                    return None
                if "" in tests:
                    return ""
                if definition.nullable:
                    tests.insert(0, f"{var} is None")
                if len(tests) == 1:
                    return tests[0]
                return " or ".join(f"({test})" for test in tests)
        return None

    def slow_fn(self, expr: TypeExpr) -> str:
        """A callable that checks and encodes one value of `expr`, raising `EncodeError`
        (without a path) when it is not one."""
        expr = self.named(expr)
        if isinstance(expr, TPrim):
            if expr.kind == "int":
                return f'_s.E_INT["{expr.int_format or "int64"}"]'
            return _SLOW_PRIM[expr.kind]
        if isinstance(expr, TConst):
            key = re.sub(r"\W", "_", expr.value)
            return self.helper(f'_s.const_check("{expr.value}")', f"_EC_{key}")
        if isinstance(expr, (TList, TMap)):
            kind = "list" if isinstance(expr, TList) else "map"
            inner = self.slow_fn(expr.item if isinstance(expr, TList) else expr.value)
            return self.helper(f"_s.{kind}_of({inner})", f"_E{kind}_{_what(inner)}")
        definition = self.model.defs[expr.name]
        if isinstance(definition, LiteralDef):
            if definition.open:
                return "_s.e_str"
            return self.helper(f"_s.literal_check(_L_{expr.name})", f"_EL_{expr.name}")
        if isinstance(definition, AliasDef):
            trivial = self.codec.trivial_alias(expr.name)
            return self.slow_fn(trivial) if trivial is not None else f"_e_{expr.name}"
        if isinstance(definition, ClassDef):
            self.checked_classes.add(expr.name)
            return f"_c_{expr.name}"
        if isinstance(definition, UnionDef):
            return f"_e_{expr.name}"
        raise SchemaError(f"no encoder for {expr}")

    def helper(self, source: str, name: str) -> str:
        """`name`, a module-level constant holding the checker `source` builds (emitted
        once, in `tail`)."""
        self.helpers.setdefault(source, name)
        return name

    def closed_literal(self, expr: TypeExpr) -> str | None:
        """The name of the closed enum `expr` refers to, if it does."""
        expr = self.named(expr)
        if isinstance(expr, TRef):
            definition = self.model.defs[expr.name]
            if isinstance(definition, LiteralDef) and not definition.open:
                return expr.name
        return None

    def model_call(self, expr: TypeExpr, var: str) -> str | None:
        """The inline encoding of a model or union member `var`, or None for other types."""
        expr = self.named(expr)
        if not isinstance(expr, TRef):
            return None
        definition = self.model.defs[expr.name]
        name = expr.name
        if isinstance(definition, ClassDef):
            return f'_e_{name}({var}) if type({var}) is {name} else _s.refuse("{name}", {var})'
        if isinstance(definition, UnionDef):
            return f"_EU_{name}(type({var}), _x_{name})({var})"
        return None

    def item(self, expr: TypeExpr, var: str) -> str:
        """An expression encoding one container element `var` (raising without a path)."""
        call = self.model_call(expr, var)
        if call is not None:
            return f"({call})" if " if " in call else call
        test = self.valid_test(expr, var)
        if test == "":
            return var
        if test is not None:
            return f"({var} if {test} else {self.slow_fn(expr)}({var}))"
        return f"{self.slow_fn(expr)}({var})"

    def write(self, expr: TypeExpr, wire: str, indent: str) -> list[str]:
        """Statements writing the JSON value of `v` as `d[wire]`, or raising `EncodeError`
        at `wire`. An encoder's result goes straight into the dict."""
        target = f'd["{wire}"]'
        lines = self.convert(expr, "v", wire, indent, target=target)
        if any(line.lstrip().startswith(f"{target} = ") for line in lines):
            return lines
        return [*lines, f"{indent}{target} = v"]

    def convert(
        self,
        expr: TypeExpr,
        var: str,
        wire: str,
        indent: str,
        *,
        nullable: bool = False,
        target: str | None = None,
    ) -> list[str]:
        """Statements leaving the JSON value of `var` in `var` (or, for what takes an
        encoder call, in `target`), or raising `EncodeError` at `wire`. With `nullable`,
        `None` passes as itself."""
        closed = self.closed_literal(expr)
        if closed is not None and not nullable:
            # Membership alone (the string test is implied: the values are strings); an
            # unhashable value raises TypeError, and is no value of the enum either.
            slow = f'_s.checked({self.slow_fn(expr)}, {var}, "{wire}")'
            return [
                f"{indent}try:",
                f"{indent}    if {var} not in _L_{closed}:",
                f"{indent}        {var} = {slow}",
                f"{indent}except EncodeError:",
                f"{indent}    raise",
                f"{indent}except TypeError:",
                f"{indent}    {var} = {slow}",
            ]
        test = self.valid_test(expr, var)
        if test == "":
            return []
        if test is not None:
            invalid = _negate(test)
            if nullable:
                invalid = f"{var} is not None and ({invalid})"
            return [
                f"{indent}if {invalid}:",
                f'{indent}    {var} = _s.checked({self.slow_fn(expr)}, {var}, "{wire}")',
            ]
        if nullable:
            inner = self.convert(expr, var, wire, indent + "    ")
            return [f"{indent}if {var} is not None:", *inner]
        into = target or var
        call = self.model_call(expr, var)
        if call is None and isinstance(expr, TRef):
            call = f"{self.slow_fn(expr)}({var})"  # an alias of several shapes
        if call is not None:
            return [
                f"{indent}try:",
                f"{indent}    {into} = {call}",
                f"{indent}except EncodeError as e:",
                f'{indent}    raise e.at("{wire}") from None',
            ]
        # A list or map: each element inline; on any error the slow walk runs again and
        # raises with the element's index or key.
        if isinstance(expr, TList):
            slow, build = "_s.e_list", f"[{self.item(expr.item, 'x')} for x in {var}]"
            exact = f"type({var}) is list or type({var}) is tuple"
            element = self.slow_fn(expr.item)
        elif isinstance(expr, TMap):
            slow = "_s.e_map"
            key = "k if type(k) is str else _s.e_key(k)"
            build = f"{{{key}: {self.item(expr.value, 'x')} for k, x in {var}.items()}}"
            exact = f"type({var}) is dict"
            element = self.slow_fn(expr.value)
        else:
            raise SchemaError(f"no encoder for {expr}")
        return [
            f"{indent}try:",
            f"{indent}    {into} = {build} if {exact} else {slow}({var}, {element})",
            f"{indent}except EncodeError:",
            f'{indent}    {into} = _s.checked({slow}, {var}, "{wire}", {element})',
        ]

    # ------------------------------------------------------------------ classes

    def class_encoder(self, cls: ClassDef) -> list[str]:
        name = cls.name
        fields = all_fields(self.model, cls)
        optional = {f.py for f in fields if default_of(self.model, name, f) is not None}
        local = {f.py: f"q_{f.py}" for f in fields if f.py not in optional}
        tests = self.fast_tests(cls, fields)
        calls = [f for f in fields if f.py in local and self.needs_call(f.type)]
        # The usual shape: one nested model (a notification's update, a chunk's content)
        # encoded inside the fast path's display, where its error is located at once.
        inline = calls[0] if tests and len(calls) == 1 and not calls[0].nullable else None
        out = ["", "", f"def _e_{name}(o: {name}) -> dict[str, Any]:"]
        for field in fields:
            if field.py in local and field is not inline:
                out += self.read_required(field, local[field.py])
        tag = [f'"{cls.tag[0]}": "{cls.tag[1]}"'] if cls.tag is not None else []
        if tests:
            out.append(f"    if {' and '.join(tests)}:")
            every = [f'"{f.wire}": {local[f.py]}' for f in fields if f.py in local]
            if inline is None:
                out.append(f"        return {{{', '.join(tag + every)}}}")
            else:
                value = self.inline_value(inline)
                every = [
                    f'"{f.wire}": {value if f is inline else local[f.py]}'
                    for f in fields
                    if f.py in local
                ]
                located = not isinstance(inline.type, (TList, TMap))
                out += [
                    "        try:",
                    f"            return {{{', '.join(tag + every)}}}",
                    *(
                        [
                            "        except EncodeError as e:",
                            f'            raise e.at("{inline.wire}") from None',
                        ]
                        if located
                        else [
                            "        except EncodeError:",
                            "            pass  # the path below says which element",
                        ]
                    ),
                ]
                out += self.read_required(inline, local[inline.py])
        # The leading required fields go straight into the dict display (the wire order
        # kept); the rest are added one by one, when not at their default.
        leading: list[Field] = []
        for field in fields:
            if field.py not in local or field.default_on_null:
                break
            leading.append(field)
        items = tag + [f'"{f.wire}": {local[f.py]}' for f in leading]
        out.append(f"    d: dict[str, Any] = {{{', '.join(items)}}}")
        rest = fields[len(leading) :]
        if self.codec.tracks_explicit(cls):
            out.append("    ex = o._explicit")
        if any(f.py in optional for f in rest):
            out.append("    v: Any")
        for field in rest:
            if field.py in local and field.default_on_null:
                # Decoded from `null` (noted as `<wire>:null`): `null` again, losslessly;
                # the value was checked as it was read.
                q, note = local[field.py], null_note(field.wire)
                out.append(f'    d["{field.wire}"] = None if not {q} and "{note}" in ex else {q}')
            elif field.py in local:
                out.append(f'    d["{field.wire}"] = {local[field.py]}')
            else:
                out += self.optional_field(name, field)
        # `extra` is almost always the shared empty mapping: identity first, length after.
        out += ["    if o.extra is not _EMPTY and o.extra:", "        _s.add_extras(d, o.extra)"]
        out.append("    return d")
        return out

    def read_required(self, field: Field, var: str) -> list[str]:
        """Read a required field into `var`, checked (and encoded)."""
        return [
            f"    {var}: Any = o.{field.py}",
            *self.convert(field.type, var, field.wire, "    ", nullable=field.nullable),
        ]

    def needs_call(self, expr: TypeExpr) -> bool:
        """Whether a value of `expr` is encoded by a call (a model, a container, an alias
        of several shapes), not checked by an inline test."""
        return self.valid_test(expr, "v") is None and self.closed_literal(expr) is None

    def inline_value(self, field: Field) -> str:
        """The expression encoding required field `field` in place, read from `o`."""
        var = f"o.{field.py}"
        call = self.model_call(field.type, var)
        if call is not None:
            return f"({call})" if " if " in call else call
        if isinstance(field.type, TRef):
            return f"{self.slow_fn(field.type)}({var})"
        if isinstance(field.type, TList):
            build = f"[{self.item(field.type.item, 'x')} for x in {var}]"
            slow = f"_s.e_list({var}, {self.slow_fn(field.type.item)})"
            return f"({build} if type({var}) is list or type({var}) is tuple else {slow})"
        assert isinstance(field.type, TMap)
        key = "k if type(k) is str else _s.e_key(k)"
        build = f"{{{key}: {self.item(field.type.value, 'x')} for k, x in {var}.items()}}"
        slow = f"_s.e_map({var}, {self.slow_fn(field.type.value)})"
        return f"({build} if type({var}) is dict else {slow})"

    def fast_tests(self, cls: ClassDef, fields: list[Field]) -> list[str]:
        """When every optional field is at its omitted default (by identity), nothing was
        explicit and there are no extras, the dict is one display: these are the tests.
        Empty when the class has no such shortcut (a default recognised only by value, or
        no optional field)."""
        name = cls.name
        omitted = {"none": "is None", "unset": "is _UNSET", "false": "is False"}
        tests: list[str] = []
        for field in fields:
            default = default_of(self.model, name, field)
            if default is None:
                continue
            if default.kind in omitted:
                tests.append(f"o.{field.py} {omitted[default.kind]}")
            elif default.kind == "factory":
                tests.append(f"o.{field.py} is _DF_{name}_{field.py}")
            else:
                return []
        if not tests:
            return []
        if self.codec.tracks_explicit(cls):
            tests.append("o._explicit is _NO_EXPLICIT")
        tests.append("o.extra is _EMPTY")
        return tests

    def optional_field(self, owner: str, field: Field) -> list[str]:
        """Write an optional field when it is not at its default (or was explicit)."""
        default = default_of(self.model, owner, field)
        assert default is not None
        wire = field.wire
        if field.default_on_null and default.kind not in ("empty_seq", "empty_map"):
            raise SchemaError(f"{owner}.{wire}: default-on-null with a {default.kind} default")
        out = [f"    v = o.{field.py}"]
        write = self.write(field.type, wire, "        ")
        if default.kind == "false" and field.type == TPrim("bool"):
            # True, the usual value written, needs no test beyond its identity.
            return [
                *out,
                "    if v is True:",
                f'        d["{wire}"] = True',
                f'    elif (v is not False and v is not None) or "{wire}" in ex:',
                *write,
            ]
        if default.kind == "unset":  # `None` is a value of its own here (null = clear)
            inner = self.convert(field.type, "v", wire, "        ", nullable=True)
            return [*out, "    if v is not _UNSET:", *inner, f'        d["{wire}"] = v']
        if default.kind == "none":
            return [
                *out,
                "    if v is not None:",
                *write,
                f'    elif "{wire}" in ex:',
                f'        d["{wire}"] = None',
            ]
        if default.kind in ("empty_seq", "empty_map"):
            # An empty value or None is left out (or written as a fresh `[]` / `{}` when
            # it was explicit); one that is empty but of another type is refused.
            if default.kind == "empty_seq":
                empty, wrong = "[]", "type(v) is not list and type(v) is not tuple"
            else:
                empty, wrong = "{}", "v is not _EMPTY and type(v) is not dict"
            slow = "_s.e_list" if isinstance(field.type, TList) else "_s.e_map"
            if isinstance(field.type, TList):
                element = self.slow_fn(field.type.item)
            elif isinstance(field.type, TMap):
                element = self.slow_fn(field.type.value)
            else:  # a free-form object
                slow, element = "_s.e_object", ""
            args = f", {element}" if element else ""
            # The type first: a falsy value of the wrong type is refused even where the
            # field was explicit (or `null`, for default-on-null), not written as empty.
            explicit = [f'    elif "{wire}" in ex:', f'        d["{wire}"] = {empty}']
            if field.default_on_null:
                # Decoded from `null` (noted as `<wire>:null`): `null` again, losslessly.
                note = null_note(wire)
                explicit = [f'    elif "{note}" in ex:', f'        d["{wire}"] = None', *explicit]
            return [
                *out,
                "    if v:",
                *write,
                f"    elif v is not None and {wrong}:",
                f'        _s.checked({slow}, v, "{wire}"{args})',
                *explicit,
            ]
        # `None` in an optional field means "left out", as for every other optional field.
        test = self.codec.is_default_test(owner, field, default, "v", negate=True)
        if default.kind == "factory" and isinstance(field.type, TRef):
            # Not the shared default object, and not equal to it: the comparison written
            # out field by field (the model's `__eq__` is a call and a frame per object,
            # and a present capabilities object usually differs in its first field).
            shared = f"_DF_{owner}_{field.py}"
            equal = self.at_default(field.type.name, "v")
            test = f"v is not {shared} and v is not None and not ({equal})"
        elif default.kind == "false":
            test = f"{test} and v is not None"  # the usual value, False, tested first
        else:
            test = f"v is not None and {test}"
        return [*out, f'    if ({test}) or "{wire}" in ex:', *write]

    def at_default(self, name: str, var: str) -> str:
        """An expression: `var` equals `name()` (a schema default object), as `==` says."""
        definition = self.model.defs[name]
        assert isinstance(definition, ClassDef)
        tests = [f"type({var}) is {name}"]
        for field in all_fields(self.model, definition):
            value = f"{var}.{field.py}"
            default = default_of(self.model, name, field)
            if default is None:
                raise SchemaError(f"{name}.{field.wire}: a default object's field is required")
            if default.kind == "factory":
                shared = f"_DF_{name}_{field.py}"
                tests.append(f"({value} is {shared} or {value} == {shared})")
            else:
                tests.append(
                    {
                        "none": f"{value} is None",
                        "unset": f"{value} is _UNSET",
                        "false": f"{value} is False",
                        "const": f"{value} == {default.value_repr}",
                        "empty_seq": f"{value} == []",
                        "empty_map": f"{value} == {{}}",
                    }[default.kind]
                )
        return " and ".join([*tests, f"not {var}.extra"])

    # ------------------------------------------------------------------ the rest

    @staticmethod
    def unknown_encoder(arm: UnknownArmDef) -> list[str]:
        return [
            "",
            "",
            f"def _e_{arm.name}(o: {arm.name}) -> dict[str, Any]:",
            "    raw: Any = o.raw",
            "    return dict(raw) if type(raw) is dict else _s.e_object(raw)",
        ]

    def union_encoder(self, union: UnionDef) -> list[str]:
        """The union's encoders by arm class, and `_e_` for one member of it."""
        name = union.name
        arms = [arm for _, arm in union.tagged] + list(union.untagged)
        if union.unknown is not None:
            arms.append(union.unknown)
        table = ", ".join(f"{arm}: _e_{arm}" for arm in dict.fromkeys(arms))
        return [
            "",
            "",
            f"_EU_{name}: Final = _s.encoders_by_class({{{table}}})",
            f'_x_{name}: Final = _s.refuser("{name}")',
            "",
            "",
            f"def _e_{name}(v: Any) -> Any:",
            f"    return _EU_{name}(type(v), _x_{name})(v)",
        ]

    def alias_encoder(self, alias: AliasDef) -> list[str]:
        """`_e_` for an alias that is neither one scalar nor any JSON value."""
        if self.codec.trivial_alias(alias.name) is not None or _is_name_for(alias):
            return []
        if self.valid_test(TRef(alias.name), "v") == "":  # any JSON value
            return []
        out = ["", "", f"def _e_{alias.name}(v: Any) -> Any:"]
        if alias.nullable:
            out += ["    if v is None:", "        return None"]
        slow = []
        for option in alias.options:
            test = self.valid_test(option, "v")
            if test is not None:
                out += [f"    if {test}:", "        return v"]
            slow.append(self.slow_fn(option))
        out.append(f'    return _s.first_option(v, ({", ".join(slow)},), "{alias.name}")')
        return out

    def tail(self) -> list[str]:
        """The class wrappers and compound checkers the encoders used (defined last: they
        refer to functions defined above)."""
        out: list[str] = []
        for name in sorted(self.checked_classes):
            out += [
                "",
                "",
                f"def _c_{name}(v: Any) -> dict[str, Any]:",
                f'    return _e_{name}(v) if type(v) is {name} else _s.refuse("{name}", v)',
            ]
        if self.helpers:
            out.append("")
            out.append("")
            out += [f"{name}: Final = {source}" for source, name in self.helpers.items()]
        return out


def _is_name_for(alias: AliasDef) -> bool:
    """An alias that is another name for one definition (its encoder is that one's)."""
    return len(alias.options) == 1 and isinstance(alias.options[0], TRef) and not alias.nullable


def _what(checker: str) -> str:
    """What a checker checks, for the name of a container checker built on it (named after
    what it holds, so a schema bump renames nothing else): `_s.e_str` -> `str`."""
    found = re.fullmatch(r'_s\.e_(\w+)|_s\.E_INT\["(\w+)"\]|_(?:c|e|EL|EC)_(\w+)|_E(\w+)', checker)
    if found is None:
        raise SchemaError(f"cannot name a container of {checker}")
    return next(group for group in found.groups() if group)


def _negate(test: str) -> str:
    """`not (test)`, spelled the direct way for a single `type(v) is X` test."""
    if re.fullmatch(r"type\(\w+\) is \w+", test):
        return test.replace(" is ", " is not ", 1)
    return f"not ({test})"
