"""Scale-out: HAProxy (examples/haproxy.cfg, rendered with free ports) in front of two
`python -m acp_sdk serve` processes, with clients of both transports on both facades.

Checks: every turn completes; both servers get connections of each transport; every
request of a Streamable HTTP connection reaches the server that answered its
`initialize`; SIGKILL of one server fails exactly its connections, with
`ConnectionClosed`, while the other server's turns go on to the end; a client of the dead
server reconnects (`reconnect` / `areconnect`: a new connection, `session/load`) and goes
on behind the live server, its history replayed from the session store both servers'
agents share (tests/remote/haproxy_agent.py).

HAProxy is a system program: without it the test skips, and fails under CI (.ci/run
installs it and sets ACP_SDK_CI; tests/_programs.py).
Every process is started in its own process group and killed at the end, whatever
happened; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from acp_sdk import AsyncClient, Client, ConnectionClosed
from acp_sdk.agent import SqliteSessionStore
from acp_sdk.client import areconnect, reconnect
from acp_sdk.schema import AgentMessageChunk, PromptResponse, SessionNotification, TextContent
from tests._parallel import free_port
from tests._programs import program
from tests.client.facades import AsyncFacade, Facade, SyncFacade, alive, guarded, wait_gone

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).parents[2]
TEMPLATE = ROOT / "examples" / "haproxy.cfg"
AGENT = Path(__file__).with_name("haproxy_agent.py")
SERVERS = ("serve1", "serve2")  # the server names in the template (and $ACP_TEST_BACKEND)
SCHEMES = ("ws", "http")
FACADES = ("sync", "async")
PER_KIND = 3  # clients per (transport, facade): 12 in all
STEP = 30.0  # the bound on any one step (opening a client, a turn, a reconnect)
START = 20.0  # the bound on a process starting to listen


def haproxy_binary() -> str:
    # Debian installs it in /usr/sbin, which is not on every user's PATH.
    return program(
        "haproxy",
        "`apt-get install haproxy` (.ci/run installs it when it is missing)",
        also_in=["/usr/sbin", "/usr/local/sbin"],
    )


def render(template: str, ports: dict[str, int]) -> str:
    """The template listening on `ports["front"]`, its servers on theirs; fails loudly if
    the template no longer has the lines this test expects."""
    bind, bound = re.subn(
        r"^(\s*bind\s+)127\.0\.0\.1:\d+", rf"\g<1>127.0.0.1:{ports['front']}", template, flags=re.M
    )
    assert bound == 1, f"{TEMPLATE}: {bound} bind lines, expected 1"
    rendered, servers = re.subn(
        r"^(\s*server\s+(\S+)\s+)127\.0\.0\.1:\d+",
        lambda m: f"{m[1]}127.0.0.1:{ports[m[2]]}",
        bind,
        flags=re.M,
    )
    assert servers == 2 * len(SERVERS), f"{TEMPLATE}: {servers} server lines, expected 4"
    return rendered


def tail(path: Path, size: int = 4000) -> str:
    with contextlib.suppress(OSError):
        return path.read_text(errors="replace")[-size:]
    return ""


@dataclass
class Processes:
    """Every process the test started, each the leader of its own group, with its
    output in a file; `stop_all` kills whatever is left (agents included)."""

    tmp: Path
    running: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, name: str, argv: Sequence[str], env: dict[str, str] | None = None) -> None:
        with (self.tmp / f"{name}.log").open("wb") as out:
            self.running[name] = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )

    def log(self, name: str) -> Path:
        return self.tmp / f"{name}.log"

    def wait_listening(self, name: str, port: int) -> None:
        deadline = time.monotonic() + START
        process = self.running[name]
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"{name} did not start listening on {port} "
                        f"(exit status {process.poll()}):\n{tail(self.log(name))}"
                    ) from None
                time.sleep(0.05)

    def kill(self, name: str, sig: signal.Signals = signal.SIGKILL) -> None:
        process = self.running[name]
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
        process.wait(10)

    def stop_all(self, agent_pids: Path) -> None:
        for name, process in self.running.items():
            if process.poll() is None:
                # serve stops its agents on SIGINT; anything slow is killed below
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGINT if name in SERVERS else signal.SIGTERM)
        for process in self.running.values():
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(5)
        # Agents run in groups of their own (serve starts them so), and the dead server's
        # were orphaned: each wrote its pid.
        for entry in agent_pids.iterdir():
            pid = int(entry.name)
            with contextlib.suppress(OSError):
                if str(AGENT).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    os.kill(pid, signal.SIGKILL)


@dataclass
class Cluster:
    address: str  # HAProxy's "127.0.0.1:PORT"
    processes: Processes
    store: Path
    agent_pids: Path
    stop: Path  # created to end the agents' `until` turns

    def url(self, scheme: str) -> str:
        return f"{scheme}://{self.address}/acp"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    haproxy = haproxy_binary()
    processes = Processes(tmp_path)
    agent_pids = tmp_path / "agents"
    agent_pids.mkdir()
    store = tmp_path / "sessions.db"
    ports = {name: free_port() for name in ("front", *SERVERS)}
    try:
        for name in SERVERS:
            env = {**os.environ, "ACP_TEST_BACKEND": name}
            serve = [sys.executable, "-m", "acp_sdk", "serve", "--port", str(ports[name])]
            serve += ["--max-connections", "64", "--"]
            processes.start(
                name, [*serve, sys.executable, str(AGENT), str(store), str(agent_pids)], env
            )
        config = tmp_path / "haproxy.cfg"
        config.write_text(render(TEMPLATE.read_text(), ports))
        check = subprocess.run(
            [haproxy, "-c", "-f", str(config)], capture_output=True, timeout=30, check=False
        )
        assert check.returncode == 0, check.stdout + check.stderr
        # Servers first: a server whose first health check fails starts out down.
        for name in SERVERS:
            processes.wait_listening(name, ports[name])
        processes.start("haproxy", [haproxy, "-db", "-f", str(config)])
        processes.wait_listening("haproxy", ports["front"])
        yield Cluster(
            f"127.0.0.1:{ports['front']}", processes, store, agent_pids, tmp_path / "stop"
        )
    finally:
        processes.stop_all(agent_pids)
        for name in processes.running:  # shown by pytest when the test failed
            print(f"---- {name} (last lines)\n{tail(processes.log(name))}")


# ---------------------------------------------------------------------- clients


def texts(updates: Sequence[Any]) -> list[str]:
    return [
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    ]


def server_of(updates: Sequence[Any]) -> str:
    """The one server whose agent sent these updates."""
    names = {text.split()[0] for text in texts(updates)}
    assert len(names) == 1, names
    return names.pop()


def connected(facade: str, url: str) -> Facade:
    """A facade over a client of `url` (not open yet)."""
    if facade == "sync":
        sync = SyncFacade()
        sync.client = Client.connect_url(url, timeout=10)
        return sync
    on_loop = AsyncFacade()
    on_loop.client = AsyncClient.connect_url(url, timeout=10)
    return on_loop


@dataclass
class Turn:
    """A turn consumed on a thread: its updates as they come, then how it ended."""

    updates: list[Any] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    response: PromptResponse | None = None
    thread: threading.Thread | None = None

    def consume(self, driver: Facade, turn: Any) -> None:
        def sync() -> None:
            for update in turn:
                self.updates.append(update)
                self.started.set()
            self.response = turn.response

        async def on_loop() -> None:
            async for update in turn:
                self.updates.append(update)
                self.started.set()
            self.response = turn.response

        def run() -> None:
            try:
                if isinstance(driver, AsyncFacade):
                    coroutine = on_loop()
                    asyncio.run_coroutine_threadsafe(coroutine, driver._loop).result(STEP * 3)
                else:
                    sync()
            except BaseException as error:  # the outcome under test
                self.error = error
            finally:
                self.started.set()

        self.thread = threading.Thread(target=run, name="turn", daemon=True)
        self.thread.start()

    def join(self, timeout: float, what: str) -> None:
        assert self.thread is not None
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"{what} still running after {timeout:g} s"


@dataclass
class Peer:
    scheme: str
    facade: str
    driver: Facade
    session: Any = None
    server: str = ""
    history: list[str] = field(default_factory=list)  # what this client saw, in order
    turn: Turn = field(default_factory=Turn)


def in_parallel(steps: Sequence[Callable[[], None]], timeout: float, what: str) -> None:
    """Run `steps` on daemon threads at once; the first error, or a failure naming the
    ones still running after `timeout`."""
    errors: list[BaseException] = []

    def wrap(step: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                step()
            except BaseException as error:  # re-raised on the test's thread
                errors.append(error)

        return run

    threads = [threading.Thread(target=wrap(s), daemon=True) for s in steps]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    if errors:
        raise errors[0]
    hung = sum(thread.is_alive() for thread in threads)
    assert not hung, f"{hung} of {len(threads)} {what} still running after {timeout:g} s"


def sticky_routes(log: str) -> dict[str, set[str]]:
    """From HAProxy's log: the servers that got requests of each HTTP connection id."""
    routes: dict[str, set[str]] = {}
    for match in re.finditer(r" acp_http/(\S+) .*?\{([^}]*)\}", log):
        server, connection_id = match.groups()
        if connection_id:
            routes.setdefault(connection_id, set()).add(server)
    return routes


