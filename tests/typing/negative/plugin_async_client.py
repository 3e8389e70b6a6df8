"""Mistakes an editor-plugin author makes with `AsyncClient`, handlers and the connection.

Each marked line must be reported by both checkers, with exactly the marked error code
(mypy) and rule (pyright); an unused marker fails the run.
"""

# A misspelled attribute is Unknown to pyright; strict mode would report each use of it
# a second time. The first report is the one these samples are about.
# pyright: reportUnknownMemberType=false, reportUnknownArgumentType=false
# pyright: reportUnknownLambdaType=false

from __future__ import annotations

import asyncio

from acp_sdk import Agent, AsyncClient, Connection
from acp_sdk.handlers import AskPermission, AsyncClientHandlers, ClientHandlers
from acp_sdk.methods import FS_READ_TEXT_FILE, SESSION_CANCEL
from acp_sdk.protocol import is_advertised
from acp_sdk.remote import asgi_app
from acp_sdk.schema import (
    CancelNotification,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    WriteTextFileResponse,
)


async def options(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    AsyncClient.spawn(["agent"], track_stat=True)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    AsyncClient.connect(reader, writer, max_buffered_updates=None)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


async def not_awaiting(client: AsyncClient) -> None:
    client.new_session(cwd=".")  # type: ignore[unused-coroutine]  # pyright: ignore[reportUnusedCoroutine]
    session = client.new_session(cwd=".")
    print(session.session_id)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]


async def calls(client: AsyncClient) -> None:
    await client.notify(SESSION_CANCEL, ReadTextFileRequest(session_id="s", path="/x"))  # type: ignore[misc]  # pyright: ignore[reportArgumentType]
    session = await client.new_session(cwd=".")
    await session.prompt("hi", on_update=lambda update: update.session_id)  # type: ignore[union-attr]  # pyright: ignore[reportAttributeAccessIssue]


def remote() -> None:
    AsyncClient.connect_url("ws://127.0.0.1:8000/acp", timeout="30")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    asgi_app("python -m my_agent")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
    asgi_app()  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]
    asgi_app(Agent(), command=["my-agent"])  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]


def connection(conn: Connection) -> None:
    print(conn.their_capabilities.fs)  # type: ignore[union-attr]  # pyright: ignore[reportAttributeAccessIssue, reportOptionalMemberAccess]
    print(conn.their_info.nme)  # type: ignore[union-attr]  # pyright: ignore[reportAttributeAccessIssue, reportOptionalMemberAccess]
    is_advertised({"fs": True}, "clientCapabilities.fs")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    conn.send_request(FS_READ_TEXT_FILE, CancelNotification(session_id="s"))  # type: ignore[misc]  # pyright: ignore[reportArgumentType]


def permission_callbacks() -> None:
    AskPermission(lambda request: request.option[0])  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]
    AskPermission(lambda request, view, extra: None)  # type: ignore[arg-type, misc]  # pyright: ignore[reportCallIssue, reportArgumentType]

    def wrong(request: RequestPermissionRequest) -> int:
        return 0

    AskPermission(wrong)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]


class WrongHandler(ClientHandlers):
    def read_text_file(self, params: ReadTextFileRequest) -> WriteTextFileResponse:  # type: ignore[override]  # pyright: ignore[reportIncompatibleMethodOverride]
        return WriteTextFileResponse()


class WrongAsyncHandler(AsyncClientHandlers):
    def read_text_file(self, params: ReadTextFileRequest) -> ReadTextFileResponse:  # type: ignore[override]  # pyright: ignore[reportIncompatibleMethodOverride]
        return ReadTextFileResponse(content="")
