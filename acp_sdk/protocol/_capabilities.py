"""Capability checks: is a gate advertised, and which capabilities do params need.

A gate is a dotted wire path into one side's advertised capabilities, as the method table
stores it (`agentCapabilities.sessionCapabilities.list`). The rules (initialization.mdx):
a capability object counts as advertised when present, even if empty (`{}`); a boolean
capability only when literally `true`; anything absent, `null`, or unknown is not
advertised (fail closed).

Some methods need more than their gate, depending on what the params carry: image,
audio and embedded-resource prompt content; HTTP, SSE (and unstable ACP) MCP servers;
additional directories; elicitation modes; the unstable system prompt and archive filter.
`required_by_params` lists those paths.

A `session/update` needs a capability of the client for some variants (`notice`:
`clientCapabilities.session.notices`; `compaction_update`, `compaction_summary_chunk`:
`.session.compaction`; in the unstable schema also plan, subagent and session-message
updates). The schema states them and the generator puts them in the method table
(`MethodTable.update_gates`); `update_capability` reads the one an update needs. They are
checked on every update an agent sends, after the row's own checks (which a stream of
updates passes once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Union

import attrs

if TYPE_CHECKING:
    from acp_sdk.protocol._generated import models, unstable_models

__all__ = ["Capabilities", "Info", "is_advertised", "required_by_params", "update_capability"]

Capabilities = Union[
    "models.AgentCapabilities",
    "models.ClientCapabilities",
    "unstable_models.AgentCapabilities",
    "unstable_models.ClientCapabilities",
]
"""Either side's advertised capabilities, from the stable or the unstable schema."""
Info = Union["models.Implementation", "unstable_models.Implementation"]
"""A peer's name and version, from the stable or the unstable schema."""


_WIRE_TO_ATTRIBUTE: dict[type, Mapping[str, str]] = {}


def _wire_to_attribute(cls: Any) -> Mapping[str, str]:
    found = _WIRE_TO_ATTRIBUTE.get(cls)
    if found is None:
        found = {f.metadata["wire"]: f.name for f in attrs.fields(cls) if f.metadata.get("wire")}
        _WIRE_TO_ATTRIBUTE[cls] = found
    return found


def is_advertised(capabilities: Capabilities | None, gate: str) -> bool:
    """Whether `gate` is advertised by `capabilities` (the object its first segment names).

    Args:
        capabilities: An `AgentCapabilities` or `ClientCapabilities` (or None).
        gate: e.g. `clientCapabilities.fs.readTextFile`.
    """
    node: object = capabilities
    for segment in gate.split(".")[1:]:
        if node is None or not attrs.has(type(node)):
            return False
        node_type: Any = type(node)
        attribute = _wire_to_attribute(node_type).get(segment)
        if attribute is None:
            return False
        node = getattr(node, attribute)
    if isinstance(node, bool):
        return node is True
    return node is not None


_PROMPT_CONTENT = {
    "ImageContent": "agentCapabilities.promptCapabilities.image",
    "AudioContent": "agentCapabilities.promptCapabilities.audio",
    "EmbeddedResource": "agentCapabilities.promptCapabilities.embeddedContext",
}
_MCP_TRANSPORT = {
    "McpServerHttp": "agentCapabilities.mcpCapabilities.http",
    "McpServerSse": "agentCapabilities.mcpCapabilities.sse",
    "McpServerAcp": "agentCapabilities.mcpCapabilities.acp",  # unstable: "Agent supports `acp`"
}
# The unstable session/fork carries the same MCP servers, directories and system prompt.
_SESSION_SETUP = frozenset({"session/new", "session/load", "session/resume", "session/fork"})
_SYSTEM_PROMPT = "agentCapabilities.sessionCapabilities.systemPrompt"


PARAMS_GATED: Final = frozenset(
    {"session/prompt", *_SESSION_SETUP, "elicitation/create", "session/list"}
)
"""The methods whose params can need capabilities (`required_by_params` is empty for others)."""


def required_by_params(method: str, params: Any) -> list[str]:
    """Capability paths these params need beyond the method's own gate, in order."""
    needed: list[str] = []
    if method == "session/prompt":
        for block in getattr(params, "prompt", ()):
            path = _PROMPT_CONTENT.get(type(block).__name__)
            if path is not None and path not in needed:
                needed.append(path)
    elif method in _SESSION_SETUP:
        for server in getattr(params, "mcp_servers", ()):
            path = _MCP_TRANSPORT.get(type(server).__name__)
            if path is not None and path not in needed:
                needed.append(path)
        if getattr(params, "additional_directories", None):
            needed.append("agentCapabilities.sessionCapabilities.additionalDirectories")
        # Unstable: "Clients MUST only send this when the Agent advertises
        # `sessionCapabilities.systemPrompt`" (and `.mode.override` for that mode).
        system_prompt = getattr(params, "system_prompt", None)
        if system_prompt:  # None, or UNSET, when there is none
            needed.append(_SYSTEM_PROMPT)
            if getattr(system_prompt, "mode", None) == "override":
                needed.append(_SYSTEM_PROMPT + ".mode.override")
    elif method == "session/list":
        # Unstable: "Only send this when the Agent advertises the
        # `sessionCapabilities.archive` capability".
        if getattr(params, "archived", None) is not None:
            needed.append("agentCapabilities.sessionCapabilities.archive")
    elif method == "elicitation/create":
        mode = getattr(params, "TAG", None)
        if mode is None:  # an unknown mode: it cannot have been advertised
            raw: object = getattr(params, "raw", {})
            mode = raw.get("mode") if isinstance(raw, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        needed.append(f"clientCapabilities.elicitation.{mode}")
    return needed


def update_capability(gates: Mapping[str, str], params: Any) -> str | None:
    """The client capability a `session/update`'s variant needs, or None.

    Args:
        gates: `sessionUpdate` tag -> capability path (`MethodTable.update_gates`).
        params: The `SessionNotification` (stable or unstable) being sent.
    """
    update = getattr(params, "update", None)
    tag = getattr(update, "TAG", None)
    if tag is None:  # an `UnknownSessionUpdate` built by hand: its raw tag
        tag = getattr(update, "tag", None)
    return gates.get(tag) if type(tag) is str else None
