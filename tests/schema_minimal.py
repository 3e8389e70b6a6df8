"""The smallest value valid against a part of the pinned schemas, built from the raw JSON
(no Hypothesis, no generator): required fields only, empty lists, the first alternative."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.schema_tools import raw_schema


def _defs(unstable: bool) -> Mapping[str, Any]:
    return raw_schema(unstable)["$defs"]  # type: ignore[no-any-return]


def _resolve(node: Mapping[str, Any], unstable: bool) -> Mapping[str, Any]:
    while "$ref" in node:
        node = _defs(unstable)[node["$ref"].rsplit("/", 1)[1]]
    return node


def minimal(node: Mapping[str, Any], unstable: bool, depth: int = 0) -> Any:
    """The smallest value valid against `node`: required fields only, empty lists."""
    assert depth < 40, node
    node = _resolve(node, unstable)
    if "const" in node:
        return node["const"]
    parts = node.get("allOf", ())
    options = [
        o
        for o in (node.get("oneOf") or node.get("anyOf") or ())
        if "not" not in o and o.get("type") != "null"
    ]
    typ = node.get("type")
    if isinstance(typ, list):
        typ = next(t for t in typ if t != "null")
    if parts and typ is None and "properties" not in node and not options:
        values = [minimal(part, unstable, depth + 1) for part in parts]  # `allOf: [$ref]`
        if not all(isinstance(v, dict) for v in values):
            return values[0]
        return {k: v for value in values for k, v in value.items()}
    if typ == "object" or "properties" in node or parts:
        out: dict[str, Any] = {}
        for wire in node.get("required", ()):
            out[wire] = minimal(node["properties"][wire], unstable, depth + 1)
        for part in [*parts, *options[:1]]:
            value = minimal(part, unstable, depth + 1)
            if isinstance(value, dict):
                out.update(value)
        return out
    if options:
        return minimal(options[0], unstable, depth + 1)
    if typ == "string":
        return "x"
    if typ in ("integer", "number"):
        return node.get("minimum", 0)
    if typ == "boolean":
        return False
    if typ == "array":
        return [minimal(node["items"], unstable, depth + 1)] * node.get("minItems", 0)
    return None  # any JSON value
