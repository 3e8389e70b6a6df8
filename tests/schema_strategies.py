"""Hypothesis strategies for values valid against the pinned schema's `$defs`.

hypothesis-jsonschema does not run on current Hypothesis, and the schema uses a small,
known subset of JSON Schema, so this walks that subset directly. Every drawn value is
checked with jsonschema before use, so a gap here can only make a test draw less, never
let an invalid value through.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from tests.schema_tools import raw_schema, schema_errors

_INT_RANGE = {
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}
_TEXT = st.text(max_size=6)
_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-100, 100) | _TEXT,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_TEXT, inner, max_size=2),
    max_leaves=4,
)


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    out.update(b)
    return out


def node(schema: dict[str, Any], depth: int = 0, unstable: bool = False) -> st.SearchStrategy[Any]:
    if depth > 60:
        return st.nothing()
    if "$ref" in schema:
        return node(
            raw_schema(unstable)["$defs"][schema["$ref"].rsplit("/", 1)[1]], depth + 1, unstable
        )
    if "const" in schema:
        return st.just(schema["const"])
    alternatives = schema.get("oneOf") or schema.get("anyOf")
    base = {k: v for k, v in schema.items() if k not in ("oneOf", "anyOf", "allOf", "description")}
    if "allOf" in schema:
        parts = [node(p, depth + 1, unstable) for p in schema["allOf"]]
        own = node(base, depth + 1, unstable) if base.get("properties") else st.just({})
        return st.tuples(own, *parts).map(lambda ps: _combine(ps))
    if alternatives:
        options = [a for a in alternatives if "not" not in a]
        if base.get("properties") or base.get("type") == "object":
            return st.one_of(
                [
                    st.tuples(node(base, depth + 1, unstable), node(a, depth + 1, unstable)).map(
                        _combine
                    )
                    for a in options
                ]
            )
        return st.one_of([node(a, depth + 1, unstable) for a in options])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([node({**schema, "type": k}, depth + 1, unstable) for k in kind])
    if kind == "null":
        return st.none()
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=6)
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low, high = _INT_RANGE.get(schema.get("format", "int64"), _INT_RANGE["int64"])
        return st.integers(
            max(low, schema.get("minimum", low)), min(high, schema.get("maximum", high))
        )
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False, width=32) | st.integers(-9, 9)
    if kind == "array":
        if depth > 30:  # keep nesting bounded: deep lists are empty
            return st.just([])
        return st.lists(node(schema["items"], depth + 1, unstable), max_size=2)
    if kind == "object":
        return _object(schema, depth, unstable)
    return _ANY_JSON


def _combine(parts: tuple[Any, ...]) -> Any:
    out: dict[str, Any] = {}
    for part in parts:
        if not isinstance(part, dict):
            return part
        out = _merge(out, part)
    return out


def _object(schema: dict[str, Any], depth: int, unstable: bool = False) -> st.SearchStrategy[Any]:
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    extra = schema.get("additionalProperties")
    if not props and isinstance(extra, dict):
        return st.dictionaries(_TEXT, node(extra, depth + 1, unstable), max_size=2)
    if not props:
        return st.dictionaries(_TEXT, _ANY_JSON, max_size=2)
    fixed = {k: node(v, depth + 1, unstable) for k, v in props.items() if k in required}
    optional = {k: node(v, depth + 1, unstable) for k, v in props.items() if k not in required}
    return st.fixed_dictionaries(fixed, optional=optional)


@functools.cache
def valid(def_name: str, unstable: bool = False) -> st.SearchStrategy[Any]:
    """Values valid against `$defs[def_name]` (drawn, then confirmed by jsonschema).

    Cached: tests draw it inside examples, and building the strategy walks the whole
    schema (most of a property test's time before it was cached)."""

    def confirmed(value: Any) -> Any:
        assume(not schema_errors(value, def_name, unstable))
        return value

    return node({"$ref": f"#/$defs/{def_name}"}, 0, unstable).map(confirmed)
