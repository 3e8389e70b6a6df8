"""The public surface: which modules are public, what each exports, and one import path
per public name.

A module is public when no part of its dotted path starts with `_`. Each public name
has exactly one home: the public module whose `__all__` lists it. `acp_sdk.unstable`
is the one deliberate mirror: it is the complete namespace of the unstable schema, so
the stable types and rows it leaves unchanged are the same objects as in
`acp_sdk.schema` / `acp_sdk.methods` (docs/architecture.md, "Public names").
"""

from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

import acp_sdk

MIRROR = "acp_sdk.unstable"

# The small namespaces, pinned name by name. The generated ones (schema, methods,
# unstable) follow the schema; their content is pinned by the codegen drift check.
PINNED: dict[str, list[str] | None] = {
    "acp_sdk": [
        "ACPError",
        "Agent",
        "AgentContext",
        "AsyncClient",
        "CapabilityNotNegotiated",
        "Client",
        "Connection",
        "ConnectionClosed",
        "DecodeError",
        "EncodeError",
        "ErrorCode",
        "LocalProtocolError",
        "NotAnAgent",
        "ProtocolError",
        "RemoteProtocolError",
        "RequestError",
        "RequestTimeout",
        "SessionState",
        "Side",
        "UnsupportedProtocolVersion",
        "__version__",
        "decode",
        "encode",
        "run_agent",
    ],
    "acp_sdk.agent": [
        "DEFAULT_PERMISSION_OPTIONS",
        "Extension",
        "ExtensionHandler",
        "LocationLike",
        "MemorySessionStore",
        "PlanItem",
        "SessionHandle",
        "SessionStore",
        "SessionStoreError",
        "SqliteSessionStore",
        "StoredSession",
        "ToolCallHandle",
        "ToolContentLike",
        "diff",
        "extension",
        "serve_agent",
        "terminal",
    ],
    "acp_sdk.client": [
        "AsyncSession",
        "AsyncTurn",
        "ClientOptions",
        "CompactionView",
        "Message",
        "Session",
        "ToolCallView",
        "Turn",
        "areconnect",
        "reconnect",
    ],
    "acp_sdk.handlers": [
        "DEFAULT_MAX_READ_BYTES",
        "DEFAULT_OUTPUT_LIMIT",
        "AllowOnce",
        "AnyHandlers",
        "AskPermission",
        "AsyncClientHandlers",
        "ClientHandlers",
        "HandlerSet",
        "LocalFileSystem",
        "LocalTerminals",
        "PermissionChoice",
        "RejectAll",
        "reject_by_default",
    ],
    "acp_sdk.mcp": [
        "McpConnections",
        "McpFailure",
        "McpSessions",
        "TransportNotAdvertised",
        "connect",
    ],
    "acp_sdk.methods": None,
    "acp_sdk.protocol": [
        "NEED_DATA",
        "SUPPORTED_PROTOCOL_VERSIONS",
        "CallFailed",
        "CancelRequested",
        "Capabilities",
        "ConnectionClosedEvent",
        "ErrorReceived",
        "Event",
        "FrameRejected",
        "Info",
        "NeedData",
        "NotificationReceived",
        "PromptCancelRequested",
        "RequestId",
        "RequestReceived",
        "ResponseReceived",
        "State",
        "get_converter",
        "is_advertised",
        "required_by_params",
        "update_capability",
    ],
    "acp_sdk.remote": ["asgi_app", "serve"],
    "acp_sdk.schema": None,
    "acp_sdk.testing": [
        "STOP_TIMEOUT",
        "ConnectionPair",
        "ScenarioAgent",
        "aconnect_in_process",
        "connect_in_process",
    ],
    "acp_sdk.tools": [],
    "acp_sdk.unstable": None,
}


def public_modules() -> list[str]:
    """Every importable public module of the package (the wheel's layout)."""
    found = ["acp_sdk"]
    for info in pkgutil.walk_packages(acp_sdk.__path__, "acp_sdk."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            found.append(info.name)
    return sorted(found)


def homes() -> dict[str, dict[str, object]]:
    return {
        name: {n: getattr(importlib.import_module(name), n) for n in PINNED[name] or ()}
        | {
            n: getattr(importlib.import_module(name), n)
            for n in importlib.import_module(name).__all__
        }
        for name in PINNED
    }


def test_the_public_modules_are_pinned() -> None:
    assert public_modules() == sorted(PINNED)


@pytest.mark.parametrize("module_name", sorted(PINNED))
def test_each_public_module_exports_what_is_pinned(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = list(module.__all__)
    if PINNED[module_name] is not None:
        assert sorted(exported) == sorted(PINNED[module_name] or [])
    assert len(exported) == len(set(exported)), "a name listed twice"
    for name in exported:
        assert hasattr(module, name), f"{module_name}.{name} is listed but missing"


def _ours(value: object) -> bool:
    """Classes, functions and objects defined in this package (not str, int, Any, ...)."""
    if isinstance(value, types.ModuleType):
        return False
    module = getattr(value, "__module__", None) or type(value).__module__
    return isinstance(module, str) and module.startswith("acp_sdk")


def _one_path_violations() -> list[str]:
    """(name, second path) pairs: a public object reachable from a public module that
    is not its home, by `__all__` or by attribute."""
    table = homes()
    home_of: dict[int, str] = {}
    problems: list[str] = []
    for module_name, names in table.items():
        if module_name == MIRROR:
            continue
        for name, value in names.items():
            if not _ours(value):
                continue  # constants, builtins and aliases of them have no identity to track
            other = home_of.setdefault(id(value), f"{module_name}.{name}")
            # Two names for one object in the same module (a schema alias) is one path.
            if other.rpartition(".")[0] != module_name:
                problems.append(f"{module_name}.{name} duplicates {other}")
    for module_name in PINNED:
        if module_name == MIRROR:
            continue
        module = importlib.import_module(module_name)
        for home, names in table.items():
            if home in (module_name, MIRROR):
                continue
            for name, value in names.items():
                if name in module.__all__ or not hasattr(module, name):
                    continue
                if getattr(module, name) is value and _ours(value):
                    problems.append(f"{module_name}.{name} is a second path to {home}.{name}")
    return problems


def test_every_public_name_has_one_import_path() -> None:
    assert _one_path_violations() == []


def test_a_second_path_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: re-exporting a name from a second public module trips it."""
    import acp_sdk.agent

    monkeypatch.setattr(acp_sdk.agent, "Client", acp_sdk.Client, raising=False)
    assert "acp_sdk.agent.Client is a second path to acp_sdk.Client" in _one_path_violations()
    monkeypatch.setattr(acp_sdk.agent, "__all__", [*acp_sdk.agent.__all__, "Client"])
    assert any("duplicates" in p for p in _one_path_violations())


def test_the_mirror_holds_every_unstable_name() -> None:
    unstable = importlib.import_module(MIRROR)
    for name in unstable.__all__:
        assert hasattr(unstable, name)
