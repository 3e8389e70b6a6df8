"""The method table: one typed row per ACP method, generated from the schema.

    from acp_sdk import Side
    from acp_sdk.methods import SESSION_NEW, TABLE

    SESSION_NEW.wire          # "session/new"
    SESSION_NEW.params_type   # NewSessionRequest
    TABLE.gate_for("session/list", Side.AGENT)  # "agentCapabilities.sessionCapabilities.list"

`TABLE` holds the stable protocol. `acp_sdk.unstable.TABLE` holds stable plus unstable
rows (over the unstable models). Extension methods are rows too:
`TABLE.extend([Method.extension("_acme/ping", ...)])`.
"""

from __future__ import annotations

from acp_sdk.protocol._generated.methods import *  # noqa: F403 - the rows, TABLE and the row types
from acp_sdk.protocol._generated.methods import __all__ as __all__
