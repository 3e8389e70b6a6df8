"""Capability gates the schema states in its descriptions, read from them.

Three kinds, all dotted wire paths into one side's advertised capabilities:

- a method's gate (the receiver's capabilities): kept by hand in `naming.CAPABILITY_GATES`
  (the prose gives several methods' gates nowhere in the schema), and checked here
  against every description that names one ("only available if the agent advertises
  the `sessionCapabilities.list` capability"), so a table entry and the schema cannot
  drift apart and a newly described gate cannot be missed;
- a `session/update` variant's gate (the client's capabilities), by `sessionUpdate` tag:
  "Agents MUST only send this update when the Client advertised the `session.compaction`
  Client capability" on the arm, or a client capability "supports `plan_update` and
  `plan_removed` session updates"; plus `naming.UPDATE_GATE_FACTS` where the schema says
  it in words only;
- a sender's gate (the sender's own capabilities): "Only sent by agents that advertise
  the `auth.status` capability" (unstable `auth/status_update`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from acp_sdk._codegen import naming
from acp_sdk._codegen.ir import ClassDef, Model, SchemaError, TPrim, TRef, UnionDef

_ROOT = {"agent": "agentCapabilities", "client": "clientCapabilities"}

# "only available if the agent advertises the `X` capability", "Only available if the
# Agent supports the `X` capability", "Only available if the `terminal` Client capability"
_METHOD_GATE = re.compile(
    r"only available if the (?:(agent|client) (?:advertises|supports) the `([\w.]+)` "
    r"capability|`([\w.]+)` (agent|client) capability)",
    re.IGNORECASE,
)
_UPDATE_GATE = re.compile(
    r"MUST only send (?:this update|\w+) when the Client advertised the `([\w.]+)` "
    r"Client capability"
)
_UPDATES_SUPPORTED = re.compile(r"supports ((?:`\w+`(?:, and |, | and )?)+) session updates")
_SENDER_GATE = re.compile(r"Only sent by (agents|clients) that advertise the `([\w.]+)` capability")


def _flat(text: str | None) -> str:
    return " ".join((text or "").split())


def described_method_gates(description: str) -> Iterator[tuple[str, str]]:
    """(side, capability as written) for each gate a method's description names."""
    for match in _METHOD_GATE.finditer(_flat(description)):
        if match.group(2) is not None:
            yield match.group(1).lower(), match.group(2)
        else:
            yield match.group(4).lower(), match.group(3)


def check_method_gate(wire: str, gate: str | None, descriptions: list[str]) -> None:
    """Every gate the method's descriptions name is the table's (by its last segment:
    the prose writes `session.fork` for `sessionCapabilities.fork`)."""
    for description in descriptions:
        for side, written in described_method_gates(description):
            if gate is None:
                raise SchemaError(f"{wire}: the schema names a gate ({written}); add it")
            root, *_ = gate.split(".")
            if root != _ROOT[side] or gate.rsplit(".", 1)[-1] != written.rsplit(".", 1)[-1]:
                raise SchemaError(f"{wire}: gate {gate} is not the schema's `{written}`")


def _resolve(model: Model, root_class: str, path: str) -> None:
    """Fail unless `path` (after its root) walks through fields of capability classes and
    ends at a capability object or a boolean, as `MethodTable` requires of gates."""
    current = model.defs.get(root_class)
    segments = path.split(".")[1:]
    for depth, segment in enumerate(segments):
        if not isinstance(current, ClassDef):
            raise SchemaError(f"gate {path}: {segment!r} is not inside an object")
        field = next((f for f in current.fields if f.wire == segment), None)
        if field is None:
            raise SchemaError(f"gate {path}: no field {segment!r}")
        last = depth == len(segments) - 1
        if last and field.type == TPrim("bool"):
            return
        current = model.defs.get(field.type.name) if isinstance(field.type, TRef) else None
    if not isinstance(current, ClassDef):
        raise SchemaError(f"gate {path} ends at a non-capability")


