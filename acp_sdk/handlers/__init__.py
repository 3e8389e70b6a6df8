"""Client-side handlers for what agents ask of clients, and the capabilities they imply.

Subclass `ClientHandlers` (plain methods, for `Client` and `AsyncClient`) or
`AsyncClientHandlers` (coroutines, for `AsyncClient`) and override what you serve. A client
advertises exactly what its handlers serve: `read_text_file` -> `fs.readTextFile`,
`write_text_file` -> `fs.writeTextFile`, all five terminal methods -> `terminal`,
`create_elicitation` -> `elicitation.form` (and `.url` with `elicitation_url = True`).
Several handler objects combine; for each method the first that serves it wins.

Built in (opt-in): `LocalFileSystem`, `LocalTerminals`, and permission policies
`AllowOnce`, `RejectAll`, `AskPermission`. Without a policy, `session/request_permission`
(the one request every client must answer) is rejected by default, with a warning: see
`HandlerSet`. `HandlerSet.close()` (called when a client closes) closes every handler
that has a `close()`, such as `LocalTerminals`, which kills its commands.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from acp_sdk.handlers._base import AnyHandlers as AnyHandlers
from acp_sdk.handlers._base import AsyncClientHandlers as AsyncClientHandlers
from acp_sdk.handlers._base import ClientHandlers as ClientHandlers
from acp_sdk.handlers._permissions import AllowOnce as AllowOnce
from acp_sdk.handlers._permissions import AskPermission as AskPermission
from acp_sdk.handlers._permissions import PermissionChoice as PermissionChoice
from acp_sdk.handlers._permissions import RejectAll as RejectAll
from acp_sdk.handlers._permissions import reject_by_default as reject_by_default
from acp_sdk.handlers._set import HandlerSet as HandlerSet

if TYPE_CHECKING:
    from acp_sdk.handlers._files import DEFAULT_MAX_READ_BYTES as DEFAULT_MAX_READ_BYTES
    from acp_sdk.handlers._files import LocalFileSystem as LocalFileSystem
    from acp_sdk.handlers._terminals import DEFAULT_OUTPUT_LIMIT as DEFAULT_OUTPUT_LIMIT
    from acp_sdk.handlers._terminals import LocalTerminals as LocalTerminals

# The opt-in local handlers load on first use (they pull in pathlib, secrets, subprocess):
# a client that does not serve files or terminals never imports them.
_LAZY = {
    "DEFAULT_MAX_READ_BYTES": "acp_sdk.handlers._files",
    "LocalFileSystem": "acp_sdk.handlers._files",
    "DEFAULT_OUTPUT_LIMIT": "acp_sdk.handlers._terminals",
    "LocalTerminals": "acp_sdk.handlers._terminals",
}

if not TYPE_CHECKING:  # hidden from type checkers, so a misspelled name stays an error

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'acp_sdk.handlers' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


__all__ = [
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
]
