"""Remote transports over a real uvicorn on 127.0.0.1: the behaviour suite once, run on
both facades over both transports; then the hostile cases, with the RFD's status codes."""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import websockets.exceptions
import websockets.sync.client

from acp_sdk import Agent, AsyncClient, Client
from acp_sdk.client import areconnect, reconnect
from acp_sdk.handlers import AllowOnce, LocalFileSystem, RejectAll
from acp_sdk.protocol._errors import CapabilityNotNegotiated, ConnectionClosed
from acp_sdk.remote import asgi_app
from acp_sdk.remote._backends import ProcessBackend
from acp_sdk.remote._server import _Server
from acp_sdk.schema import AgentMessageChunk, SessionNotification, TextContent
from acp_sdk.tools._scenario_agent import ScenarioAgent
from tests.client.facades import AsyncFacade, Facade, SyncFacade, guarded
from tests.remote.server import running

pytestmark = pytest.mark.timeout(60)

AGENT = [sys.executable, "-m", "acp_sdk", "agent"]
INIT = orjson.dumps(
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
)
JSON = {"Content-Type": "application/json"}
MakeDriver = Callable[..., Facade]


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    with running(asgi_app(ScenarioAgent)) as address:
        yield address


@pytest.fixture(params=["ws", "http"])
def url(request: pytest.FixtureRequest, address: str) -> str:
    return f"{request.param}://{address}/acp"


@pytest.fixture(params=["sync", "async"])
def make(request: pytest.FixtureRequest, url: str) -> MakeDriver:
    def make(**options: Any) -> Facade:
        driver: Facade
        if request.param == "sync":
            driver = SyncFacade()
            driver.client = type(driver.client).connect_url(url, timeout=10, **options)
        else:
            driver = AsyncFacade()
            driver.client = type(driver.client).connect_url(url, timeout=10, **options)
        return driver

    return make


def ws_open(url: str, **options: Any) -> websockets.sync.client.ClientConnection:
    """A blocking WebSocket (entered, as websockets >= 17.1 wants; closed by the test)."""
    connection: websockets.sync.client.ClientConnection = websockets.sync.client.connect(
        url, **options
    ).__enter__()
    return connection


def text_of(updates: list[Any]) -> str:
    return "".join(
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    )


# ---------------------------------------------------------------------- behaviour


def test_full_turn(make: MakeDriver) -> None:
    with make() as driver:
        assert driver.agent_info is not None
        session = driver.new_session()
        updates, response = driver.prompt(session, "echo hello remote world")
        assert text_of(updates).split() == ["hello", "remote", "world"]
        assert response.stop_reason == "end_turn"
        # a second session on the same connection, and a second turn
        other = driver.new_session()
        assert other.session_id != session.session_id
        updates, response = driver.prompt(other, "echo again")
        assert text_of(updates).strip() == "again"


@pytest.mark.parametrize(
    ("policy", "said"), [(AllowOnce(), "Permission granted."), (RejectAll(), "rejected")]
)
def test_permission_request(make: MakeDriver, policy: Any, said: str) -> None:
    with make(handlers=[policy]) as driver:
        updates, response = driver.prompt(driver.new_session(), "permission")
        assert response.stop_reason == "end_turn"
        assert said in text_of(updates)