def update_gates(model: Model) -> dict[str, str]:
    """`sessionUpdate` tag -> the client capability an agent needs to send that update."""
    union = model.defs.get("SessionUpdate")
    if not isinstance(union, UnionDef):
        raise SchemaError("no SessionUpdate union")
    tags = {tag for tag, _ in union.tagged}
    raw: Mapping[str, Any] = model.schema["$defs"]
    out: dict[str, str] = {}

    def add(tag: str, path: str, where: str) -> None:
        if tag not in tags:
            raise SchemaError(f"{where}: gates an unknown session update {tag!r}")
        if out.setdefault(tag, path) != path:
            raise SchemaError(f"{tag}: two gates, {out[tag]} and {path}")

    for variant in raw["SessionUpdate"]["oneOf"]:
        tag = variant["properties"]["sessionUpdate"]["const"]
        texts = [variant.get("description")]
        for ref in variant.get("allOf", ()):
            texts.append(raw[ref["$ref"].rsplit("/", 1)[1]].get("description"))
        for text in texts:
            for match in _UPDATE_GATE.finditer(_flat(text)):
                add(tag, "clientCapabilities." + match.group(1), f"SessionUpdate.{tag}")
    for path, description in _capability_fields(raw, "ClientCapabilities", "clientCapabilities"):
        for match in _UPDATES_SUPPORTED.finditer(_flat(description)):
            for tag in re.findall(r"`(\w+)`", match.group(1)):
                add(tag, path, path)
    for tag, (path, quote) in naming.UPDATE_GATE_FACTS.items():
        capability = _class_at(raw, "ClientCapabilities", path)
        if tag not in tags:
            continue  # a fact of the unstable schema, read with the stable one
        if capability is None or quote not in _flat(raw[capability].get("description")):
            raise SchemaError(f"naming.UPDATE_GATE_FACTS[{tag!r}] no longer matches the schema")
        add(tag, path, "naming.UPDATE_GATE_FACTS")
    for path in out.values():
        _resolve(model, "ClientCapabilities", path)
    return dict(sorted(out.items()))


def sender_gates(model: Model, envelope_docs: Mapping[str, str]) -> dict[str, str]:
    """Method -> the capability its *sender* must have advertised to send it."""
    raw: Mapping[str, Any] = model.schema["$defs"]
    out: dict[str, str] = {}
    for params, doc in envelope_docs.items():
        node = raw[params]
        for text in (doc, node.get("description")):
            for match in _SENDER_GATE.finditer(_flat(text)):
                root = _ROOT[match.group(1)[:-1]]
                path = f"{root}.{match.group(2)}"
                _resolve(model, root[0].upper() + root[1:], path)
                out[node["x-method"]] = path
    return dict(sorted(out.items()))


def _ref_of(prop: Mapping[str, Any]) -> str | None:
    for option in [*prop.get("anyOf", ()), *prop.get("allOf", ())]:
        if "$ref" in option:
            return str(option["$ref"]).rsplit("/", 1)[1]
    return None


def _capability_fields(
    raw: Mapping[str, Any], name: str, path: str
) -> Iterator[tuple[str, str | None]]:
    """(path, description) of every field under a capabilities class, depth first."""
    for wire, prop in raw[name].get("properties", {}).items():
        if wire == "_meta":
            continue
        yield f"{path}.{wire}", prop.get("description")
        ref = _ref_of(prop)
        if ref is not None and "properties" in raw[ref]:
            yield from _capability_fields(raw, ref, f"{path}.{wire}")


def _class_at(raw: Mapping[str, Any], root: str, path: str) -> str | None:
    current: str | None = root
    for segment in path.split(".")[1:]:
        if current is None:
            return None
        prop = raw[current].get("properties", {}).get(segment)
        current = _ref_of(prop) if prop is not None else None
    return current
