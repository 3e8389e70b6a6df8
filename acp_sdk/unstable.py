"""The unstable ACP protocol: models and method rows from `schema.unstable.json`.

Unstable features may change or vanish in any schema release. They live here, apart
from `acp_sdk.schema`, so stable code never picks one up by accident:

    from acp_sdk import unstable

    unstable.ForkSessionRequest(session_id="s1", cwd="/work")
    unstable.TABLE.get(unstable.Side.AGENT, "session/fork", unstable.Kind.REQUEST)

This namespace is complete on its own: it holds every model of the unstable schema,
including the stable ones as the unstable schema defines them, so objects built here
never mix with `acp_sdk.schema` classes.
"""

from __future__ import annotations

from typing import Final

from acp_sdk._generated.unstable_methods import *  # noqa: F403 - the generated rows
from acp_sdk._generated.unstable_methods import ALL_ROWS
from acp_sdk._generated.unstable_methods import __all__ as _ROW_NAMES
from acp_sdk._generated.unstable_models import *  # noqa: F403 - the generated models
from acp_sdk._generated.unstable_models import AgentCapabilities, ClientCapabilities
from acp_sdk._generated.unstable_models import __all__ as _MODEL_NAMES
from acp_sdk._rows import Kind, Layer, Method, MethodTable, Notification, Side, Stability

TABLE: Final = MethodTable(
    ALL_ROWS,
    capability_roots={
        "agentCapabilities": AgentCapabilities,
        "clientCapabilities": ClientCapabilities,
    },
)
"""Every stable and unstable method, over the unstable models."""

__all__ = [
    "TABLE",
    "Kind",
    "Layer",
    "Method",
    "MethodTable",
    "Notification",
    "Side",
    "Stability",
    *_MODEL_NAMES,
    *_ROW_NAMES,
]
