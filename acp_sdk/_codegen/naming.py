"""Naming rules and the few facts the schema does not state in machine-readable form.

Each table here is small, says why it exists, and is checked: the generator fails when an
entry no longer matches the schema, so a stale entry cannot linger.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

# Attribute names every generated class reserves for itself.
RESERVED_FIELD_NAMES = frozenset({"extra", "_explicit"})

# Tagged-union arms whose referenced class is shared, so the arm needs a subclass of its
# own. The default name is PascalCase(tag); these override it where that name is taken.
# `ToolCallProgress` is the name the official Python SDK uses for the same arm, so users
# moving over find it where they expect it.
ARM_NAME_OVERRIDES: Mapping[tuple[str, str], str] = {
    ("SessionUpdate", "tool_call_update"): "ToolCallProgress",
    ("RequestPermissionOutcome", "cancelled"): "CancelledPermissionOutcome",
}

# Unions the prose spec declares open although the schema lists a closed set of arms.
# prompt-turn.mdx / schema.mdx: clients must tolerate session updates they do not know.
OPEN_UNIONS = frozenset({"SessionUpdate"})

# Where a field's description says "null" differs from "absent": "Set to null to clear"
# (SessionInfoUpdate.title), "`null` clears it", "`null` or `[]` clears it", "`null`
# removes it" (the unstable SubagentUpdate and SessionMessage). "Omitted and `null` are
# equivalent", "sending `null` ... left unchanged" (ToolCallUpdate.name) do not match.
_NULL_MEANINGFUL = re.compile(
    r"set to null to clear|`null`(?: or `\[\]`)? (?:clears|removes)\b", re.IGNORECASE
)

# Where a class's description gives the same rule for several fields at once
# (CompactionUpdate: "`summary`, `error`, and `_meta` have patch semantics: omission
# leaves the stored value unchanged, `null` clears it").
_PATCH_FIELDS = re.compile(
    r"((?:`[\w$]+`(?:, and |, | and ))*`[\w$]+`) have patch semantics:[^.]*`null` clears"
)


def null_is_meaningful(description: str) -> bool:
    return bool(_NULL_MEANINGFUL.search(description))


def patch_fields(class_description: str) -> frozenset[str]:
    """The wire names a class description gives patch semantics (`null` clears)."""
    out: set[str] = set()
    for match in _PATCH_FIELDS.finditer(" ".join(class_description.split())):
        out |= set(re.findall(r"`([\w$]+)`", match.group(1)))
    return frozenset(out)


def pascal(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-\s/]+", text) if part)


def arm_name(union: str, tag: str, ref: str | None, *, reused: bool) -> str:
    override = ARM_NAME_OVERRIDES.get((union, tag))
    if override is not None:
        return override
    if ref is not None and not reused:
        return ref
    if ref is None:
        # An arm with no class of its own (`{"action": "decline"}`): name it after the union.
        return union + pascal(tag)
    return pascal(tag) if union in {"SessionUpdate"} else union + pascal(tag)


def unknown_arm_name(union: str, taken: Collection[str] = ()) -> str:
    """`Unknown<Union>`, or `Other<Union>` where the schema itself uses the first name
    (unstable `UnknownStateUpdate` is the `state: "unknown"` arm of `StateUpdate`)."""
    name = "Unknown" + union
    return "Other" + union if name in taken else name


def unknown_doc(union: str, prop: str) -> str:
    return (
        f"A `{union}` whose `{prop}` this SDK does not know.\n\n"
        "The spec allows new variants; the raw JSON object is kept whole in `raw` and "
        "is re-emitted unchanged, so nothing is lost."
    )


# Python handler names for methods, as the facades expose them. The default is derived
# from the params class (`NewSessionRequest` -> `new_session`); these follow the names the
# facades promise users where the class name reads poorly.
HANDLER_NAME_OVERRIDES: Mapping[str, str] = {
    "session/set_mode": "set_mode",
    "session/set_config_option": "set_config_option",
    "session/set_title": "set_title",  # unstable; as session/set_mode and set_config_option
    "session/update": "session_update",
    "session/cancel": "cancel",
    "$/cancel_request": "cancel_request",
}

# Capability gates: the path, in the *receiving* side's advertised capabilities, that must
# be present (object, even `{}`) or literally `true` before the method may be sent.
# Sources: initialization.mdx, session-setup.mdx (loadSession), session-list.mdx,
# session-delete.mdx, session-setup.mdx (resume/close), authentication.mdx (logout),
# file-system.mdx, terminals.mdx, elicitation.mdx. Methods absent here are baseline.
CAPABILITY_GATES: Mapping[str, str] = {
    "session/load": "agentCapabilities.loadSession",
    "session/list": "agentCapabilities.sessionCapabilities.list",
    "session/delete": "agentCapabilities.sessionCapabilities.delete",
    "session/resume": "agentCapabilities.sessionCapabilities.resume",
    "session/close": "agentCapabilities.sessionCapabilities.close",
    "logout": "agentCapabilities.auth.logout",
    "fs/read_text_file": "clientCapabilities.fs.readTextFile",
    "fs/write_text_file": "clientCapabilities.fs.writeTextFile",
    "terminal/create": "clientCapabilities.terminal",
    "terminal/output": "clientCapabilities.terminal",
    "terminal/release": "clientCapabilities.terminal",
    "terminal/wait_for_exit": "clientCapabilities.terminal",
    "terminal/kill": "clientCapabilities.terminal",
    "elicitation/create": "clientCapabilities.elicitation",
    "elicitation/complete": "clientCapabilities.elicitation.url",
}

# Unstable methods' gates (schema.unstable.json: each request's description, "only
# available if the agent advertises the `...` capability", and the capability objects).
UNSTABLE_CAPABILITY_GATES: Mapping[str, str] = {
    "session/fork": "agentCapabilities.sessionCapabilities.fork",
    "session/set_title": "agentCapabilities.sessionCapabilities.title",
    "session/status": "agentCapabilities.sessionCapabilities.status",
    "session/archive": "agentCapabilities.sessionCapabilities.archive",
    "session/unarchive": "agentCapabilities.sessionCapabilities.archive",
    "auth/status": "agentCapabilities.auth.status",
    "providers/list": "agentCapabilities.providers",
    "providers/set": "agentCapabilities.providers",
    "providers/disable": "agentCapabilities.providers",
}


# `session/update` variants gated by a client capability that the schema names in words
# only: tag -> (capability path, the words of the capability's description that say so).
# The generator fails when the quoted words are gone.
UPDATE_GATE_FACTS: Mapping[str, tuple[str, str]] = dict.fromkeys(
    ("subagent_update", "session_message", "session_message_chunk"),
    (
        "clientCapabilities.subagents",
        "must advertise this capability before the agent sends subagent updates or "
        "session-directed messages",
    ),
)


def is_open_union(name: str) -> bool:
    return name in OPEN_UNIONS