def test_fs_handler(make: MakeDriver, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("remote file contents\n", encoding="utf-8")
    with make(handlers=[LocalFileSystem(tmp_path)]) as driver:
        session = driver.new_session(cwd=str(tmp_path))
        updates, _ = driver.prompt(session, f"read {tmp_path / 'notes.txt'}")
        assert "remote file contents" in text_of(updates) + repr(updates)


def test_cancel(make: MakeDriver) -> None:
    with make() as driver:
        session = driver.new_session()
        _, response = driver.prompt_and_cancel(session, "wait", after=0.3)
        assert response.stop_reason == "cancelled"
        # the connection goes on after the cancelled turn
        updates, response = driver.prompt(session, "echo still here")
        assert (text_of(updates).split(), response.stop_reason) == (["still", "here"], "end_turn")


def test_ten_thousand_updates(make: MakeDriver) -> None:
    with make() as driver:
        updates, response = driver.prompt(driver.new_session(), "stream 10000")
        assert len(updates) == 10000
        assert response.stop_reason == "end_turn"


def test_message_over_websockets_default_cap(make: MakeDriver) -> None:
    """websockets caps messages at 1 MiB by default: both ends raise it to the SDK's cap."""
    word = "x" * (3 * 1024 * 1024)
    with make() as driver:
        updates, response = driver.prompt(driver.new_session(), f"echo {word}")
        assert text_of(updates).strip() == word
        assert response.stop_reason == "end_turn"


# ---------------------------------------------------------------------- hostile peers


def _server_of(app: Any) -> _Server:
    assert isinstance(app, _Server)
    return app


def _agent_pids(app: Any) -> list[int]:
    pids = []
    for connection in _server_of(app).connections.values():
        backend = connection.backend
        assert isinstance(backend, ProcessBackend)
        assert backend.process is not None
        pids.append(backend.process.pid)
    return pids


def _gone(app: Any, pid: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _agent_pids(app) and not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.05)
    return False


def _open_session(ws: websockets.sync.client.ClientConnection) -> str:
    """initialize, then session/new, over a raw WebSocket: the session id."""
    ws.send(INIT.decode())
    assert orjson.loads(ws.recv(timeout=10))["id"] == 0
    new = {"cwd": "/tmp", "mcpServers": []}
    ws.send(
        orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new}).decode()
    )
    while True:
        message = orjson.loads(ws.recv(timeout=10))
        if message.get("id") == 1:
            session: str = message["result"]["sessionId"]
            return session


def _read_until_quiet(ws: websockets.sync.client.ClientConnection, quiet: float = 0.5) -> None:
    """Read what the agent sends until it has said nothing for `quiet` seconds."""
    for _ in range(1000):
        try:
            ws.recv(timeout=quiet)
        except TimeoutError:
            return
    raise AssertionError("the agent never went quiet")


@pytest.mark.skipif(not Path("/proc").exists(), reason="reads /proc")
def test_websocket_client_vanishing_mid_turn_frees_its_agent_process() -> None:
    app = asgi_app(command=AGENT)
    with running(app) as address:
        ws = ws_open(f"ws://{address}/acp")
        session = _open_session(ws)
        prompt = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]},
        }
        ws.send(orjson.dumps(prompt).decode())
        (pid,) = _agent_pids(app)
        _read_until_quiet(ws)  # the turn waits; the client's reader thread waits in recv()
        # No closing handshake: the client just vanishes, as if its process died. close()
        # alone is not that: while websockets < 17's reader thread is blocked in recv() on
        # the socket, the kernel keeps it open (no FIN is sent), so the server rightly sees
        # a live connection. shutdown() sends the FIN whoever is blocked on the socket.
        ws.socket.shutdown(socket.SHUT_RDWR)
        ws.socket.close()
        assert _gone(app, pid)


@pytest.mark.skipif(not Path("/proc").exists(), reason="reads /proc")
def test_http_client_vanishing_mid_turn_frees_its_agent_process() -> None:
    app = asgi_app(command=AGENT, idle_timeout=1.0)
    with running(app) as address, httpx.Client(timeout=10) as http:
        url = f"http://{address}/acp"
        answer = http.post(url, content=INIT, headers=JSON)
        connection = {"Acp-Connection-Id": answer.headers["acp-connection-id"]}
        with http.stream(
            "GET", url, headers={**connection, "Accept": "text/event-stream"}
        ) as events:
            new = {"cwd": "/tmp", "mcpServers": []}
            body = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new}
            assert http.post(url, json=body, headers=connection).status_code == 202
            line = next(line for line in events.iter_lines() if line.startswith("data:"))
            session = orjson.loads(line[5:])["result"]["sessionId"]
            prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]}
            body = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}
            headers = {**connection, "Acp-Session-Id": session}
            assert http.post(url, json=body, headers=headers).status_code == 202
            (pid,) = _agent_pids(app)
        # the stream is gone and no DELETE comes: the idle timeout frees the agent
        assert _gone(app, pid)


def test_http_delete_frees_the_agent_process() -> None:
    app = asgi_app(command=AGENT)
    with running(app) as address, httpx.Client(timeout=10) as http:
        url = f"http://{address}/acp"
        answer = http.post(url, content=INIT, headers=JSON)
        assert answer.status_code == 200
        assert orjson.loads(answer.content)["result"]["protocolVersion"] == 1
        connection = {"Acp-Connection-Id": answer.headers["acp-connection-id"]}
        (pid,) = _agent_pids(app)
        assert http.delete(url, headers=connection).status_code == 202
        assert _gone(app, pid)
        assert http.delete(url, headers=connection).status_code == 404


