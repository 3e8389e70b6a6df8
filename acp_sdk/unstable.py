"""The unstable ACP protocol: models and method rows from `schema.unstable.json`.

Unstable features may change or vanish in any schema release. They live here, apart
from `acp_sdk.schema`, so stable code never picks one up by accident:

    from acp_sdk import unstable

    unstable.ForkSessionRequest(session_id="s1", cwd="/work")
    unstable.TABLE.get(unstable.Side.AGENT, "session/fork", unstable.Kind.REQUEST)

This namespace is complete on its own: it holds every model of the unstable schema,
the stable ones included. A model the unstable schema defines exactly as the stable one,
and whose field types are all such models too, is the `acp_sdk.schema` class itself
(`unstable.TextContent is schema.TextContent`). Every other model is a class of its own:
the new ones, the changed ones (`unstable.ToolCall` has fields `schema.ToolCall` lacks)
and those that hold a changed one (`unstable.SessionNotification`, whose `update` may be
an unstable `ToolCall`). So stable code still never receives a class of this namespace's
own unless it asks for one (an `unstable` type given to `decode`, or `unstable.TABLE`),
and an `isinstance` check against a `schema` class matches an unstable object exactly
when the two schemas agree on its type.
"""

from __future__ import annotations

from acp_sdk.protocol._generated.unstable_api import *  # noqa: F403 - models, rows, TABLE
from acp_sdk.protocol._generated.unstable_api import __all__ as __all__
