"""Both client facades, with every handler a client can serve."""

from __future__ import annotations

import asyncio

from acp_sdk import AsyncClient, Client
from acp_sdk.handlers import (
    AllowOnce,
    AskPermission,
    AsyncClientHandlers,
    ClientHandlers,
    LocalFileSystem,
    LocalTerminals,
    RejectAll,
)
from acp_sdk.methods import SESSION_LIST
from acp_sdk.schema import (
    AgentMessageChunk,
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
    CreateElicitationResponseAccept,
    ListSessionsRequest,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    SessionNotification,
    TextContent,
)


class Everything(ClientHandlers):
    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        return RequestPermissionResponse(
            outcome=SelectedPermissionOutcome(option_id=params.options[0].option_id)
        )

    def create_elicitation(self, params: CreateElicitationRequest) -> CreateElicitationResponse:
        return CreateElicitationResponseAccept(content={"name": "Ada"})

    def session_update(self, params: SessionNotification) -> None:
        print(params.update)

    def complete_elicitation(self, params: CompleteElicitationNotification) -> None:
        print(params.elicitation_id)


class AsyncPermissions(AsyncClientHandlers):
    async def request_permission(
        self, params: RequestPermissionRequest
    ) -> RequestPermissionResponse:
        return RequestPermissionResponse(
            outcome=SelectedPermissionOutcome(option_id=params.options[0].option_id)
        )


def blocking() -> None:
    handlers: list[ClientHandlers] = [
        Everything(),
        LocalFileSystem("."),
        LocalTerminals(output_limit=4096),
        AllowOnce(),
        RejectAll(),
        AskPermission(lambda request: request.options[0].option_id),
    ]
    with Client.spawn(["agent"], handlers=handlers, request_timeout=5.0) as client:
        session = client.new_session(cwd=".")
        turn = session.prompt("hello")
        for update in turn:
            if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContent):
                print(update.content.text)
        print(turn.stop_reason, client.agent_capabilities.load_session)
        print(client.request(SESSION_LIST, ListSessionsRequest()).sessions)
        session.cancel()


async def asynchronous() -> None:
    async with AsyncClient.spawn(
        ["agent"], handlers=[AsyncPermissions(), LocalFileSystem(".")]
    ) as client:
        session = await client.new_session(cwd=".")
        async for update in session.prompt([TextContent(text="hello")]):
            print(update)
        response = await session.prompt("again")
        print(response.stop_reason)
        await client.cancel(session_id=session.session_id)


if __name__ == "__main__":
    blocking()
    asyncio.run(asynchronous())