@pytest.mark.parametrize("scheme", ["ws", "http"])
@pytest.mark.parametrize("facade", ["sync", "async"])
def test_wrong_token_is_refused(scheme: str, facade: str) -> None:
    with running(asgi_app(ScenarioAgent, token="s3cret")) as address:
        url = f"{scheme}://{address}/acp"
        driver: Facade = SyncFacade() if facade == "sync" else AsyncFacade()
        wrong = {"Authorization": "Bearer nope"}
        driver.client = type(driver.client).connect_url(url, headers=wrong, timeout=10)
        with pytest.raises(ConnectionClosed, match="401"), driver:
            pass
        if facade == "async":
            assert isinstance(driver, AsyncFacade)
            driver.__exit__()
        right = {"Authorization": "Bearer s3cret"}
        driver = SyncFacade() if facade == "sync" else AsyncFacade()
        driver.client = type(driver.client).connect_url(url, headers=right, timeout=10)
        with driver:
            _, response = driver.prompt(driver.new_session(), "echo ok")
            assert response.stop_reason == "end_turn"


def test_token_checked_on_every_request() -> None:
    with running(asgi_app(ScenarioAgent, token="s3cret")) as address, httpx.Client() as http:
        url = f"http://{address}/acp"
        assert http.post(url, content=INIT, headers=JSON).status_code == 401
        bad = {**JSON, "Authorization": "Bearer s3cre"}
        assert http.post(url, content=INIT, headers=bad).status_code == 401
        good = {"Authorization": "Bearer s3cret"}
        answer = http.post(url, content=INIT, headers={**JSON, **good})
        assert answer.status_code == 200
        connection = {"Acp-Connection-Id": answer.headers["acp-connection-id"]}
        events = {**connection, "Accept": "text/event-stream"}
        assert http.get(url, headers=events).status_code == 401
        assert http.delete(url, headers=connection).status_code == 401
        assert http.delete(url, headers={**connection, **good}).status_code == 202
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            ws_open(f"ws://{address}/acp")
        assert refused.value.response.status_code == 401


def test_oversized_messages_are_refused() -> None:
    app = asgi_app(ScenarioAgent, max_message_size=1000)
    with running(app) as address, httpx.Client(timeout=10) as http:
        url = f"http://{address}/acp"
        padded = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"x": "y" * 2000}}
        assert http.post(url, json=padded).status_code == 413
        ws = ws_open(f"ws://{address}/acp")
        ws.send(orjson.dumps(padded).decode())
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            ws.recv(timeout=10)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1009
        assert not _server_of(app).connections


def test_bad_methods_and_headers_get_the_rfd_status_codes() -> None:
    with running(asgi_app(ScenarioAgent)) as address, httpx.Client(timeout=10) as http:
        url = f"http://{address}/acp"
        assert http.put(url, content=INIT, headers=JSON).status_code == 405
        assert http.post(f"http://{address}/other", content=INIT, headers=JSON).status_code == 404
        assert (
            http.post(url, content=INIT, headers={"Content-Type": "text/plain"}).status_code == 415
        )
        assert http.post(url, content=b"{not json", headers=JSON).status_code == 400
        batch = http.post(url, content=b"[" + INIT + b"]", headers=JSON)
        assert batch.status_code == 501
        assert orjson.loads(batch.content)["error"]["code"] == -32600
        notice = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
        assert http.post(url, json=notice).status_code == 400  # no Acp-Connection-Id
        unknown = {"Acp-Connection-Id": "nope"}
        assert http.post(url, json=notice, headers=unknown).status_code == 404
        assert http.get(url, headers={"Accept": "text/event-stream"}).status_code == 400
        assert http.get(url, headers={**unknown, "Accept": "text/event-stream"}).status_code == 404
        assert http.delete(url).status_code == 400

        answer = http.post(url, content=INIT, headers=JSON)
        connection = {"Acp-Connection-Id": answer.headers["acp-connection-id"]}
        assert http.post(url, content=INIT, headers={**JSON, **connection}).status_code == 400
        assert http.get(url, headers=connection).status_code == 406  # Accept lacks SSE
        # a session-scoped POST without Acp-Session-Id, or with another session's
        assert http.post(url, json=notice, headers=connection).status_code == 400
        mismatched = {**connection, "Acp-Session-Id": "other"}
        assert http.post(url, json=notice, headers=mismatched).status_code == 400
        matched = {**connection, "Acp-Session-Id": "s"}
        assert http.post(url, json=notice, headers=matched).status_code == 202
        # one receiver per stream
        events = {**connection, "Accept": "text/event-stream"}
        with http.stream("GET", url, headers=events) as first:
            assert first.status_code == 200
            assert http.get(url, headers=events).status_code == 409
        assert http.delete(url, headers=connection).status_code == 202


