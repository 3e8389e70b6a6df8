"""`acp_sdk.mcp.connect` against real MCP servers (the `mcp` package's own), over stdio
(subprocesses) and Streamable HTTP / SSE (uvicorn on 127.0.0.1): one view of their tools,
calls by name, each tool's server, per-server failures, and no process left behind."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from mcp import MCPError
from mcp.types import CallToolResult, TextContent

from acp_sdk.mcp import McpConnections, McpSessions, TransportNotAdvertised, connect
from acp_sdk.schema import (
    EnvVariable,
    HttpHeader,
    McpCapabilities,
    McpServer,
    McpServerHttp,
    McpServerSse,
    McpServerStdio,
)
from tests._parallel import free_port
from tests.mcp.servers import children_running_servers, running_http, stdio_argv

pytestmark = pytest.mark.timeout(60)

T = TypeVar("T")
WAIT = 30.0  # the bound on every wait below


def run(awaitable: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(awaitable, WAIT)

    return asyncio.run(bounded())


def stdio(name: str, *, server: str | None = None, env: dict[str, str] | None = None) -> McpServer:
    argv = stdio_argv(server or name)
    variables = [EnvVariable(name=k, value=v) for k, v in (env or {}).items()]
    return McpServerStdio(name=name, command=argv[0], args=argv[1:], env=variables)


def text(result: CallToolResult) -> str:
    assert not result.is_error, result
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def greeter() -> Iterator[str]:
    with running_http("greeter") as url:
        yield url


@pytest.fixture(autouse=True)
def no_server_outlives_a_test() -> Iterator[None]:
    yield
    assert children_running_servers() == []


HTTP = McpCapabilities(http=True)


def test_tools_of_stdio_and_http_servers_in_one_view(greeter: str) -> None:
    servers = [stdio("calc"), McpServerHttp(name="web", url=greeter, headers=[])]

    async def main() -> None:
        async with connect(servers, capabilities=HTTP) as mcp:
            assert mcp.failures == ()
            assert mcp.servers == tuple(servers)
            assert set(mcp.tools) == {
                "add",
                "sleep",
                "greet",
                "whoami",
                "pid",
                "web__whoami",  # the second server's tool of a taken name
                "web__pid",
            }
            assert mcp.tools["web__whoami"].name == "whoami"
            assert text(await mcp.call_tool("add", {"a": 2, "b": 3})) == "5"
            assert text(await mcp.call_tool("greet", {"who": "acp"})) == "hello, acp"
            assert text(await mcp.call_tool("whoami")) == "calc"
            assert text(await mcp.call_tool("web__whoami")) == "greeter"
            assert mcp.server_of("add") is servers[0]
            assert mcp.server_of("greet") is servers[1]
            assert mcp.server_of("web__whoami").name == "web"

    run(main())


def test_naming_hook_names_every_tool() -> None:
    servers = [stdio("one", server="calc"), stdio("two", server="calc")]

    async def main() -> None:
        async with connect(servers, naming=lambda s, name: f"{s.name}.{name}") as mcp:
            assert {"one.add", "two.add", "one.whoami", "two.whoami"} <= set(mcp.tools)
            assert mcp.server_of("two.add") is servers[1]
            assert text(await mcp.call_tool("two.add", {"a": 1, "b": 1})) == "2"

    run(main())


def test_a_naming_that_repeats_a_name_fails_that_server_and_stops_it() -> None:
    servers = [stdio("one", server="calc"), stdio("two", server="calc")]

    async def main() -> None:
        async with connect(servers, naming=lambda _server, name: name) as mcp:
            [failure] = mcp.failures
            assert failure.server is servers[1]
            assert isinstance(failure.error, MCPError)
            assert "already exist" in str(failure.error)
            assert mcp.server_of("add") is servers[0]
            [pid] = await pids(mcp, "pid")
            deadline = asyncio.get_running_loop().time() + WAIT
            while children_running_servers() != [pid]:  # the second one is stopping
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.05)

    run(main())


def test_a_server_that_offers_nothing_is_connected_with_no_tools() -> None:
    servers = [stdio("empty"), stdio("calc")]

    async def main() -> None:
        async with connect(servers) as mcp:
            assert mcp.failures == ()
            assert mcp.servers == tuple(servers)
            assert {mcp.server_of(name).name for name in mcp.tools} == {"calc"}

    run(main())


def test_a_tool_error_is_a_result_and_an_unknown_tool_a_key_error() -> None:
    async def main() -> None:
        async with connect([stdio("calc")]) as mcp:
            result = await mcp.call_tool("add", {"a": "not a number", "b": 1})
            assert result.is_error
            with pytest.raises(KeyError, match="nope"):
                await mcp.call_tool("nope")
            with pytest.raises(KeyError, match="nope"):
                mcp.server_of("nope")

    run(main())


def test_env_reaches_a_stdio_server(tmp_path: Path) -> None:
    """The client's env entries are set, on top of mcp's safe defaults."""

    async def main() -> None:
        env = {"ACP_MCP_TEST": "set"}
        async with connect([stdio("calc", env=env)], cwd=str(tmp_path)) as mcp:
            assert not mcp.failures
            pid = int(text(await mcp.call_tool("pid")))
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            assert b"ACP_MCP_TEST=set" in environ
            assert os.readlink(f"/proc/{pid}/cwd") == str(tmp_path)

    run(main())


@pytest.mark.parametrize(
    ("broken", "error"),
    [
        (McpServerStdio(name="bad", command="/nonexistent/mcp", args=[], env=[]), OSError),
        (stdio("bad", server="exit"), MCPError),
        (stdio("bad", server="hang"), MCPError),  # no answer to initialize in time
        (
            McpServerHttp(name="bad", url=f"http://127.0.0.1:{free_port()}/mcp", headers=[]),
            Exception,
        ),
    ],
    ids=["no-such-command", "exits", "never-answers", "http-unreachable"],
)
def test_a_server_that_fails_to_start_is_reported_and_the_rest_work(
    broken: McpServer, error: type[Exception]
) -> None:
    servers = [broken, stdio("calc")]

    async def main() -> None:
        # A bound for the server that never answers, generous for the one that does.
        async with connect(servers, capabilities=HTTP, startup_timeout=15.0) as mcp:
            assert len(mcp.failures) == 1, mcp.failures
            [failure] = mcp.failures
            assert failure.server is broken
            assert isinstance(failure.error, error), repr(failure.error)
            assert mcp.servers == (servers[1],)
            assert text(await mcp.call_tool("add", {"a": 1, "b": 2})) == "3"

    run(main())


def test_http_and_sse_servers_need_the_agents_capability(greeter: str) -> None:
    """Not advertised: listed as failures, never contacted (the URL would answer)."""
    servers: list[McpServer] = [
        McpServerHttp(name="web", url=greeter, headers=[]),
        McpServerSse(name="events", url=greeter, headers=[]),
        stdio("calc"),
    ]

    async def main() -> None:
        async with connect(servers) as mcp:
            assert [f.server for f in mcp.failures] == servers[:2]
            assert all(isinstance(f.error, TransportNotAdvertised) for f in mcp.failures)
            assert "mcpCapabilities.http" in str(mcp.failures[0].error)
            assert "mcpCapabilities.sse" in str(mcp.failures[1].error)
            assert mcp.servers == (servers[2],)
        async with connect(servers[:1], capabilities=McpCapabilities(sse=True)) as mcp:
            assert isinstance(mcp.failures[0].error, TransportNotAdvertised)

    run(main())


def test_an_sse_server_when_advertised() -> None:
    with running_http("greeter", sse=True) as url:
        server = McpServerSse(name="web", url=url, headers=[HttpHeader(name="X-Test", value="1")])

        async def main() -> None:
            async with connect([server], capabilities=McpCapabilities(sse=True)) as mcp:
                assert mcp.failures == ()
                assert text(await mcp.call_tool("greet", {"who": "sse"})) == "hello, sse"

        run(main())


async def pids(mcp: McpConnections, *tools: str) -> list[int]:
    return [int(text(await mcp.call_tool(tool))) for tool in tools]


def test_leaving_the_context_stops_every_server_process() -> None:
    servers = [stdio("one", server="calc"), stdio("two", server="greeter")]

    async def main() -> list[int]:
        async with connect(servers) as mcp:
            started = await pids(mcp, "pid", "two__pid")
            assert all(alive(pid) for pid in started)
            assert len(set(started)) == 2
        return started

    started = run(main())
    assert not any(alive(pid) for pid in started)


def test_an_exception_in_the_block_stops_them_too() -> None:
    started: list[int] = []

    async def main() -> None:
        async with connect([stdio("calc")]) as mcp:
            started.extend(await pids(mcp, "pid"))
            raise LookupError("boom")

    with pytest.raises(LookupError, match="boom"):
        run(main())
    assert started
    assert not alive(started[0])


def test_cancelling_the_task_inside_the_context_cleans_up() -> None:
    started: list[int] = []

    async def main() -> None:
        calling = asyncio.Event()

        async def agent_turn() -> None:
            async with connect([stdio("calc")]) as mcp:
                started.extend(await pids(mcp, "pid"))
                calling.set()
                await mcp.call_tool("sleep", {"seconds": 60})

        task = asyncio.create_task(agent_turn())
        await calling.wait()
        await asyncio.sleep(0.2)  # the call is on its way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    assert started
    assert not alive(started[0])


def test_call_timeout() -> None:
    async def main() -> None:
        async with connect([stdio("calc")]) as mcp:
            with pytest.raises((TimeoutError, MCPError)):
                await mcp.call_tool("sleep", {"seconds": 30}, timeout=0.2)

    async def with_short_startup() -> None:
        # A call without a timeout outlives the startup timeout (the sessions' default).
        # That bound must also hold the server's start (seconds, on a loaded machine).
        async with connect([stdio("calc")], startup_timeout=15.0) as mcp:
            assert mcp.failures == ()
            assert text(await mcp.call_tool("sleep", {"seconds": 15.5})) == "slept"

    run(main())
    run(with_short_startup())


# ------------------------------------------------------------------ McpSessions


def test_sessions_hold_servers_between_calls_until_closed() -> None:
    async def main() -> None:
        async with McpSessions() as sessions:
            a = await sessions.open("a", [stdio("calc")])
            b = await sessions.open("b", [stdio("calc")])
            assert "a" in sessions
            assert sessions["a"] is a
            assert sessions.get("c") is None
            [pid_a] = await pids(sessions["a"], "pid")
            [pid_b] = await pids(b, "pid")
            await sessions.close("a")
            assert "a" not in sessions
            assert not alive(pid_a)
            assert alive(pid_b)
            await sessions.close("a")  # no-op
            # Opening an open session again (session/load) replaces its servers.
            await sessions.open("b", [stdio("calc")])
            assert not alive(pid_b)
            [pid_b2] = await pids(sessions["b"], "pid")
        assert not alive(pid_b2)

    run(main())


def test_sessions_opened_from_other_tasks() -> None:
    """Each request runs in its own task: open in one, call in another, close in a third."""

    async def main() -> None:
        sessions = McpSessions()
        await asyncio.create_task(sessions.open("s", [stdio("calc")]))
        [pid] = await asyncio.create_task(pids(sessions["s"], "pid"))
        await asyncio.create_task(sessions.close("s"))
        assert not alive(pid)

    run(main())


def test_cancelling_open_stops_what_was_started() -> None:
    async def main() -> None:
        sessions = McpSessions(startup_timeout=20.0)
        opening = asyncio.create_task(
            sessions.open("s", [stdio("calc"), stdio("x", server="hang")])
        )
        while not children_running_servers():
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        opening.cancel()
        with pytest.raises(asyncio.CancelledError):
            await opening
        assert "s" not in sessions
        assert children_running_servers() == []

    run(main())


def test_two_opens_of_one_session_at_once_leave_one_set_of_servers() -> None:
    """Both calls start servers; without taking turns the first's were dropped, still running."""

    async def main() -> None:
        async with McpSessions() as sessions:
            first, second = await asyncio.gather(
                sessions.open("s", [stdio("calc")]), sessions.open("s", [stdio("calc")])
            )
            assert sessions["s"] is second
            assert first is not second
            assert len(children_running_servers()) == 1
            await sessions.close("s")
            assert children_running_servers() == []

    run(main())