async def stored_updates(path: Path, session_id: str) -> list[tuple[int, Any]]:
    store = SqliteSessionStore(path)
    try:
        return await store.read(session_id, 0, 1_000_000)
    finally:
        await store.aclose()


def agents_of(server: str, agent_pids: Path) -> list[int]:
    """The live agent processes `server` started (their environment names it)."""
    found = []
    for entry in agent_pids.iterdir():
        with contextlib.suppress(OSError):
            environ = Path(f"/proc/{entry.name}/environ").read_bytes().split(b"\0")
            if f"ACP_TEST_BACKEND={server}".encode() in environ:
                found.append(int(entry.name))
    return [pid for pid in found if alive(pid)]


def close_all(drivers: list[Facade], which: Sequence[Facade] | None = None) -> None:
    """Close `which` (all by default) and take them off `drivers`: each is closed once
    (closing an `AsyncFacade` twice leaves a coroutine for its stopped loop)."""
    for driver in list(drivers if which is None else which):
        if driver not in drivers:
            continue
        drivers.remove(driver)
        with contextlib.suppress(Exception):
            guarded(partial(driver.__exit__, None, None, None), 15, "closing a client")


# ---------------------------------------------------------------------- the test


def test_two_serve_processes_behind_haproxy(cluster: Cluster) -> None:
    peers = [
        Peer(scheme, facade, connected(facade, cluster.url(scheme)))
        for scheme in SCHEMES
        for facade in FACADES
        for _ in range(PER_KIND)
    ]
    drivers: list[Facade] = [peer.driver for peer in peers]
    try:
        # 1. Every client opens, starts a session and runs a turn through HAProxy.
        def first_turn(peer: Peer) -> Callable[[], None]:
            def run() -> None:
                guarded(peer.driver.__enter__, STEP, "opening a client")
                peer.session = guarded(peer.driver.new_session, STEP, "session/new")
                updates, response = guarded(
                    lambda: peer.driver.prompt(peer.session, "stream 3"), STEP, "a turn"
                )
                assert response.stop_reason == "end_turn"
                peer.server = server_of(updates)
                peer.history += texts(updates)
                assert len(peer.history) == 3

            return run

        in_parallel([first_turn(p) for p in peers], STEP * 3, "clients opening")
        for scheme in SCHEMES:
            used = {peer.server for peer in peers if peer.scheme == scheme}
            assert used == set(SERVERS), f"{scheme} connections all went to {used}"

        # 2. Every client starts a long turn; once all stream, one server is killed.
        for peer in peers:
            turn = peer.driver.start(peer.session, f"until {cluster.stop}")
            peer.turn.consume(peer.driver, turn)
        for peer in peers:
            assert peer.turn.started.wait(STEP), "a turn sent nothing"
            assert peer.turn.error is None, repr(peer.turn.error)
        # Each request of an HTTP connection went to the server that answered its
        # initialize (the stick table learnt the id from that answer).
        routes = sticky_routes(cluster.processes.log("haproxy").read_text())
        http_peers = sum(peer.scheme == "http" for peer in peers)
        assert len(routes) >= http_peers, routes
        assert all(len(servers) == 1 for servers in routes.values()), routes

        dead, live = SERVERS
        cluster.processes.kill(dead)
        received_at_kill = {id(peer): len(peer.turn.updates) for peer in peers}
        victims = [peer for peer in peers if peer.server == dead]
        survivors = [peer for peer in peers if peer.server == live]
        for peer in victims:
            peer.turn.join(STEP, f"a {peer.scheme} turn on the killed server")
            assert isinstance(peer.turn.error, ConnectionClosed), repr(peer.turn.error)
            peer.history += texts(peer.turn.updates)
        # The live server's turns are still streaming; they end when told to.
        assert all(peer.turn.thread and peer.turn.thread.is_alive() for peer in survivors)
        cluster.stop.touch()
        for peer in survivors:
            peer.turn.join(STEP, "a turn on the live server")
            assert peer.turn.error is None, repr(peer.turn.error)
            assert peer.turn.response is not None
            assert peer.turn.response.stop_reason == "end_turn"
            assert server_of(peer.turn.updates) == live
            assert len(peer.turn.updates) > received_at_kill[id(peer)]  # went on after
        close_all(drivers, [peer.driver for peer in victims])
        # The dead server's agents saw their stdin close and exited (none is left
        # writing the sessions the next step loads).
        orphans = agents_of(dead, cluster.agent_pids)
        assert not wait_gone(orphans, STEP), "agents of the killed server still run"

        # 3. The dead server's sessions are reconnected through HAProxy, on every
        # transport and facade, and go on behind the live server.
        kinds = [(scheme, facade) for scheme in SCHEMES for facade in FACADES]
        jobs = [
            (kinds[i % len(kinds)], victims[i % len(victims)])
            for i in range(max(len(kinds), len(victims)))
        ]
        for wave in range(0, len(jobs), len(victims)):  # a session is never loaded twice at once
            steps = [
                resume(cluster, kind, peer, live, drivers)
                for kind, peer in jobs[wave : wave + len(victims)]
            ]
            in_parallel(steps, STEP * 3, "reconnects")
    finally:
        close_all(drivers)


