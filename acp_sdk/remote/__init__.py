"""Remote agents: ACP over WebSocket and Streamable HTTP (see docs/remote.md).

Server: `asgi_app(agent_or_command)`, a plain ASGI application (run it under uvicorn:
extra `server`), and `python -m acp_sdk serve -- <agent command>`. Client:
`Client.connect_url(url)` / `AsyncClient.connect_url(url)` (extras `ws`, `http`); to
resume a session on a new connection, `acp_sdk.client.reconnect` / `areconnect`. The optional
dependencies are imported only when a transport is used, with an error naming the extra
when one is missing.
"""

from __future__ import annotations

from acp_sdk.remote._serve import serve as serve
from acp_sdk.remote._server import asgi_app as asgi_app

__all__ = ["asgi_app", "serve"]