def test_an_open_arriving_while_the_second_connects_still_waits_its_turn() -> None:
    """The first open's end dropped the id's lock while the second still waited for it
    (not yet `locked()`): a third then made a lock of its own and ran beside the second,
    and one of their sets of servers was left running."""

    async def main() -> None:
        async with McpSessions() as sessions:
            first = asyncio.create_task(sessions.open("s", [stdio("calc")]))
            second = asyncio.create_task(sessions.open("s", [stdio("calc")]))
            await asyncio.wait_for(first, WAIT)
            third = asyncio.create_task(sessions.open("s", [stdio("calc")]))
            await asyncio.wait_for(asyncio.gather(second, third), WAIT)
            assert sessions["s"] is third.result()
            assert len(children_running_servers()) == 1
            await sessions.close("s")
            assert children_running_servers() == []

    run(main())


def test_aclose_while_a_session_connects_stops_its_servers() -> None:
    async def main() -> None:
        sessions = McpSessions()
        opening = asyncio.create_task(sessions.open("s", [stdio("calc")]))
        while not children_running_servers():
            await asyncio.sleep(0.02)
        await sessions.aclose()
        assert children_running_servers() == []
        with pytest.raises(RuntimeError, match="closed while"):
            await opening
        assert "s" not in sessions

    run(main())


def test_sessions_left_open_close_when_the_event_loop_ends() -> None:
    """`run_agent` ends with asyncio.run's cancellation of leftover tasks: that closes them."""
    started: list[int] = []

    async def main() -> None:
        sessions = McpSessions()
        await sessions.open("s", [stdio("calc")])
        started.extend(await pids(sessions["s"], "pid"))

    asyncio.run(main())
    assert not alive(started[0])


def test_importing_without_mcp_names_the_extra() -> None:
    code = "import sys; sys.modules['mcp'] = None\nimport acp_sdk.mcp"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT, check=False
    )
    assert result.returncode != 0
    assert "pip install 'acp-typed[mcp]'" in result.stderr
