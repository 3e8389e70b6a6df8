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

from acp_sdk.protocol._generated.unstable_api import *  # noqa: F403 - models, rows, TABLE
from acp_sdk.protocol._generated.unstable_api import __all__ as __all__
