"""The precise types of issue #12, pinned with assert_type under mypy and pyright strict."""

from __future__ import annotations

from pathlib import Path

import attrs
from typing_extensions import TypeForm, assert_type

from acp_sdk import (
    Agent,
    AgentContext,
    AsyncClient,
    Client,
    Connection,
    Side,
    decode,
    encode,
    run_agent,
)
from acp_sdk.agent import extension
from acp_sdk.client import areconnect, reconnect
from acp_sdk.handlers import AskPermission
from acp_sdk.methods import (
    FS_READ_TEXT_FILE,
    SESSION_NEW,
    TABLE,
    Method,
    Notification,
    UnknownMethodGate,
)
from acp_sdk.protocol import Capabilities, Info, is_advertised
from acp_sdk.remote import asgi_app
from acp_sdk.schema import (
    AgentCapabilities,
    ClientCapabilities,
    ContentBlock,
    LoadSessionResponse,
    NewSessionRequest,
    NewSessionResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    SessionNotification,
    SessionUpdate,
    TextContent,
)


@attrs.frozen(kw_only=True, order=False)
class EchoParams:
    text: str


@attrs.frozen(kw_only=True, order=False)
class EchoResult:
    text: str
    length: int


ECHO = Method.extension(
    "_acme/echo", handled_by=Side.AGENT, params_type=EchoParams, result_type=EchoResult
)
PING = Notification.extension("_acme/ping", handled_by=Side.CLIENT, params_type=EchoParams)


def rows_and_codec(raw: bytes) -> None:
    assert_type(ECHO, Method[EchoParams, EchoResult])
    assert_type(PING, Notification[EchoParams])
    assert_type(SESSION_NEW.params_type, TypeForm[NewSessionRequest])
    assert_type(SESSION_NEW.result_type, TypeForm[NewSessionResponse])
    assert_type(TABLE.gate_for("session/list", Side.AGENT), str | UnknownMethodGate | None)
    assert_type(decode(raw, SessionUpdate), SessionUpdate)
    assert_type(decode(raw, ContentBlock), ContentBlock)
    assert_type(decode(raw, TextContent), TextContent)
    assert_type(encode(TextContent(text="x")), bytes)


def script(client: Client) -> None:
    with Client.spawn(["agent"], request_timeout=5.0, track_state=True, workers=2) as script:
        assert_type(script, Client)
    assert_type(client.request(ECHO, EchoParams(text="hi")), EchoResult)
    assert_type(client.agent_capabilities, AgentCapabilities)

    def show(update: SessionUpdate) -> None:
        print(update)

    client.new_session(cwd=".").prompt("hi", on_update=show).wait()


async def plugin(client: AsyncClient, conn: Connection) -> None:
    async with AsyncClient.spawn(["agent"], max_buffered_updates=64) as plugin:
        assert_type(plugin, AsyncClient)
    assert_type(await client.request(ECHO, EchoParams(text="hi")), EchoResult)
    assert_type(conn.their_capabilities, Capabilities | None)
    assert_type(conn.their_info, Info | None)
    assert_type(is_advertised(conn.their_capabilities, "agentCapabilities.loadSession"), bool)

    async def ask(request: RequestPermissionRequest) -> str | None:
        return request.options[0].option_id if request.options else None

    AskPermission(ask)
    AskPermission(lambda request, view: view.title)


async def echo(params: EchoParams, ctx: AgentContext) -> EchoResult:
    assert_type(ctx.client_capabilities, ClientCapabilities)
    read = await ctx.request(FS_READ_TEXT_FILE, ReadTextFileRequest(session_id="s", path="/a"))
    assert_type(read, ReadTextFileResponse)
    await ctx.notify(PING, params)
    return EchoResult(text=params.text, length=len(params.text))


async def on_update(params: SessionNotification, ctx: AgentContext) -> None:
    print(params.update)


async def on_ping(params: EchoParams, ctx: AgentContext) -> None:
    print(params.text)


def agent() -> None:
    run_agent(Agent(), table=TABLE.extend([ECHO, PING]), extensions={ECHO.handler_name: echo})
    run_agent(Agent(), extensions=[extension(ECHO, echo), extension(PING, on_ping)])


class MyClient(Client):
    def ask(self) -> str:
        return "a subclass keeps its own type through spawn, connect, open and with"


def subclass() -> None:
    with MyClient.spawn(["agent"]) as client:
        assert_type(client, MyClient)
        print(client.ask())
    assert_type(MyClient.spawn(["agent"]).open(), MyClient)


def remote() -> None:
    client, session = reconnect(lambda: Client.connect_url("ws://127.0.0.1:8000/acp"), "s", "/")
    assert_type(client, Client)
    assert_type(session.response, LoadSessionResponse)
    asgi_app(Agent())
    asgi_app(Agent, token="t")
    asgi_app(command=["python", "-m", "acp_sdk", "agent"], cwd=Path("/srv"))


async def remote_async() -> None:
    client, session = await areconnect(lambda: AsyncClient.connect_url("http://h/acp"), "s", "/")
    assert_type(client, AsyncClient)
    assert_type(session.response, LoadSessionResponse)