def resume(
    cluster: Cluster, kind: tuple[str, str], peer: Peer, live: str, drivers: list[Facade]
) -> Callable[[], None]:
    scheme, facade = kind
    url = cluster.url(scheme)
    stored = len(asyncio.run(stored_updates(cluster.store, peer.session.session_id)))
    replayed: list[SessionNotification] = []

    def run() -> None:
        driver: Facade
        session: Any
        if facade == "sync":
            driver = sync = SyncFacade()
            drivers.append(driver)
            sync.client, session = guarded(
                lambda: reconnect(
                    lambda: Client.connect_url(url, on_update=replayed.append, timeout=10),
                    peer.session.session_id,
                    "/tmp",
                ),
                STEP,
                "reconnect",
            )
        else:
            driver = on_loop = AsyncFacade()
            drivers.append(driver)

            def make() -> AsyncClient:
                return AsyncClient.connect_url(url, on_update=replayed.append, timeout=10)

            on_loop.client, session = on_loop.run(
                lambda: areconnect(make, peer.session.session_id, "/tmp")
            )
        # The replay: over WebSocket it came before the answer; over HTTP it comes on the
        # session's stream, opened after the answer, so wait for all of it (what the
        # store holds for the session) before the next turn, or the turn would see its
        # tail.
        deadline = time.monotonic() + STEP
        while len(replayed) < stored:
            assert time.monotonic() < deadline, f"{len(replayed)} of {stored} replayed"
            time.sleep(0.02)
        again = texts([n.update for n in replayed])
        assert again[: len(peer.history)] == peer.history, (again, peer.history)
        updates, response = guarded(lambda: driver.prompt(session, "stream 3"), STEP, "a turn")
        assert response.stop_reason == "end_turn"
        assert texts(updates) == [f"{live} {i}\n" for i in range(3)]
        assert len(replayed) == stored  # nothing else came outside the turn

    return run