def test_websocket_origin_is_checked() -> None:
    app = asgi_app(ScenarioAgent, allowed_origins=["https://editor.example"])
    with running(app) as address:
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            ws_open(
                f"ws://{address}/acp",
                origin="https://evil.example",
            )
        assert refused.value.response.status_code == 403
        for origin in ("https://editor.example", f"http://{address}"):
            ws = ws_open(
                f"ws://{address}/acp",
                origin=origin,
            )
            ws.send(INIT.decode())
            assert orjson.loads(ws.recv(timeout=10))["id"] == 0
            ws.close()


def test_connection_cap() -> None:
    with running(asgi_app(ScenarioAgent, max_connections=1)) as address, httpx.Client() as http:
        url = f"http://{address}/acp"
        assert http.post(url, content=INIT, headers=JSON).status_code == 200
        assert http.post(url, content=INIT, headers=JSON).status_code == 503
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            ws_open(f"ws://{address}/acp")
        assert refused.value.response.status_code == 503


SLOW_TO_STOP = [
    sys.executable,
    "-c",
    "import json, signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "request = json.loads(sys.stdin.readline())\n"
    "answer = {'protocolVersion': 1, 'agentCapabilities': {}, 'authMethods': []}\n"
    "print(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': answer}), flush=True)\n"
    "sys.stdin.read()\n"
    "time.sleep(2)\n",
]


def test_agents_still_stopping_after_delete_count_against_the_cap() -> None:
    """DELETE answers at once and stops the agent in the background: until it has
    stopped it counts, or initialize + DELETE in a loop would start agents unbounded."""
    app = asgi_app(command=SLOW_TO_STOP, max_connections=1)
    with running(app) as address, httpx.Client(timeout=10) as http:
        url = f"http://{address}/acp"
        first = http.post(url, content=INIT, headers=JSON)
        assert first.status_code == 200
        connection = {"Acp-Connection-Id": first.headers["acp-connection-id"]}
        assert http.delete(url, headers=connection).status_code < 300
        assert http.post(url, content=INIT, headers=JSON).status_code == 503  # still stopping
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and _server_of(app).stopping:
            time.sleep(0.05)
        assert not _server_of(app).stopping
        assert http.post(url, content=INIT, headers=JSON).status_code == 200


def test_agents_still_stopping_after_a_websocket_closes_count_against_the_cap() -> None:
    """The same for a WebSocket that closes: connect + close in a loop must not start
    agents past the cap while earlier ones are still stopping."""
    app = asgi_app(command=SLOW_TO_STOP, max_connections=1)
    with running(app) as address:
        url = f"ws://{address}/acp"
        ws = ws_open(url)
        ws.send(INIT.decode())
        assert orjson.loads(ws.recv(timeout=10))["id"] == 0
        ws.close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and _server_of(app).connections:
            time.sleep(0.01)
        assert not _server_of(app).connections
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            ws_open(url)  # the first agent is still stopping
        assert refused.value.response.status_code == 503
        while time.monotonic() < deadline and _server_of(app).stopping:
            time.sleep(0.05)
        assert not _server_of(app).stopping
        ws_open(url).close()


def test_websocket_idle_timeout_closes_the_connection() -> None:
    app = asgi_app(ScenarioAgent, idle_timeout=0.5)
    with running(app) as address:
        ws = ws_open(f"ws://{address}/acp")
        ws.send(INIT.decode())
        ws.recv(timeout=10)
        with pytest.raises(websockets.exceptions.ConnectionClosed):
            ws.recv(timeout=10)
        assert not _server_of(app).connections


