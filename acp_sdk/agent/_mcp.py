"""The MCP servers a client passes in `session/new`, connected for the agent (the `mcp` extra).

Clients list MCP servers in `session/new`, `session/load` and `session/resume`
(`params.mcp_servers`), and the agent connects them itself. `connect` does that with the
official `mcp` package's multi-server client, `mcp.ClientSessionGroup`:

    from acp_sdk.mcp import connect

    async with connect(params.mcp_servers, capabilities=self.mcp_capabilities) as mcp:
        mcp.tools                                   # every tool, by the name to call it with
        result = await mcp.call_tool("add", {"a": 1, "b": 2})
        mcp.server_of("add").name                   # the server it came from
        mcp.failures                                # the servers that did not connect, and why

Install it with `pip install 'acp-typed[mcp]'`.

Theory of operation:

- **What is connected.** Stdio servers always (every agent must support them); HTTP and
  SSE servers only when the agent advertised them (`McpCapabilities(http=True)`,
  `sse=True`), which the caller says by passing the same `McpCapabilities` the agent
  advertises (`Agent.mcp_capabilities`). A server of a transport the agent did not
  advertise is not contacted and is listed in `failures` with `TransportNotAdvertised`.
- **One server's failure is its own.** A server that cannot be started, does not answer
  `initialize` (and list what it offers) within `startup_timeout` seconds, or is
  unreachable lands in `failures` with its exception, and the others work.
- **Names.** The merged view keys each tool by a name unique across servers: its own
  name, or `<server name>__<tool name>` when an earlier server of the list already took
  it (pass `naming=` for another rule). `ClientSessionGroup` would otherwise refuse the
  whole second server of two that share a tool name.
- **A task per server.** `mcp` is built on anyio, whose transports open task groups that
  must be left by the task that entered them. So each server is opened, held and closed
  by a task of its own, in a task group of `connect`: the servers start at once and stop
  at once, and their tools join the view in the order the servers were given (so the
  names do not depend on which started first). The sessions are opened there and handed
  to the group (`connect_with_session`) rather than opened by it (`connect_to_server`,
  which leaves a failed HTTP transport open: see `_Server.run`). The `async with` itself
  must begin and end in one task; to keep servers open across turns, `McpSessions` holds
  each ACP session's `connect` in a task of its own.
- **Nothing is left behind.** Leaving the context (normally, by an exception or by the
  task's cancellation) closes every session: stdio servers get the MCP shutdown sequence
  (stdin closed, then SIGTERM and SIGKILL to their process group), in a cancellation
  shield with every wait bounded (the `mcp` package's own rule).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from types import MappingProxyType, TracebackType
from typing import Any, Final, cast

import attrs

try:
    import anyio
    import httpx2
    from mcp import ClientSession, ClientSessionGroup, StdioServerParameters, stdio_client
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import CallToolResult, Implementation, Tool
except ImportError as _missing:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        f"acp_sdk.mcp needs the mcp package ({_missing}): pip install 'acp-typed[mcp]'"
    ) from _missing

from acp_sdk.schema import (
    McpCapabilities,
    McpServer,
    McpServerHttp,
    McpServerStdio,
)

__all__ = [
    "McpConnections",
    "McpFailure",
    "McpSessions",
    "TransportNotAdvertised",
    "connect",
]

log = logging.getLogger("acp_sdk.mcp")

HTTP_TIMEOUT: Final = 30.0
"""Seconds for an HTTP connect, write or response start (mcp's default)."""
HTTP_READ_TIMEOUT: Final = 300.0
"""Seconds an HTTP response stream may stay silent (mcp's default)."""
STARTUP_TIMEOUT: Final = 30.0
"""Seconds one server gets to answer `initialize` and list what it offers: an editor
waits for `session/new`, so a server that hangs must not hold the session forever."""

Naming = Callable[[McpServer, str], str]
"""`naming(server, name) -> unique name`: how a tool (prompt, resource) of `server` is keyed
in the merged view. It must return names no earlier server's components use."""


class TransportNotAdvertised(Exception):
    """The client sent an HTTP or SSE server but the agent did not advertise that transport
    (`McpCapabilities.http` / `.sse`), so it was not contacted."""


@attrs.frozen(kw_only=True, order=False)
class McpFailure:
    """A server that did not connect, and why."""

    server: McpServer
    """The server as the client described it (`server.name` is its name)."""
    error: Exception
    """What went wrong: `TransportNotAdvertised`, `OSError` (the command could not be
    started), `mcp.MCPError` (it closed, timed out or answered `initialize` with an
    error), an `httpx2` error (unreachable), ..."""


class McpConnections:
    """The connected servers of one `connect`: their tools as one view, calls by name.

    Valid inside the `async with connect(...)` block that produced it."""

    __slots__ = ("_failures", "_group", "_origin", "_servers")

    def __init__(self, group: ClientSessionGroup) -> None:
        self._group = group
        self._servers: list[McpServer] = []
        self._failures: list[McpFailure] = []
        self._origin: dict[str, McpServer] = {}

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Every tool of every connected server, keyed by the name `call_tool` takes.

        `tool.name` is the name on its own server; the key differs from it only when two
        servers offer a tool of the same name (see `connect`'s `naming`)."""
        return MappingProxyType(self._group.tools)

    @property
    def servers(self) -> Sequence[McpServer]:
        """The servers that connected, in the order they were given."""
        return tuple(self._servers)

    @property
    def failures(self) -> Sequence[McpFailure]:
        """The servers that did not connect (not advertised, failed to start, ...)."""
        return tuple(self._failures)

    @property
    def group(self) -> ClientSessionGroup:
        """The underlying `mcp.ClientSessionGroup`: prompts, resources, the sessions.

        Its sessions' default request timeout is `connect`'s `startup_timeout`."""
        return self._group

    def server_of(self, tool: str) -> McpServer:
        """The server a tool of `tools` came from.

        Raises:
            KeyError: No connected server offers a tool of that name.
        """
        try:
            return self._origin[tool]
        except KeyError:
            raise KeyError(f"no MCP tool named {tool!r}") from None

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> CallToolResult:
        """Call a tool by its name in `tools`, on the server it came from.

        A tool that fails reports it in the result (`result.is_error`), as MCP asks, so
        the model can read the error; an exception means the call itself failed.

        Args:
            name: A key of `tools`.
            arguments: The tool's arguments (its `input_schema` describes them).
            timeout: Seconds to wait for the answer; `None` waits until it comes (a
                turn's cancellation still stops the wait).

        Raises:
            KeyError: No connected server offers a tool of that name.
            mcp.MCPError: The server answered with an error, or the connection closed.
            TimeoutError: `timeout` passed.
        """
        if name not in self._group.tools:
            raise KeyError(f"no MCP tool named {name!r}")
        return await self._group.call_tool(
            name,
            dict(arguments) if arguments is not None else None,
            # None would mean the session's default, which is the startup timeout.
            read_timeout_seconds=math.inf if timeout is None else timeout,
        )

    def _unique_name(self, server: McpServer, name: str) -> str:
        """The default `naming`: the component's own name unless an earlier server took it."""
        group = self._group
        candidate, n = name, 1
        while (
            candidate in group.tools or candidate in group.prompts or candidate in group.resources
        ):
            n += 1
            candidate = f"{server.name}__{name}" if n == 2 else f"{server.name}__{name}_{n}"
        return candidate


async def _start(
    stack: contextlib.AsyncExitStack,
    server: McpServer,
    capabilities: McpCapabilities,
    cwd: str | None,
    startup_timeout: float,
    client_info: Implementation | None,
) -> tuple[Implementation, ClientSession]:
    """Open one server's transport and MCP session on `stack`, and initialize it."""
    if isinstance(server, McpServerStdio):
        parameters = StdioServerParameters(
            command=server.command,
            args=list(server.args),
            # Merged over mcp's safe defaults (PATH, HOME, ...): not the agent's whole
            # environment, which may hold the agent's own secrets.
            env={variable.name: variable.value for variable in server.env},
            cwd=cwd,
        )
        read, write = await stack.enter_async_context(stdio_client(parameters))
    else:
        kind = "http" if isinstance(server, McpServerHttp) else "sse"
        if not (capabilities.http if kind == "http" else capabilities.sse):
            raise TransportNotAdvertised(
                f"MCP server {server.name!r} is {kind}, and the agent did not advertise "
                f"mcpCapabilities.{kind}"
            )
        headers = {header.name: header.value for header in server.headers}
        if kind == "http":
            # The timeouts of mcp's own HTTP client: a response stream may stay open.
            http = httpx2.AsyncClient(
                headers=headers, timeout=httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT)
            )
            await stack.enter_async_context(http)
            transport = streamable_http_client(server.url, http_client=http)
        else:
            transport = sse_client(server.url, headers=headers, timeout=HTTP_TIMEOUT)
        read, write = await stack.enter_async_context(transport)
    session = await stack.enter_async_context(
        ClientSession(read, write, read_timeout_seconds=startup_timeout, client_info=client_info)
    )
    return (await session.initialize()).server_info, session


class _Server:
    """One server's task: starts it, reports, holds it open until `stop`, closes it.

    The transport's task groups must be left by the task that entered them, so each server
    has a task of its own; the servers then start at once, and stop at once."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self.started = anyio.Event()
        self.stop = anyio.Event()
        self.session: tuple[Implementation, ClientSession] | None = None
        self.error: Exception | None = None

    async def run(
        self,
        capabilities: McpCapabilities,
        cwd: str | None,
        startup_timeout: float,
        client_info: Implementation | None,
    ) -> None:
        stack = contextlib.AsyncExitStack()
        try:
            try:
                self.session = await _start(
                    stack, self.server, capabilities, cwd, startup_timeout, client_info
                )
            except BaseException as error:
                # Closed here, in the task that opened it: a transport task that failed
                # (an unreachable URL) cancels this task's scope, and leaving the
                # transport's task group turns that cancellation back into the failure.
                # (`ClientSessionGroup.connect_to_server` closes only on `Exception`, so
                # the cancellation escaped it with the transport still open: why the
                # sessions are opened here and handed to the group.)
                await _close(stack, error)
                raise
        except Exception as failure:
            leaf = _leaf(failure)
            self.error = leaf if isinstance(leaf, Exception) else failure
            return
        finally:
            self.started.set()
        try:
            async with stack:
                await self.stop.wait()
        except Exception:  # the server's own teardown failed: it is stopped all the same
            log.warning("closing MCP server %r failed", self.server.name, exc_info=True)


def _leaf(error: BaseException) -> BaseException:
    """The one exception inside the wrapping of anyio's task groups (an exception group
    of one, often nested): what went wrong, not where. (Duck-typed: on Python 3.10 the
    groups are the `exceptiongroup` backport's.)"""
    while True:
        inner: object = getattr(error, "exceptions", None)
        if not isinstance(inner, tuple):
            return error
        members = cast("tuple[object, ...]", inner)
        if len(members) != 1 or not isinstance(members[0], BaseException):
            return error
        error = members[0]


async def _close(stack: contextlib.AsyncExitStack, error: BaseException) -> None:
    """Close `stack` as `error` leaves it; a group around `error` alone is `error` again
    (the block's own exception, not a wrapping the caller must unpack)."""
    try:
        await stack.__aexit__(type(error), error, error.__traceback__)
    except BaseException as raised:
        if _leaf(raised) is not error:
            raise


@contextlib.asynccontextmanager
async def connect(
    servers: Sequence[McpServer],
    *,
    capabilities: McpCapabilities | None = None,
    cwd: str | None = None,
    startup_timeout: float = STARTUP_TIMEOUT,
    client_info: Implementation | None = None,
    naming: Naming | None = None,
) -> AsyncGenerator[McpConnections, None]:
    """Connect the MCP servers of `session/new` (`/load`, `/resume`); close them on exit.

    Enter and leave the block in one task (anyio's rule for the transports). Leaving it,
    also by an exception or cancellation, closes every server and stops every process.

    Args:
        servers: `params.mcp_servers`.
        capabilities: What the agent advertised (`self.mcp_capabilities` in an `Agent`):
            HTTP and SSE servers are connected only if it says `http` / `sse`. `None`
            means stdio only, the baseline every agent supports.
        cwd: The directory stdio servers start in (the session's `params.cwd` is the
            natural choice); `None` keeps the agent's.
        startup_timeout: Seconds each server gets to answer `initialize` and list its
            tools, prompts and resources.
        client_info: The name and version the agent gives MCP servers (default: mcp's).
        naming: `naming(server, name) -> key`: the names of the merged view. Default:
            a tool's own name, `<server name>__<name>` when an earlier server took it.

    Yields:
        The connections: `tools`, `call_tool`, `server_of`, `failures`.
    """
    caps = capabilities if capabilities is not None else McpCapabilities()
    current: list[McpServer] = []
    # The hook reads which server's tools are being added: the group calls it while it
    # adds them, and they are added one server at a time, in the order given.
    group = ClientSessionGroup(
        component_name_hook=lambda name, _info: rename(current[0], name),
    )
    connections = McpConnections(group)
    rename: Naming = naming if naming is not None else connections._unique_name
    held = [_Server(server) for server in servers]
    in_block: list[BaseException] = []
    try:
        async with anyio.create_task_group() as tasks, group:
            try:
                for one in held:
                    tasks.start_soon(one.run, caps, cwd, startup_timeout, client_info)
                for one in held:
                    await one.started.wait()
                    await _add(connections, one, current)
                try:
                    yield connections
                except BaseException as error:
                    in_block.append(error)
                    raise
            finally:
                for one in held:
                    one.stop.set()
    except BaseException as raised:
        # The task group wraps the block's own exception in an exception group: let it
        # leave as itself (its context and cause kept as they were).
        if in_block and _leaf(raised) is in_block[0]:
            own = in_block[0]
            raise own from own.__cause__
        raise


async def _add(connections: McpConnections, one: _Server, current: list[McpServer]) -> None:
    """Add a started server's tools to the group, or list it as failed (and stop it)."""
    group = connections._group
    before = set(group.tools)
    current[:] = [one.server]
    try:
        if one.session is not None:
            # mcp 2.3 raises KeyError for a server that offers nothing: the group drops
            # the session's exit stack, which it holds only for sessions it opened
            # itself. Nothing was added; the server stays connected, with no tools.
            with contextlib.suppress(KeyError):
                await group.connect_with_session(*one.session)
    except Exception as error:  # a name taken (a `naming` that repeats), a list timed out
        one.error = error
    finally:
        current.clear()
    if one.error is not None:
        one.stop.set()
        connections._failures.append(McpFailure(server=one.server, error=one.error))
    else:
        connections._servers.append(one.server)
        connections._origin.update(dict.fromkeys(group.tools.keys() - before, one.server))


@attrs.frozen(kw_only=True, order=False)
class _Held:
    """One session's `connect`, held open by `task` until `stop` is set."""

    task: asyncio.Task[None]
    stop: asyncio.Event
    connections: McpConnections


class _Turns:
    """The opens of one session id: they take turns on `lock`; `users` counts them."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class McpSessions:
    """Each ACP session's MCP servers, open from `session/new` until `session/close`.

    `connect` must start and end in one task, and an agent's `new_session` returns long
    before the session ends; so each session's `connect` runs in a task of its own,
    owned here:

        class MyAgent(Agent):
            mcp_capabilities = McpCapabilities(http=True)

            def __init__(self) -> None:
                self.mcp = McpSessions(capabilities=self.mcp_capabilities)

            async def new_session(self, params, ctx):
                session_id = new_id()
                await self.mcp.open(session_id, params.mcp_servers, cwd=params.cwd)
                return NewSessionResponse(session_id=session_id)

            async def prompt(self, params, ctx):
                result = await self.mcp[params.session_id].call_tool("add", {"a": 1, "b": 2})
                ...

            async def close_session(self, params, ctx):
                await self.mcp.close(params.session_id)
                return CloseSessionResponse()

    `aclose()` (or leaving `async with McpSessions(...)`) closes every session. When
    `run_agent` returns, asyncio cancels the tasks still holding sessions, and that
    cancellation closes their servers too: an agent that never calls `aclose` still
    leaves no MCP server process behind.
    """

    __slots__ = (
        "_capabilities",
        "_client_info",
        "_connecting",
        "_held",
        "_naming",
        "_opening",
        "_running",
        "_timeout",
    )

    def __init__(
        self,
        *,
        capabilities: McpCapabilities | None = None,
        startup_timeout: float = STARTUP_TIMEOUT,
        client_info: Implementation | None = None,
        naming: Naming | None = None,
    ) -> None:
        """Args are `connect`'s, used for every session."""
        self._capabilities = capabilities
        self._timeout = startup_timeout
        self._client_info = client_info
        self._naming = naming
        self._held: dict[str, _Held] = {}
        # Every hold task not yet finished: `aclose` waits for all of them.
        self._running: set[asyncio.Task[None]] = set()
        # Opens of one id take turns: two at once would each start servers and the
        # second to finish would drop the first's from `_held`, leaving them running.
        self._opening: dict[str, _Turns] = {}
        # Stop events of opens still connecting, so `aclose` reaches them too.
        self._connecting: set[asyncio.Event] = set()

    def __getitem__(self, session_id: str) -> McpConnections:
        """The open session's connections.

        Raises:
            KeyError: No session of that id is open here.
        """
        return self._held[session_id].connections

    def __contains__(self, session_id: object) -> bool:
        """Whether a session of that id is open here."""
        return session_id in self._held

    def get(self, session_id: str) -> McpConnections | None:
        """The open session's connections, or `None`."""
        held = self._held.get(session_id)
        return held.connections if held is not None else None

    async def open(
        self, session_id: str, servers: Sequence[McpServer], *, cwd: str | None = None
    ) -> McpConnections:
        """Connect a session's servers (closing those it had open: `session/load` and
        `session/resume` pass the list again).

        Returns once every server connected or failed (see `McpConnections.failures`).
        Cancelled meanwhile, it stops the servers started so far before re-raising.
        """
        turns = self._opening.get(session_id)
        if turns is None:
            turns = self._opening[session_id] = _Turns()
        turns.users += 1
        try:
            async with turns.lock:
                return await self._open(session_id, servers, cwd)
        finally:
            # Dropped once no open of the id uses it: an open woken by the lock's release
            # has not taken it yet (`locked()` is False), and one arriving meanwhile must
            # still queue behind it.
            turns.users -= 1
            if turns.users == 0:
                del self._opening[session_id]

    async def _open(
        self, session_id: str, servers: Sequence[McpServer], cwd: str | None
    ) -> McpConnections:
        await self.close(session_id)
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[McpConnections] = loop.create_future()
        stop = asyncio.Event()
        task = loop.create_task(self._hold(servers, cwd, ready, stop), name=f"mcp:{session_id}")
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        either: set[asyncio.Future[Any]] = {ready, task}
        self._connecting.add(stop)
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            task.cancel()
            await asyncio.wait({task})
            raise
        finally:
            self._connecting.discard(stop)
        if not ready.done():  # connect raised before yielding
            ready.cancel()
            await task
        if stop.is_set():  # `aclose` ran while it connected
            await asyncio.wait({task})
            raise RuntimeError("McpSessions closed while the session's servers connected")
        self._held[session_id] = _Held(task=task, stop=stop, connections=ready.result())
        return ready.result()

    async def _hold(
        self,
        servers: Sequence[McpServer],
        cwd: str | None,
        ready: asyncio.Future[McpConnections],
        stop: asyncio.Event,
    ) -> None:
        async with connect(
            servers,
            capabilities=self._capabilities,
            cwd=cwd,
            startup_timeout=self._timeout,
            client_info=self._client_info,
            naming=self._naming,
        ) as connections:
            ready.set_result(connections)
            await stop.wait()

    async def close(self, session_id: str) -> None:
        """Close a session's servers and wait until they are stopped; no-op for an id
        that is not open. If the wait is cancelled, they still stop (`aclose` waits)."""
        held = self._held.pop(session_id, None)
        if held is None:
            return
        held.stop.set()
        await asyncio.wait({held.task})
        if not held.task.cancelled():
            held.task.result()

    async def aclose(self) -> None:
        """Close every session and wait until every server is stopped (an `open` still
        connecting stops its servers and raises `RuntimeError`)."""
        for stop in self._connecting:
            stop.set()
        for held in self._held.values():
            held.stop.set()
        self._held.clear()
        tasks = set(self._running)
        if tasks:
            await asyncio.wait(tasks)
        for task in tasks:
            if not task.cancelled() and task.exception() is not None:
                log.error("closing MCP servers failed", exc_info=task.exception())

    async def __aenter__(self) -> McpSessions:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
