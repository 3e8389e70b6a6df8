"""Emit the method table rows from `x-method`/`x-side` and the JSON-RPC envelope unions."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from acp_sdk._codegen import gates, naming
from acp_sdk._codegen.ir import Model, SchemaError, snake


@dataclass(frozen=True)
class Row:
    constant: str
    wire: str
    kind: str  # "REQUEST" | "NOTIFICATION"
    handled_by: str  # "AGENT" | "CLIENT" | "BOTH"
    params: str
    result: str | None
    handler: str
    gate: str | None
    layer: str
    unstable: bool


def _envelope_members(schema: Mapping[str, Any], envelope: str, key: str) -> list[str]:
    node = schema["$defs"].get(envelope)
    if node is None:  # the proxy envelopes exist in the unstable schema only
        return []
    if key == "result":
        options = node["anyOf"][0]["properties"]["result"]["anyOf"]
    else:
        options = node["properties"][key]["anyOf"][0]["anyOf"]
    out = []
    for option in options:
        ref = option["allOf"][0]["$ref"].rsplit("/", 1)[1]
        if ref not in ("ExtRequest", "ExtResponse", "ExtNotification"):
            out.append(ref)
    return out


def envelope_docs(schema: Mapping[str, Any]) -> dict[str, str]:
    """Each params class of the request and notification envelopes -> the description
    its envelope option gives it (where the schema states who may send it)."""
    out: dict[str, str] = {}
    for envelope in _PARAMS_ENVELOPES:
        node = schema["$defs"].get(envelope)
        if node is None:
            continue
        for option in node["properties"]["params"]["anyOf"][0]["anyOf"]:
            ref = option["allOf"][0]["$ref"].rsplit("/", 1)[1]
            out[ref] = option.get("description", "") or ""
    return out


_PARAMS_ENVELOPES = (
    "ClientRequest",
    "AgentRequest",
    "ClientNotification",
    "AgentNotification",
    "ProxyRequest",
    "ProxyNotification",
)


def _handler_name(wire: str, params: str, kind: str) -> str:
    override = naming.HANDLER_NAME_OVERRIDES.get(wire)
    if override is not None:
        return override
    stem = re.sub(r"(Request|Notification)$", "", params)
    return snake(stem)


def rows(model: Model, meta: Mapping[str, Any], *, unstable_wires: Sequence[str] = ()) -> list[Row]:
    schema = model.schema
    defs = schema["$defs"]
    sent = {
        ("REQUEST", "AGENT"): _envelope_members(schema, "ClientRequest", "params"),
        ("REQUEST", "CLIENT"): _envelope_members(schema, "AgentRequest", "params"),
        ("NOTIFICATION", "AGENT"): _envelope_members(schema, "ClientNotification", "params"),
        ("NOTIFICATION", "CLIENT"): _envelope_members(schema, "AgentNotification", "params"),
        ("REQUEST", "PROXY"): _envelope_members(schema, "ProxyRequest", "params"),
        ("NOTIFICATION", "PROXY"): _envelope_members(schema, "ProxyNotification", "params"),
    }
    responses = [
        name
        for envelope in ("AgentResponse", "ClientResponse", "ProxyResponse")
        for name in _envelope_members(schema, envelope, "result")
    ]
    response_for = {defs[r]["x-method"]: r for r in responses}
    constants: dict[tuple[str, str], str] = {}
    for group in ("agentMethods", "clientMethods", "protocolMethods", "proxyMethods"):
        for key, wire in meta.get(group, {}).items():
            constants.setdefault((wire, "any"), key.upper())

    found: dict[tuple[str, str], Row] = {}
    for (kind, _receiver), params_list in sent.items():
        for params in params_list:
            node = defs[params]
            wire = node["x-method"]
            side = node["x-side"].upper()
            handled_by = "BOTH" if side in ("BOTH", "PROTOCOL") else side
            result = response_for.get(wire) if kind == "REQUEST" else None
            if kind == "REQUEST" and result is None:
                raise SchemaError(f"{wire}: request without a response type")
            found[(wire, kind)] = Row(
                constant="",
                wire=wire,
                kind=kind,
                handled_by=handled_by,
                params=params,
                result=result,
                handler=_handler_name(wire, params, kind),
                gate=None,
                layer="SESSION_CONTROL" if wire == "session/cancel" else "APP",
                unstable=wire in unstable_wires,
            )
    # Protocol-level methods live outside the Agent/Client envelopes.
    for name, node in defs.items():
        if node.get("x-side") == "protocol":
            wire = node["x-method"]
            found[(wire, "NOTIFICATION")] = Row(
                "", wire, "NOTIFICATION", "BOTH", name, None,
                _handler_name(wire, name, "NOTIFICATION"), None, "PROTOCOL", wire in unstable_wires,
            )  # fmt: skip
    naming_gates = dict(naming.CAPABILITY_GATES)
    naming_gates.update(naming.UNSTABLE_CAPABILITY_GATES)
    docs = envelope_docs(schema)
    for (wire, _kind), row in found.items():
        described = [docs.get(row.params, ""), defs[row.params].get("description", "") or ""]
        gates.check_method_gate(wire, naming_gates.get(wire), described)
    out = []
    wires_with_request = {w for (w, k) in found if k == "REQUEST"}
    for (wire, kind), row in sorted(found.items()):
        constant = constants.get((wire, "any"))
        if constant is None:
            raise SchemaError(f"{wire}: not listed in meta.json")
        if kind == "NOTIFICATION" and wire in wires_with_request:
            constant += "_NOTIFICATION"
            handler = row.handler + "_notification"
        else:
            handler = row.handler
        gate = naming_gates.get(wire)
        if gate is not None:
            root = gate.split(".", 1)[0]
            expected = {"AGENT": "agentCapabilities", "CLIENT": "clientCapabilities"}.get(
                row.handled_by
            )
            if root != expected:
                raise SchemaError(f"{wire}: gate {gate} is not in the receiver's capabilities")
        out.append(
            Row(
                constant,
                wire,
                kind,
                row.handled_by,
                row.params,
                row.result,
                handler,
                gate,
                row.layer,
                row.unstable,
            )
        )
    stale = set(naming_gates) - {r.wire for r in out}
    if stale and not unstable_wires:
        stale -= set(naming.UNSTABLE_CAPABILITY_GATES)
    if stale:
        raise SchemaError(f"capability gates for unknown methods: {sorted(stale)}")
    return out


# The row vocabulary, re-exported so `acp_sdk.methods` is one literal `__all__` away.
ROW_TYPES = (
    "GATE_UNKNOWN_METHOD",
    "Kind",
    "Layer",
    "Method",
    "MethodTable",
    "MethodTableError",
    "Notification",
    "Row",
    "Side",
    "Stability",
    "UnknownMethodGate",
)


# `Side` is used by the rows but its one public home is `acp_sdk.Side`.
METHODS_EXPORTS = tuple(name for name in ROW_TYPES if name != "Side")


def emit(
    rows_: Sequence[Row],
    header: str,
    models_module: str,
    *,
    table_name: str,
    update_gates: Mapping[str, str],
    sender_gates: Mapping[str, str],
    extra_exports: Sequence[str] = (),
    export_side: bool = False,
) -> str:
    """The rows, the tuple of them, the gates the schema states beyond the rows' own,
    and `TABLE`, the validated `MethodTable` over them."""
    types = sorted({r.params for r in rows_} | {r.result for r in rows_ if r.result})
    types = sorted(set(types) | {"AgentCapabilities", "ClientCapabilities"})
    lines = [
        header,
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        "from acp_sdk.protocol._rows import (",
        *[
            f"    {name}," if name == "Side" and not export_side else f"    {name} as {name},"
            for name in ROW_TYPES
        ],
        ")",
        f"from {models_module} import (",
        *[f"    {t}," for t in types],
        ")",
    ]
    for row in rows_:
        stability = "Stability.UNSTABLE" if row.unstable else "Stability.STABLE"
        if row.kind == "REQUEST":
            annotation = f"Method[{row.params}, {row.result}]"
            call = "Method"
        else:
            annotation = f"Notification[{row.params}]"
            call = "Notification"
        lines += [
            "",
            f"{row.constant}: Final[{annotation}] = {call}(",
            f'    wire="{row.wire}",',
            f"    handled_by=Side.{row.handled_by},",
            f"    params_type={row.params},",
        ]
        if row.result is not None:
            lines.append(f"    result_type={row.result},")
        lines += [
            f'    handler_name="{row.handler}",',
            f"    gate={row.gate!r},".replace("'", '"'),
            f"    layer=Layer.{row.layer},",
            f"    stability={stability},",
            ")",
        ]
    lines += ["", "", f"{table_name}: Final = (", *[f"    {r.constant}," for r in rows_], ")"]
    lines += [
        "",
        "CAPABILITY_ROOTS: Final = {",
        '    "agentCapabilities": AgentCapabilities,',
        '    "clientCapabilities": ClientCapabilities,',
        "}",
        '"""Where capability gate paths start: the capabilities each side advertises."""',
        "",
        "",
        "UPDATE_GATES: Final = {",
        *[f'    "{tag}": "{path}",' for tag, path in update_gates.items()],
        "}",
        '"""`session/update` variants (by `sessionUpdate` tag) an agent may send only when the',
        'client advertised this capability (the schema: "Agents MUST only send ...")."""',
        "",
        "SENDER_GATES: Final[dict[str, str]] = {",
        *[f'    "{wire}": "{path}",' for wire, path in sender_gates.items()],
        "}",
        '"""Methods only a sender that advertised this capability of its own may send."""',
        "",
        "TABLE: Final = MethodTable(",
        f"    {table_name},",
        "    capability_roots=CAPABILITY_ROOTS,",
        "    update_gates=UPDATE_GATES,",
        "    sender_gates=SENDER_GATES,",
        ")",
        '"""Every method of this protocol, validated when this module loads."""',
    ]
    names = sorted(
        [r.constant for r in rows_]
        + [
            table_name,
            "TABLE",
            "CAPABILITY_ROOTS",
            "UPDATE_GATES",
            "SENDER_GATES",
            *(ROW_TYPES if export_side else METHODS_EXPORTS),
            *extra_exports,
        ]
    )
    lines += ["", "__all__ = [", *[f'    "{n}",' for n in names], "]", ""]
    return "\n".join(lines)