def test_binary_websocket_frames_are_ignored() -> None:
    with running(asgi_app(ScenarioAgent)) as address:
        ws = ws_open(f"ws://{address}/acp")
        ws.send(b"\x00\x01 binary")
        ws.send(INIT.decode())
        assert orjson.loads(ws.recv(timeout=10))["id"] == 0
        ws.close()


def test_a_message_with_newlines_is_one_message() -> None:
    """Pretty-printed JSON is one message on a framed transport (no newline framing)."""
    app = asgi_app(command=AGENT)
    with running(app) as address:
        ws = ws_open(f"ws://{address}/acp")
        ws.send(orjson.dumps(orjson.loads(INIT), option=orjson.OPT_INDENT_2).decode())
        assert orjson.loads(ws.recv(timeout=10))["id"] == 0
        ws.close()


@pytest.mark.skipif(not Path("/proc").exists(), reason="reads /proc")
@pytest.mark.parametrize("scheme", ["ws", "http"])
@pytest.mark.parametrize("facade", ["sync", "async"])
def test_closing_a_client_mid_turn_frees_its_agent_process(scheme: str, facade: str) -> None:
    app = asgi_app(command=AGENT)
    with running(app) as address:
        driver: Facade = SyncFacade() if facade == "sync" else AsyncFacade()
        driver.client = type(driver.client).connect_url(f"{scheme}://{address}/acp", timeout=10)
        with driver:
            session: Any = driver.new_session()
            if isinstance(driver, SyncFacade):
                assert next(iter(session.prompt("stream 100000")))
            else:
                driver.run(lambda: _first_update(session))
            (pid,) = _agent_pids(app)
        # the agent was still streaming (the client stopped reading after one update)
        assert _gone(app, pid)


async def _first_update(session: Any) -> None:
    async for _ in session.prompt("stream 100000"):
        break


@pytest.mark.parametrize("facade", ["sync", "async"])
def test_reconnect_loads_the_session_on_a_new_connection(facade: str) -> None:
    with running(asgi_app(ScenarioAgent())) as address:  # one agent: sessions outlive links
        seen: list[str] = []

        def on_update(note: SessionNotification) -> None:
            update = note.update
            if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContent):
                seen.append(update.content.text)

        with Client.connect_url(f"ws://{address}/acp") as first:
            session = first.new_session(cwd="/tmp")
            assert session.prompt("echo remembered").wait().stop_reason == "end_turn"
        url = f"http://{address}/acp"
        if facade == "sync":
            client, loaded = reconnect(
                lambda: Client.connect_url(url, on_update=on_update), session.session_id, "/tmp"
            )
            with client:
                assert loaded.prompt("echo more").wait().stop_reason == "end_turn"
        else:

            async def go() -> None:
                client, loaded = await areconnect(
                    lambda: AsyncClient.connect_url(url, on_update=on_update),
                    session.session_id,
                    "/tmp",
                )
                async with client:
                    assert (await loaded.prompt("echo more")).stop_reason == "end_turn"

            asyncio.run(go())
        assert "".join(seen).strip() == "remembered"


@pytest.mark.parametrize("facade", ["sync", "async"])
def test_http_load_returns_after_the_whole_replay(facade: str) -> None:
    """Over Streamable HTTP the replay comes on the session's stream; the answer to
    `session/load` used to come on the connection's, so it could overtake the replay."""
    with running(asgi_app(ScenarioAgent())) as address:
        with Client.connect_url(f"ws://{address}/acp") as first:
            session = first.new_session(cwd="/tmp")
            assert session.prompt("stream 3000").wait().stop_reason == "end_turn"
        over_ws: list[SessionNotification] = []  # a WebSocket keeps one order
        client, _ = reconnect(
            lambda: Client.connect_url(f"ws://{address}/acp", on_update=over_ws.append),
            session.session_id,
            "/tmp",
        )
        client.close()
        expected = len(over_ws)
        assert expected > 3000
        url = f"http://{address}/acp"
        for _ in range(3):
            assert _replayed_by_the_time_load_returns(facade, url, session.session_id) == expected


