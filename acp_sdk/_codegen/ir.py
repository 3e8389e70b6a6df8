"""Schema -> meta-model: parse the JSON Schema once into plain frozen records.

The emitters never look at raw JSON Schema; they read only these records. Any construct
this parser does not recognise raises `SchemaError`, so a new upstream construct fails the
generator loudly instead of producing a silently wrong model.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from acp_sdk._codegen import naming


class SchemaError(Exception):
    """The schema holds a construct the generator does not understand."""


# --------------------------------------------------------------------------- type expressions


@dataclass(frozen=True)
class TPrim:
    """A JSON scalar, any JSON value (`any`) or a free-form JSON object (`object`)."""

    kind: str  # "str" | "int" | "float" | "bool" | "any" | "object"
    int_format: str | None = None


@dataclass(frozen=True)
class TRef:
    name: str


@dataclass(frozen=True)
class TList:
    item: TypeExpr


@dataclass(frozen=True)
class TMap:
    value: TypeExpr


@dataclass(frozen=True)
class TConst:
    value: str


TypeExpr = TPrim | TRef | TList | TMap | TConst

INT_RANGES: Mapping[str, tuple[int, int]] = {
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}


# --------------------------------------------------------------------------- definitions


@dataclass(frozen=True)
class Field:
    wire: str
    py: str
    type: TypeExpr
    nullable: bool
    required: bool
    description: str
    default: Any = None  # JSON default from the schema, meaningful only if has_default
    has_default: bool = False
    default_on_error: bool = False
    skip_invalid_items: bool = False
    # `x-deserialize-default-on-null`: an explicit `null` decodes as the default (`[]`,
    # `{}`); any other value decodes strictly.
    default_on_null: bool = False
    null_is_meaningful: bool = False


@dataclass(frozen=True)
class ClassDef:
    name: str
    description: str
    fields: tuple[Field, ...]
    # Set on a tagged-union arm: the property that carries the tag and its value.
    tag: tuple[str, str] | None = None
    # A schema class this arm extends (its fields are inherited, not repeated).
    base: str | None = None
    open_additional: bool = True


@dataclass(frozen=True)
class UnknownArmDef:
    """Fallback arm of an open union: keeps the raw JSON object untouched."""

    name: str
    union: str
    tag_prop: str
    description: str


@dataclass(frozen=True)
class AliasDef:
    """A named alias for a type expression or a union of type expressions."""

    name: str
    description: str
    options: tuple[TypeExpr, ...]
    nullable: bool = False


@dataclass(frozen=True)
class LiteralDef:
    name: str
    description: str
    values: tuple[str, ...]
    open: bool  # an "other" arm accepts any further string


@dataclass(frozen=True)
class UnionDef:
    """A union of classes, decoded by tag, then by the untagged fallback arms in order."""

    name: str
    description: str
    tag_prop: str | None
    tagged: tuple[tuple[str, str], ...]  # (tag value, class name)
    untagged: tuple[str, ...]  # classes tried in order when no known tag matches
    unknown: str | None  # UnknownArmDef name for an open union


Definition = ClassDef | AliasDef | LiteralDef | UnionDef | UnknownArmDef


@dataclass
class Model:
    """Every definition of one schema file, plus what the schema says about methods."""

    schema: Mapping[str, Any]
    defs: dict[str, Definition] = field(default_factory=dict)
    # schema $defs that are JSON-RPC envelopes, not models (see ENVELOPE_DEFS)
    envelopes: tuple[str, ...] = ()
    # which $def name each generated definition accounts for
    source: dict[str, str] = field(default_factory=dict)


# JSON-RPC envelope definitions: the connection layer (not the model layer) owns framing,
# ids and method dispatch, so these become code in `acp_sdk.protocol._jsonrpc`, never classes.
ENVELOPE_DEFS = (
    "AgentNotification",
    "AgentRequest",
    "AgentResponse",
    "ClientNotification",
    "ClientRequest",
    "ClientResponse",
    "ProxyNotification",  # the unstable schema's proxy chains
    "ProxyRequest",
    "ProxyResponse",
)

_DOC_ONLY_KEYS = {"description", "title", "x-docs-ignore"}

# The decoder annotations the generator implements; any other `x-deserialize-*` key
# fails the generator (a new rule must not be ignored silently).
DECODER_ANNOTATIONS = frozenset(
    {
        "x-deserialize-default-on-error",
        "x-deserialize-skip-invalid-items",
        "x-deserialize-default-on-null",
    }
)
_NULL = {"type": "null"}


def snake(name: str) -> str:
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name.lstrip("_")).lower()
    if keyword.iskeyword(out):
        out += "_"
    return out


def _ref_name(ref: str) -> str:
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise SchemaError(f"unsupported $ref {ref!r}")
    return ref[len(prefix) :]


def _single_ref(node: Mapping[str, Any]) -> str | None:
    """`{"$ref": X}` or `{"allOf": [{"$ref": X}]}` -> X."""
    if "$ref" in node:
        return _ref_name(node["$ref"])
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return _ref_name(all_of[0]["$ref"])
    return None


class _Parser:
    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self.raw: Mapping[str, Any] = schema["$defs"]
        self.model = Model(schema=schema)
        self.ref_counts = self._count_refs()

    # ---------------------------------------------------------------- helpers

    def _count_refs(self) -> dict[str, int]:
        counts: dict[str, int] = {}

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                if "$ref" in node:
                    name = _ref_name(node["$ref"])
                    counts[name] = counts.get(name, 0) + 1
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        for name, node in self.raw.items():
            if name not in ENVELOPE_DEFS:
                walk(node)
        return counts

    def add(self, definition: Definition, source: str) -> None:
        if definition.name in self.model.defs:
            raise SchemaError(f"two definitions named {definition.name}")
        self.model.defs[definition.name] = definition
        self.model.source[definition.name] = source

    # ---------------------------------------------------------------- type expressions

    def type_expr(self, node: Mapping[str, Any], where: str) -> tuple[TypeExpr, bool]:
        """Parse a property schema into (type, nullable)."""
        keys = {k for k in node if not k.startswith("x-")} - _DOC_ONLY_KEYS - {"default"}
        ref = _single_ref(node)
        if ref is not None and keys <= {"$ref", "allOf"}:
            return TRef(ref), False
        if not keys:
            return TPrim("any"), False
        any_of = node.get("anyOf")
        if any_of is not None and keys == {"anyOf"}:
            options = [o for o in any_of if o != _NULL]
            if len(options) == 1 and len(any_of) == 2:
                inner, _ = self.type_expr(options[0], where)
                return inner, True
            raise SchemaError(f"{where}: inline anyOf is not supported: {node}")
        typ = node.get("type")
        nullable = False
        if isinstance(typ, list):
            if len(typ) != 2 or "null" not in typ:
                raise SchemaError(f"{where}: unsupported type list {typ}")
            nullable = True
            typ = next(t for t in typ if t != "null")
        if "const" in node:
            if typ != "string":
                raise SchemaError(f"{where}: non-string const")
            return TConst(node["const"]), nullable
        if typ == "string":
            return TPrim("str"), nullable
        if typ == "boolean":
            return TPrim("bool"), nullable
        if typ == "number":
            return TPrim("float"), nullable
        if typ == "integer":
            fmt = node.get("format")
            if fmt not in INT_RANGES:
                raise SchemaError(f"{where}: unknown integer format {fmt!r}")
            return TPrim("int", fmt), nullable
        if typ == "array":
            item, item_nullable = self.type_expr(node["items"], where + "[]")
            if item_nullable:
                raise SchemaError(f"{where}: nullable array items")
            return TList(item), nullable
        if typ == "object":
            extra = node.get("additionalProperties")
            if "properties" in node:
                raise SchemaError(f"{where}: inline object with properties")
            if extra is True or extra is None:
                return TPrim("object"), nullable
            value, value_nullable = self.type_expr(extra, where + "{}")
            if value_nullable:
                raise SchemaError(f"{where}: nullable map values")
            return TMap(value), nullable
        raise SchemaError(f"{where}: unsupported property schema {node}")

    def fields_of(
        self, owner: str, node: Mapping[str, Any], *, all_optional: bool = False
    ) -> list[Field]:
        props: Mapping[str, Any] = node.get("properties", {})
        required = set(node.get("required", ()))
        patched = naming.patch_fields(node.get("description", "") or "")
        out: list[Field] = []
        for wire, prop in props.items():
            typ, nullable = self.type_expr(prop, f"{owner}.{wire}")
            description = prop.get("description", "") or ""
            unknown = {k for k in prop if k.startswith("x-deserialize")} - DECODER_ANNOTATIONS
            if unknown:
                raise SchemaError(f"{owner}.{wire}: unknown decoder annotation {sorted(unknown)}")
            on_null = bool(prop.get("x-deserialize-default-on-null"))
            if on_null and (nullable or not isinstance(typ, (TList, TMap))):
                # null is then a value of its own, or there is no default to decode it as
                raise SchemaError(f"{owner}.{wire}: default-on-null on a {typ} field")
            clears = nullable and (naming.null_is_meaningful(description) or wire in patched)
            if wire in patched and (not nullable or wire in required):
                raise SchemaError(f"{owner}.{wire}: patch semantics on a non-nullable field")
            out.append(
                Field(
                    wire=wire,
                    py="meta" if wire == "_meta" else snake(wire),
                    type=typ,
                    nullable=nullable,
                    required=wire in required and not all_optional,
                    description=description,
                    default=prop.get("default"),
                    has_default="default" in prop,
                    default_on_error=bool(prop.get("x-deserialize-default-on-error")),
                    skip_invalid_items=bool(prop.get("x-deserialize-skip-invalid-items")),
                    default_on_null=on_null,
                    null_is_meaningful=clears,
                )
            )
        if patched - set(props):
            raise SchemaError(f"{owner}: patch semantics for unknown fields {patched - set(props)}")
        for field_ in out:
            if field_.py in naming.RESERVED_FIELD_NAMES:
                raise SchemaError(f"{owner}.{field_.wire} collides with a reserved attribute")
        return out

    # ---------------------------------------------------------------- definitions

    def parse(self) -> Model:
        envelopes = []
        for name, node in self.raw.items():
            if name in ENVELOPE_DEFS:
                envelopes.append(name)
                continue
            self.parse_def(name, node)
        self.model.envelopes = tuple(envelopes)
        return self.model

    def parse_def(self, name: str, node: Mapping[str, Any]) -> None:
        description = node.get("description", "") or ""
        keys = {k for k in node if not k.startswith("x-")} - _DOC_ONLY_KEYS
        if not keys:
            self.add(AliasDef(name, description, (TPrim("any"),)), name)
            return
        ref = _single_ref(node)
        if ref is not None and keys == {"allOf"}:
            # Another name for a definition (unstable `InitializeProxyRequest`: "the params
            # and response are the same as for `initialize`").
            self.add(AliasDef(name, description, (TRef(ref),)), name)
            return
        if keys == {"type"} and node["type"] == "object":
            # A named object with no declared fields (`NoticeCapabilities`: "`{}`
            # advertises ..."): a model of its own, whose unknown fields stay in `extra`.
            self.add(ClassDef(name, description, ()), name)
            return
        if keys <= {"type", "format", "minimum", "maximum"}:
            typ, nullable = self.type_expr(node, name)
            self.add(AliasDef(name, description, (typ,), nullable), name)
            return
        variants = node.get("oneOf") or node.get("anyOf")
        if "properties" in node or node.get("type") == "object":
            if variants is None:
                fields = tuple(self.fields_of(name, node))
                self.add(ClassDef(name, description, fields), name)
            else:
                self.parse_object_with_variants(name, node, variants)
            return
        if variants is None:
            raise SchemaError(f"{name}: unsupported definition {sorted(keys)}")
        named = [v for v in variants if v.get("title") != "other"]
        if all("const" in v for v in named) and all(v.get("type") == "string" for v in variants):
            values = tuple(v["const"] for v in variants if "const" in v)
            is_open = any("const" not in v for v in variants)
            self.add(LiteralDef(name, description, values, is_open), name)
            return
        if all(v.get("type") == "integer" for v in variants):
            # Error codes: named constants plus "any other integer".
            self.add(AliasDef(name, description, (TPrim("int", "int32"),)), name)
            return
        if all(_single_ref(v) is None and "properties" not in v for v in variants):
            options: list[TypeExpr] = []
            nullable = False
            for v in variants:
                if v == _NULL or v.get("type") == "null":
                    nullable = True
                    continue
                typ, _ = self.type_expr({k: x for k, x in v.items() if k != "title"}, name)
                options.append(typ)
            self.add(AliasDef(name, description, tuple(options), nullable), name)
            return
        self.parse_union(name, description, variants, base_fields=(), base_name=None)

    def parse_union(
        self,
        name: str,
        description: str,
        variants: Sequence[Mapping[str, Any]],
        base_fields: Sequence[Field],
        base_name: str | None,
    ) -> None:
        tag_prop: str | None = None
        tagged: list[tuple[str, str]] = []
        untagged: list[str] = []
        unknown: str | None = None
        for variant in variants:
            props: Mapping[str, Any] = variant.get("properties", {})
            consts = [p for p, s in props.items() if "const" in s]
            ref = _single_ref(variant)
            if variant.get("title") == "other" and "not" in variant:
                (prop,) = props
                tag_prop = self._same_tag(name, tag_prop, prop)
                unknown = naming.unknown_arm_name(name, taken=self.raw)
                self.add(UnknownArmDef(unknown, name, prop, naming.unknown_doc(name, prop)), name)
                continue
            if consts:
                (prop,) = consts
                tag_prop = self._same_tag(name, tag_prop, prop)
                tag = props[prop]["const"]
                inline = {k: v for k, v in props.items() if k != prop}
                arm = self.make_arm(name, tag, prop, ref, inline, variant, base_fields, base_name)
                tagged.append((tag, arm))
                continue
            if ref is not None and "properties" not in variant:
                if base_fields:
                    raise SchemaError(f"{name}: untagged ref arm beside base properties")
                untagged.append(ref)
                continue
            if "properties" in variant and ref is None:
                arm = naming.arm_name(name, variant.get("title", ""), None, reused=True)
                fields = tuple(base_fields) + tuple(self.fields_of(arm, variant))
                self.add(ClassDef(arm, _arm_doc(name, variant), fields), name)
                untagged.append(arm)
                continue
            raise SchemaError(f"{name}: unsupported union arm {variant}")
        if unknown is None and naming.is_open_union(name):
            if tag_prop is None:
                raise SchemaError(f"{name}: open union without a tag")
            unknown = naming.unknown_arm_name(name, taken=self.raw)
            self.add(
                UnknownArmDef(unknown, name, tag_prop, naming.unknown_doc(name, tag_prop)), name
            )
        self.add(
            UnionDef(name, description, tag_prop, tuple(tagged), tuple(untagged), unknown), name
        )

    def _same_tag(self, union: str, current: str | None, prop: str) -> str:
        if current is not None and current != prop:
            raise SchemaError(f"{union}: arms disagree on the tag property")
        return prop

    def make_arm(
        self,
        union: str,
        tag: str,
        prop: str,
        ref: str | None,
        inline: Mapping[str, Any],
        variant: Mapping[str, Any],
        base_fields: Sequence[Field],
        base_name: str | None,
    ) -> str:
        inline_fields = self.fields_of(
            union, {"properties": inline, "required": variant.get("required", ())}
        )
        if ref is not None and inline_fields:
            raise SchemaError(f"{union}: arm {tag!r} has both a $ref and inline properties")
        reused = ref is None or bool(base_fields) or self.ref_counts.get(ref, 0) != 1
        if ref is not None and not reused:
            # The referenced class is used by this arm alone: it becomes the arm itself.
            return self._tag_class(ref, (prop, tag))
        arm = naming.arm_name(union if base_name is None else base_name, tag, ref, reused=True)
        fields = tuple(base_fields) + tuple(inline_fields)
        doc = _arm_doc(union, variant, tag, prop)
        self.add(ClassDef(arm, doc, fields, tag=(prop, tag), base=ref), union)
        return arm

    def _tag_class(self, ref: str, tag: tuple[str, str]) -> str:
        self._pending_tags[ref] = tag
        return ref

    _pending_tags: dict[str, tuple[str, str]]

    def parse_object_with_variants(
        self, name: str, node: Mapping[str, Any], variants: Sequence[Mapping[str, Any]]
    ) -> None:
        description = node.get("description", "") or ""
        base_fields = self.fields_of(name, node)
        tagged = any(any("const" in s for s in v.get("properties", {}).values()) for v in variants)
        tag_props = {
            p for v in variants for p, s in v.get("properties", {}).items() if "const" in s
        }
        if tagged and tag_props <= {f.wire for f in base_fields}:
            # The object declares the tag itself as an ordinary field (unstable
            # `IdleStateUpdate.stopReason`: a nullable, default-on-error string), and the
            # variants only say which extra fields a value brings: one flat class.
            self.add(ClassDef(name, description, tuple(self._selected_fields(name, node))), name)
            return
        if not tagged:
            # Untagged alternatives of extra properties (elicitation scopes): merge their
            # properties in as optional fields, so a scope is flat on the object as on the wire.
            merged = list(base_fields)
            for variant in variants:
                ref = _single_ref(variant)
                if ref is None:
                    raise SchemaError(f"{name}: untagged inline variant")
                merged.extend(self.fields_of(name, self.raw[ref], all_optional=True))
            self.add(ClassDef(name, description, tuple(merged)), name)
            return
        self.parse_union(name, description, variants, base_fields=base_fields, base_name=name)

    def _selected_fields(self, name: str, node: Mapping[str, Any]) -> list[Field]:
        """The base fields, then (optional) the fields each tag value's `$ref` adds."""
        fields = self.fields_of(name, node)
        for variant in node.get("oneOf") or node.get("anyOf") or ():
            extra = set(variant.get("properties", {})) - {f.wire for f in fields}
            if extra:
                raise SchemaError(f"{name}: a variant declares fields of its own: {extra}")
            ref = _single_ref(variant)
            if ref is None:
                continue
            for field_ in self.fields_of(name, self.raw[ref], all_optional=True):
                if field_.wire in {f.wire for f in fields}:
                    raise SchemaError(f"{name}.{field_.wire}: declared twice")
                fields.append(field_)
        return fields


def _arm_doc(
    union: str, variant: Mapping[str, Any], tag: str | None = None, prop: str | None = None
) -> str:
    text = variant.get("description", "") or ""
    if tag is not None:
        head = f"The `{prop}: {tag!r}` arm of `{union}`."
    else:
        head = f"The untagged `{variant.get('title', '')}` arm of `{union}`."
    return f"{head}\n\n{text}".strip()


def parse(schema: Mapping[str, Any]) -> Model:
    parser = _Parser(schema)
    parser._pending_tags = {}
    model = parser.parse()
    for ref, tag in parser._pending_tags.items():
        definition = model.defs[ref]
        if not isinstance(definition, ClassDef):
            raise SchemaError(f"{ref}: a tagged arm must be an object")
        model.defs[ref] = ClassDef(
            definition.name, definition.description, definition.fields, tag=tag, base=None
        )
    for definition in model.defs.values():
        if isinstance(definition, ClassDef) and definition.base is not None:
            base = model.defs.get(definition.base)
            if not isinstance(base, ClassDef) or base.tag is not None:
                raise SchemaError(f"{definition.name}: base {definition.base} is not a plain class")
    return model
