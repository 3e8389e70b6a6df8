"""The method table: one typed row per ACP method, generated from the schema.

    from acp_sdk.methods import SESSION_NEW, TABLE

    SESSION_NEW.wire          # "session/new"
    SESSION_NEW.params_type   # NewSessionRequest
    TABLE.gate_for("session/list", Side.AGENT)  # "agentCapabilities.sessionCapabilities.list"

`TABLE` holds the stable protocol. `acp_sdk.unstable.TABLE` holds stable plus unstable
rows (over the unstable models). Extension methods are rows too:
`TABLE.extend([Method.extension("_acme/ping", ...)])`.
"""

from __future__ import annotations

from typing import Final

from acp_sdk._generated.methods import *  # noqa: F403 - the generated rows, listed in its __all__
from acp_sdk._generated.methods import STABLE_ROWS
from acp_sdk._generated.methods import __all__ as _ROW_NAMES
from acp_sdk._generated.models import AgentCapabilities, ClientCapabilities
from acp_sdk._rows import (
    GATE_UNKNOWN_METHOD,
    Kind,
    Layer,
    Method,
    MethodTable,
    MethodTableError,
    Notification,
    Row,
    Side,
    Stability,
)

CAPABILITY_ROOTS: Final = {
    "agentCapabilities": AgentCapabilities,
    "clientCapabilities": ClientCapabilities,
}
"""Where capability gate paths start: the capabilities each side advertises."""

TABLE: Final = MethodTable(STABLE_ROWS, capability_roots=CAPABILITY_ROOTS)
"""Every stable ACP method."""

__all__ = [
    "CAPABILITY_ROOTS",
    "GATE_UNKNOWN_METHOD",
    "TABLE",
    "Kind",
    "Layer",
    "Method",
    "MethodTable",
    "MethodTableError",
    "Notification",
    "Row",
    "Side",
    "Stability",
    *_ROW_NAMES,
]