def _replayed_by_the_time_load_returns(facade: str, url: str, session_id: str) -> int:
    seen: list[SessionNotification] = []
    if facade == "sync":
        client, _ = reconnect(
            lambda: Client.connect_url(url, on_update=seen.append), session_id, "/tmp"
        )
        with client:
            return len(seen)

    async def go() -> int:
        client, _ = await areconnect(
            lambda: AsyncClient.connect_url(url, on_update=seen.append), session_id, "/tmp"
        )
        async with client:
            return len(seen)

    return asyncio.run(go())


@pytest.mark.parametrize("facade", ["sync", "async"])
def test_reconnect_needs_load_session(facade: str) -> None:
    class NoLoad(ScenarioAgent):
        load_session = Agent.load_session  # not overridden: not advertised

    def attempt(url: str) -> object:
        if facade == "sync":
            return reconnect(lambda: Client.connect_url(url), "s", "/tmp")
        return asyncio.run(areconnect(lambda: AsyncClient.connect_url(url), "s", "/tmp"))

    with running(asgi_app(NoLoad())) as address, pytest.raises(CapabilityNotNegotiated):
        attempt(f"ws://{address}/acp")


class StickyCookie:
    """An ASGI wrapper acting as a load balancer with sticky sessions: the initialize
    answer sets a cookie, and every later request of that connection must bring it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.refused = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers", ()))
        needs_cookie = scope["type"] == "http" and b"acp-connection-id" in headers
        if needs_cookie and b"affinity=node-7" not in headers.get(b"cookie", b""):
            self.refused += 1
            await send({"type": "http.response.start", "status": 403, "headers": []})
            await send({"type": "http.response.body", "body": b"no affinity cookie"})
            return

        async def send_with_cookie(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                cookie = (b"set-cookie", b"affinity=node-7; Path=/")
                message["headers"] = [*message.get("headers", []), cookie]
            await send(message)

        await self.app(scope, receive, send_with_cookie)


@pytest.mark.parametrize("facade", ["sync", "async"])
def test_the_http_client_keeps_cookies(facade: str) -> None:
    app = StickyCookie(asgi_app(ScenarioAgent))
    with running(app) as address:
        driver: Facade = SyncFacade() if facade == "sync" else AsyncFacade()
        driver.client = type(driver.client).connect_url(f"http://{address}/acp", timeout=10)
        with driver:
            updates, response = driver.prompt(driver.new_session(), "echo sticky")
            assert (text_of(updates).strip(), response.stop_reason) == ("sticky", "end_turn")
    assert app.refused == 0


# ---------------------------------------------------------------------- hostile agents

RAW_AGENT = [sys.executable, str(Path(__file__).parents[1] / "client" / "peers" / "raw_agent.py")]
STEP = 15.0


def _remote_driver(scheme: str, facade: str, address: str) -> Facade:
    driver: Facade = SyncFacade() if facade == "sync" else AsyncFacade()
    driver.client = type(driver.client).connect_url(f"{scheme}://{address}/acp", timeout=10)
    return driver


def _numbers(updates: list[Any]) -> list[str]:
    return [
        u.content.text[:7]
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    ]


@pytest.mark.parametrize("scheme", ["ws", "http"])
@pytest.mark.parametrize("facade", ["sync", "async"])
def test_an_agent_dying_mid_turn_ends_the_remote_turn(scheme: str, facade: str) -> None:
    with running(asgi_app(command=[*RAW_AGENT, "--die", "exit3", "--stream", "10"])) as address:
        driver = _remote_driver(scheme, facade, address)
        with driver:
            session: Any = guarded(driver.new_session, STEP, "session/new")
            turn = driver.start(session, "go")
            updates, error = guarded(lambda: driver.drain(turn), STEP, "a turn whose agent died")
            assert _numbers(updates) == [f"{i:07d}" for i in range(2)]  # nothing lost before
            assert isinstance(error, ConnectionClosed), repr(error)


@pytest.mark.parametrize("junk", ["not-json", "array", "unknown-id", "scalar", "bad-params"])
@pytest.mark.parametrize("scheme", ["ws", "http"])
@pytest.mark.parametrize("facade", ["sync", "async"])
def test_one_malformed_message_from_a_remote_agent_loses_nothing(
    scheme: str, facade: str, junk: str
) -> None:
    with running(asgi_app(command=[*RAW_AGENT, "--stream", "50", "--junk", junk])) as address:
        driver = _remote_driver(scheme, facade, address)
        with driver:
            session: Any = guarded(driver.new_session, STEP, "session/new")
            for _ in range(2):  # and the client stays usable
                updates, response = guarded(lambda: driver.prompt(session, "go"), STEP, "turn")
                assert _numbers(updates) == [f"{i:07d}" for i in range(50)]
                assert response.stop_reason == "end_turn"


def test_a_websocket_client_that_stops_reading_holds_the_agent_back(tmp_path: Path) -> None:
    """A connected client that reads nothing: the server holds a bounded amount (its
    output buffer per agent, its buffer per event stream), then the agent waits as over
    a pipe. Nothing grows without limit."""
    from acp_sdk.remote._backends import OUTPUT_BUFFER
    from acp_sdk.remote._server import STREAM_BUFFER

    progress = tmp_path / "progress"
    argv = [*RAW_AGENT, "--stream", "200000", "--size", "1024", "--progress", str(progress)]
    app = asgi_app(command=argv)
    with running(app) as address:
        ws = ws_open(f"ws://{address}/acp", max_size=None)
        try:
            ws.send(INIT.decode())
            ws.recv(timeout=10)
            ws.send('{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}')
            session = orjson.loads(ws.recv(timeout=10))["result"]["sessionId"]
            prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
            request = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}
            ws.send(orjson.dumps(request).decode())
            # Read nothing more; wait until the agent stops advancing.
            seen, deadline = "", time.monotonic() + 30
            while time.monotonic() < deadline:
                time.sleep(1.0)
                now = progress.read_text() if progress.exists() else ""
                if now and now == seen:
                    break
                seen = now
            assert seen != "done"  # the agent was made to wait
            (connection,) = _server_of(app).connections.values()
            backend = connection.backend
            assert isinstance(backend, ProcessBackend)
            slack = 2 * 1024 * 1024  # one message over the mark, at most
            assert backend._output.queued <= OUTPUT_BUFFER + slack
            assert connection.buffered <= STREAM_BUFFER + slack
        finally:
            ws.close()


@pytest.mark.parametrize("facade", ["sync", "async"])
def test_closing_a_client_whose_server_stopped_reading_returns(facade: str) -> None:
    """A WebSocket server that stops reading: sends back up until the send buffer is
    full, and closing the client still returns within its bound, with no thread left
    failing behind it (the test fails on an unhandled thread exception)."""
    import threading

    import attrs
    import websockets.sync.server

    from acp_sdk import RequestTimeout, Side
    from acp_sdk.methods import TABLE, Notification

    @attrs.frozen(kw_only=True, order=False)
    class Blob:
        text: str

    big = Notification.extension("_test/big", handled_by=Side.AGENT, params_type=Blob)
    table = TABLE.extend([big])
    blob = Blob(text="x" * (1 << 20))
    stop = threading.Event()

    def handler(ws: websockets.sync.server.ServerConnection) -> None:
        request = orjson.loads(ws.recv())
        answer = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        ws.send(orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}).decode())
        stop.wait(30)  # and never read again

    def sync_case(url: str) -> None:
        client = Client.connect_url(url, timeout=5, table=table)
        try:
            guarded(client.open, STEP, "opening")

            def flood() -> None:
                for _ in range(200):
                    client.notify(big, blob, timeout=2)

            with pytest.raises(RequestTimeout):  # the server stopped reading
                guarded(flood, 30, "sending until the buffer is full")
        finally:
            guarded(client.close, 15, "closing over a blocked send")

    async def async_case(url: str) -> None:
        client = AsyncClient.connect_url(url, timeout=5, table=table)

        async def flood() -> None:
            for _ in range(200):
                await client.notify(big, blob, timeout=2)

        try:
            await asyncio.wait_for(client.open(), STEP)
            with pytest.raises(RequestTimeout):  # the server stopped reading
                await asyncio.wait_for(flood(), 30)
        finally:
            await asyncio.wait_for(client.aclose(), 15)

    with websockets.sync.server.serve(handler, "127.0.0.1", 0, max_size=None) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"ws://127.0.0.1:{server.socket.getsockname()[1]}/acp"
        try:
            if facade == "sync":
                sync_case(url)
            else:
                asyncio.run(async_case(url))
        finally:
            stop.set()
            server.shutdown()
