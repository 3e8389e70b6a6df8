"""A remote agent: serve one over WebSocket and HTTP, drive it, drop, reconnect.

Needs the extras `server`, `ws` and `http` (`pip install 'acp-typed[server,ws,http]'`).
The scenario agent is served in this process by uvicorn on 127.0.0.1 (a free port); a
client talks to it over WebSocket, closes (as a dropped connection would), then a new
client over Streamable HTTP resumes the same session with `reconnect` (initialize, then
`session/load`: the agent replays the history, which arrives through `on_update`).

Prints:
    ws: hello over a websocket
    replayed: hello over a websocket
    http: and again over http
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterable

import uvicorn

from acp_sdk import Client
from acp_sdk.client import reconnect
from acp_sdk.remote import asgi_app
from acp_sdk.schema import AgentMessageChunk, SessionNotification, SessionUpdate, TextContent
from acp_sdk.testing import ScenarioAgent


def text(updates: Iterable[SessionUpdate]) -> str:
    return "".join(
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    )


def serve_in_background() -> tuple[str, uvicorn.Server]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    address = f"127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(
        uvicorn.Config(asgi_app(ScenarioAgent()), ws="websockets-sansio", log_level="warning")
    )
    thread = threading.Thread(target=asyncio.run, args=(server.serve([sock]),), daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    return address, server


def main() -> None:
    address, server = serve_in_background()

    with Client.connect_url(f"ws://{address}/acp") as client:
        session = client.new_session(cwd="/tmp")
        turn = session.prompt("echo hello over a websocket")
        print("ws:", text(turn))
        session_id = session.session_id

    replayed: list[str] = []

    def on_update(note: SessionNotification) -> None:
        update = note.update
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContent):
            replayed.append(update.content.text)

    client, loaded = reconnect(
        lambda: Client.connect_url(f"http://{address}/acp", on_update=on_update),
        session_id,
        cwd="/tmp",
    )
    with client:
        print("replayed:", "".join(replayed))
        turn = loaded.prompt("echo and again over http")
        print("http:", text(turn))
    server.should_exit = True


if __name__ == "__main__":
    main()
