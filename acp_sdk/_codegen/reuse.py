"""Which definitions of the unstable schema are the stable ones, so they are emitted once.

`schema.unstable.json` repeats every stable definition and changes a few (new fields, new
union arms). A definition is *shared* when the two schemas define it identically (the
same parsed record: fields, wire names, defaults, tags, descriptions, the links to the
draft or the published docs aside) and everything it refers to is shared too. The second
condition is transitive: a class whose own fields are unchanged but which holds a changed
type (an `InitializeRequest` carrying the unstable `ClientCapabilities`) must be a class
of its own, or decoding it would build the stable `ClientCapabilities` and drop the
unstable fields.

The unstable modules import a shared definition (its class or alias, its decoder and
encoder) from the stable modules instead of emitting a twin, so `acp_sdk.unstable.X is
acp_sdk.schema.X` for every shared `X`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from acp_sdk._codegen.ir import (
    AliasDef,
    ClassDef,
    Definition,
    Model,
    TList,
    TMap,
    TRef,
    TypeExpr,
    UnionDef,
)


@dataclass(frozen=True)
class Shared:
    """The shared definitions of a model, and the stable modules that hold them."""

    names: frozenset[str]
    models_module: str  # where the shared classes and aliases are defined
    codec_module: str  # where their decoders and encoders are defined


def _expr_refs(expr: TypeExpr) -> set[str]:
    if isinstance(expr, TRef):
        return {expr.name}
    if isinstance(expr, TList):
        return _expr_refs(expr.item)
    if isinstance(expr, TMap):
        return _expr_refs(expr.value)
    return set()


def references(definition: Definition) -> set[str]:
    """The names a definition's type refers to (fields, base class, arms, alias options).

    An unknown-arm class holds only the raw JSON object: it refers to nothing, so it is
    shared even when the union it falls back for gains arms."""
    out: set[str] = set()
    if isinstance(definition, ClassDef):
        for field in definition.fields:
            out |= _expr_refs(field.type)
        if definition.base is not None:
            out.add(definition.base)
    elif isinstance(definition, AliasDef):
        for option in definition.options:
            out |= _expr_refs(option)
    elif isinstance(definition, UnionDef):
        out |= {arm for _, arm in definition.tagged} | set(definition.untagged)
        if definition.unknown is not None:
            out.add(definition.unknown)
    return out


# The unstable schema links the draft docs where the stable one links the published ones
# (`.../protocol/v1/draft/extensibility` for `.../protocol/v1/extensibility`): the same
# page, so the same description.
_DRAFT_DOCS = "agentclientprotocol.com/protocol/v1/draft/"
_PUBLISHED_DOCS = "agentclientprotocol.com/protocol/v1/"


def _published(value: Any) -> Any:
    """A record with every description's draft doc links read as the published ones."""
    if isinstance(value, str):
        return value.replace(_DRAFT_DOCS, _PUBLISHED_DOCS)
    if isinstance(value, tuple):
        return tuple(_published(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _published(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name == "description" or f.name == "fields"
        }
        return dataclasses.replace(value, **changes)
    return value


def shared_names(stable: Model, unstable: Model) -> frozenset[str]:
    """The unstable definitions identical to the stable ones (doc links aside),
    transitively."""
    shared = {
        name
        for name, definition in unstable.defs.items()
        if name in stable.defs and _published(stable.defs[name]) == _published(definition)
    }
    # Drop whatever refers to a dropped name, until nothing more drops.
    while True:
        dropped = {name for name in shared if not references(unstable.defs[name]) <= shared}
        if not dropped:
            return frozenset(shared)
        shared -= dropped
