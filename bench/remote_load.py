"""The remote server under load: many WebSocket and Streamable HTTP connections at once.

    python bench/remote_load.py                 # 2-4 minutes on 2 cores
    python bench/remote_load.py --quick         # fewer connections and rounds
    python bench/remote_load.py --connections 3000 --http-connections 500 --no-ts

Servers (each a process of its own, on 127.0.0.1, one per transport so that RSS figures do
not mix):

- **ours**: `asgi_app(LoadAgent())` under uvicorn with the options `python -m acp_sdk
  serve` uses (`acp_sdk.remote._serve.uvicorn_options`), an in-process agent written on
  the public API (`LoadAgent` below) shared by every connection.
- **ts**: the TypeScript SDK 2.4.0's experimental server with its node adapter and `ws`
  (`bench/peers/ts_server.mjs`), serving the same agent (the same updates, byte for byte
  in content). Needs the SDK installed by tests/interop/node_setup.py (done here).

The load runs in this process, with raw JSON-RPC clients (`websockets` with no
compression, and `httpx` over HTTP/1.1 for Streamable HTTP). For each server and
transport:

1. open N connections (at most `OPEN_AT_ONCE` handshakes in flight), each with
   `initialize` and `session/new`; *held* is how many succeeded;
2. idle: server RSS (VmRSS in /proc/PID/status) minus its RSS before, per held connection;
3. ours only: a burst of concurrent connection attempts past `max_connections` (set to
   N + the probes + 1); all must be refused (WebSocket: HTTP 503 to the upgrade; HTTP: 503
   to `initialize`), and the held connections must still work (the turns below);
4. `demo`: every connection runs a turn at once (19 updates and a permission question,
   answered "allow"); `stream`: every connection streams `--updates` updates at once.
   Meanwhile `--probes` extra connections each send `session/new` one after the other; a
   round trip is from sending it to reading its answer. Reported: the turns' wall time,
   updates/s over all connections, the p50/p99 round trip over every sample of every
   round, and the server's peak RSS (VmRSS polled every 20 ms) during the phase.

Our server tunes the garbage collector as `serve` does (`acp_sdk.remote._serve.tune_gc`;
`ACP_LOAD_DEFAULT_GC=1` keeps Python's defaults, to compare).

Both processes raise their open-file limit (`RLIMIT_NOFILE`) to the hard limit: each
WebSocket connection is one descriptor on each side; each HTTP connection two to three
(its event streams and a POST). The results (with the machine's load average before and
after) go to `bench/results/remote-load-latest.json` (`--output` to change).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import platform
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
TS_SERVER = ROOT / "bench" / "peers" / "ts_server.mjs"
NODE_DIR = ROOT / "tests" / "interop" / "node"

OPEN_AT_ONCE = 100
"""Connection handshakes in flight at once while opening."""
STEP_TIMEOUT = 120.0
"""Seconds any one phase may take before the run gives up on it."""
START_TIMEOUT = 30.0
ANSWER = "I turned on debug logging in config.json, so the next run prints every request."
DEMO_UPDATES = 19
COMPRESSION: str | None = os.environ.get("ACP_LOAD_COMPRESSION", "deflate") or None
"""What the WebSocket clients offer: permessage-deflate by default, as browsers, the `ws`
package (the TypeScript client) and `websockets` do; the server decides."""


def raise_fd_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to the hard limit; the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if wanted > soft:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# ---------------------------------------------------------------------------- our server


def make_agent() -> Any:
    """The benchmark's agent, on the public API (the twin of ts_server.mjs's agent)."""
    from acp_sdk import Agent, AgentContext
    from acp_sdk.agent import diff
    from acp_sdk.schema import (
        NewSessionRequest,
        NewSessionResponse,
        PermissionOption,
        PromptRequest,
        PromptResponse,
        TextContent,
    )

    options = (
        PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
        PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
    )

    class LoadAgent(Agent):
        def __init__(self) -> None:
            self._sessions = itertools.count(1)
            self._tool_calls = itertools.count(1)

        async def new_session(
            self, params: NewSessionRequest, ctx: AgentContext
        ) -> NewSessionResponse:
            return NewSessionResponse(session_id=f"load-{next(self._sessions)}")

        async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
            text = next((b.text for b in params.prompt if isinstance(b, TextContent)), "")
            command, _, count = text.strip().partition(" ")
            session = ctx.session(params.session_id)
            if command == "demo":
                await session.think("The user wants to see every kind of update.")
                await session.plan(
                    [
                        ("Look at the configuration", "completed", "high"),
                        ("Turn on debug logging", "in_progress"),
                        ("Explain the change", "pending", "low"),
                    ]
                )
                call_id = f"call_{next(self._tool_calls)}"
                async with session.tool_call(
                    "Edit config.json", kind="edit", tool_call_id=call_id
                ) as call:
                    choice = await call.request_permission(options)
                    if choice is None or choice.option_id != "allow":
                        return PromptResponse(stop_reason="cancelled")
                    change = diff("/tmp/config.json", old='{"debug": false}', new='{"debug": true}')
                    await call.update(status="in_progress", content=[change])
                    await call.complete()
                for word in ANSWER.split(" "):
                    await session.say(word + " ")
            elif command == "stream":
                for index in range(int(count or "0")):
                    await session.say(f"chunk {index} ")
            return PromptResponse(stop_reason="end_turn")

    return LoadAgent()


def run_our_server(max_connections: int) -> None:
    """Serve until stdin closes; prints "listening: PORT" once accepting."""
    raise_fd_limit()
    import uvicorn

    from acp_sdk.remote import asgi_app

    try:
        from acp_sdk.remote._serve import uvicorn_options
    except ImportError:  # --baseline: a tree from before serve's options had a name

        def uvicorn_options(max_message_size: int = 64 << 20) -> dict[str, Any]:
            return {"lifespan": "on", "ws": "websockets-sansio", "ws_max_size": max_message_size}

    app = asgi_app(make_agent(), max_connections=max_connections, idle_timeout=3600.0)
    # IPPROTO_TCP, as uvicorn.run(host=..., port=...) binds: asyncio sets TCP_NODELAY only
    # on sockets of that protocol (with proto 0, a response's head and body wait for Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    options = uvicorn_options()
    options["log_level"] = os.environ.get("ACP_LOAD_LOG_LEVEL", "error")
    server = uvicorn.Server(uvicorn.Config(app, **options))

    def watch() -> None:
        while not server.started:
            time.sleep(0.01)
        print(f"listening: {sock.getsockname()[1]}", flush=True)
        sys.stdin.read()
        server.should_exit = True

    threading.Thread(target=watch, daemon=True).start()
    if not os.environ.get("ACP_LOAD_DEFAULT_GC"):
        try:
            from acp_sdk.remote._serve import tune_gc
        except ImportError:  # --baseline: a tree from before serve tuned the collector
            pass
        else:
            tune_gc()  # as `serve` does
    if os.environ.get("ACP_LOAD_TRACEMALLOC"):
        trace_memory()
    asyncio.run(server.serve(sockets=[sock]))


def trace_memory() -> None:
    """Profiling aid: SIGUSR1 takes a baseline snapshot, SIGUSR2 prints what grew since."""
    import signal
    import tracemalloc

    tracemalloc.start(int(os.environ["ACP_LOAD_TRACEMALLOC"]))
    snapshots: list[Any] = []

    def baseline(*_: Any) -> None:
        snapshots[:] = [tracemalloc.take_snapshot()]

    def report(*_: Any) -> None:
        now = tracemalloc.take_snapshot()
        mode = os.environ.get("ACP_LOAD_TRACEMALLOC_BY", "traceback")
        grown = now.compare_to(snapshots[0], mode)
        total = sum(stat.size_diff for stat in grown)
        print(f"grown: {total / 1024:.1f} KiB in all", file=sys.stderr)
        for stat in grown[:40]:
            print(f"{stat.size_diff / 1024:10.1f} KiB {stat.count_diff:8d} blocks", file=sys.stderr)
            for line in stat.traceback.format()[-8:]:
                print("      " + line, file=sys.stderr)
        sys.stderr.flush()

    signal.signal(signal.SIGUSR1, baseline)
    signal.signal(signal.SIGUSR2, report)


# ---------------------------------------------------------------------------- clients


UPDATE = (
    '{"jsonrpc":"2.0","method":"session/update"',
    b'{"jsonrpc":"2.0","method":"session/update"',
)
UPDATE_LENGTH = len(UPDATE[0])


class Peer:
    """One raw JSON-RPC client connection (WebSocket or Streamable HTTP)."""

    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.updates = 0
        self.session_id = ""
        self.tasks: list[asyncio.Task[None]] = []

    async def post(self, message: dict[str, Any], session: bool) -> None:
        raise NotImplementedError

    async def request(self, method: str, params: dict[str, Any], session: bool = False) -> Any:
        request_id = next(self.ids)
        waiter = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = waiter
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.post(message, session)
        answer = await waiter
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    async def received(self, raw: bytes | str) -> None:
        if raw[:UPDATE_LENGTH] in UPDATE:  # most messages: counted, not parsed
            self.updates += 1
            return
        message = orjson.loads(raw)
        method = message.get("method")
        if method is None:
            waiter = self.waiting.pop(message.get("id"), None)
            if waiter is not None and not waiter.done():
                waiter.set_result(message)
        elif method == "session/update":
            self.updates += 1
        elif "id" in message:  # session/request_permission: allow
            outcome = {"outcome": "selected", "optionId": "allow"}
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}}
            await self.post(answer, True)

    def lost(self, why: BaseException | str) -> None:
        for waiter in self.waiting.values():
            if not waiter.done():
                waiter.set_exception(ConnectionError(str(why)))
        self.waiting.clear()

    async def start(self) -> None:
        await self.request(
            "initialize", {"protocolVersion": 1, "clientCapabilities": {}}, session=False
        )
        result = await self.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        self.session_id = result["sessionId"]
        await self.opened_session()

    async def opened_session(self) -> None:
        pass

    async def prompt(self, text: str) -> str:
        params = {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]}
        result = await self.request("session/prompt", params, session=True)
        return str(result["stopReason"])

    async def aclose(self) -> None:
        for task in self.tasks:
            task.cancel()


class WsPeer(Peer):
    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self.ws: Any = None

    async def open(self) -> None:
        from websockets.asyncio.client import connect

        self.ws = await connect(
            self.url,
            compression=COMPRESSION,
            ping_interval=None,
            max_size=1 << 26,
            open_timeout=60,
        )
        self.tasks.append(asyncio.get_running_loop().create_task(self.read()))
        await self.start()

    async def read(self) -> None:
        try:
            async for raw in self.ws:
                await self.received(raw)
            self.lost("closed")
        except Exception as error:
            self.lost(error)

    async def post(self, message: dict[str, Any], session: bool) -> None:
        await self.ws.send(orjson.dumps(message).decode())

    async def aclose(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 5)
        await super().aclose()


class _Http1:
    """One HTTP/1.1 connection (h11 over asyncio streams): the least a client can do."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.h11: Any = None
        self.lock = asyncio.Lock()

    async def connect(self) -> None:
        import h11

        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.h11 = h11.Connection(h11.CLIENT)

    async def next_event(self) -> Any:
        import h11

        assert self.reader is not None
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.h11.receive_data(await self.reader.read(1 << 16))

    async def start(self, method: str, headers: dict[str, str], body: bytes) -> Any:
        """Send a request; its response head (an h11.Response)."""
        import h11

        if self.writer is None or self.h11.our_state is not h11.IDLE:
            if self.writer is not None:
                self.writer.close()
            await self.connect()
        assert self.writer is not None
        head = [("host", f"127.0.0.1:{self.port}"), *headers.items()]
        if body:
            head.append(("content-length", str(len(body))))
        out = self.h11.send(h11.Request(method=method, target="/acp", headers=head))
        if body:
            out += self.h11.send(h11.Data(data=body))
        out += self.h11.send(h11.EndOfMessage())
        self.writer.write(out)
        while True:
            event = await self.next_event()
            if isinstance(event, h11.Response):
                return event
            if isinstance(event, h11.ConnectionClosed):
                raise ConnectionError("closed")

    async def body(self) -> bytes:
        import h11

        chunks = []
        while not isinstance(
            event := await self.next_event(), (h11.EndOfMessage, h11.ConnectionClosed)
        ):
            chunks.append(bytes(event.data))
        self.h11.start_next_cycle() if self.h11.our_state is h11.DONE else None
        return b"".join(chunks)

    async def request(
        self, method: str, headers: dict[str, str], body: bytes = b""
    ) -> tuple[int, dict[str, str], bytes]:
        async with self.lock:
            response = await self.start(method, headers, body)
            data = await self.body()
        names = {k.decode().lower(): v.decode() for k, v in response.headers}
        return response.status_code, names, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


class HttpPeer(Peer):
    """A Streamable HTTP client: a kept-alive connection for POSTs, one per event stream."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port
        self.posts = _Http1(port)
        self.streams: list[_Http1] = []
        self.connection_id = ""

    def headers(self, session: bool) -> dict[str, str]:
        headers = {"content-type": "application/json", "acp-connection-id": self.connection_id}
        if session:
            headers["acp-session-id"] = self.session_id
        return headers

    async def open(self) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        }
        status, headers, _ = await self.posts.request(
            "POST", {"content-type": "application/json"}, orjson.dumps(body)
        )
        if status != 200:
            raise ConnectionRefusedError(f"initialize: HTTP {status}")
        self.connection_id = headers["acp-connection-id"]
        await self.open_stream(None)
        result = await self.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        self.session_id = result["sessionId"]
        await self.open_stream(self.session_id)

    async def open_stream(self, session_id: str | None) -> None:
        headers = {"accept": "text/event-stream", "acp-connection-id": self.connection_id}
        if session_id is not None:
            headers["acp-session-id"] = session_id
        stream = _Http1(self.port)
        self.streams.append(stream)
        response = await stream.start("GET", headers, b"")
        if response.status_code != 200:
            raise ConnectionError(f"GET: HTTP {response.status_code}")
        self.tasks.append(asyncio.get_running_loop().create_task(self.stream(stream)))

    async def stream(self, stream: _Http1) -> None:
        import h11

        pending = b""
        try:
            while True:
                event = await stream.next_event()
                if not isinstance(event, h11.Data):
                    break
                pending += bytes(event.data)
                *events, pending = pending.split(b"\n\n")
                for text in events:
                    for line in text.split(b"\n"):
                        if line.startswith(b"data:"):
                            await self.received(line[5:])
            self.lost("stream ended")
        except Exception as error:
            self.lost(error)

    async def post(self, message: dict[str, Any], session: bool) -> None:
        status, _, _ = await self.posts.request(
            "POST", self.headers(session), orjson.dumps(message)
        )
        if status not in (200, 202):
            raise ConnectionError(f"POST {message.get('method')}: HTTP {status}")

    async def aclose(self) -> None:
        if self.connection_id:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    self.posts.request("DELETE", {"acp-connection-id": self.connection_id}), 5
                )
        await super().aclose()
        for connection in (self.posts, *self.streams):
            connection.close()


# ---------------------------------------------------------------------------- measuring


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


class PeakRss:
    """Polls a process's RSS every 20 ms while in use; `peak` in kB."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0

    async def poll(self) -> None:
        while True:
            self.peak = max(self.peak, rss_kb(self.pid))
            await asyncio.sleep(0.02)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def bounded(awaitable: Awaitable[Any], what: str, timeout: float = STEP_TIMEOUT) -> Any:
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except asyncio.TimeoutError:
        raise RuntimeError(f"{what} took over {timeout:g} s") from None


async def open_all(new_peer: Callable[[], Peer], count: int) -> tuple[list[Peer], list[str]]:
    gate = asyncio.Semaphore(OPEN_AT_ONCE)
    peers: list[Peer] = []
    errors: list[str] = []

    async def one() -> None:
        peer = new_peer()
        async with gate:
            try:
                await asyncio.wait_for(peer.open(), 60)  # type: ignore[attr-defined]
            except Exception as error:
                errors.append(repr(error)[:200])
                await peer.aclose()
                return
        peers.append(peer)

    await bounded(asyncio.gather(*(one() for _ in range(count))), f"opening {count}")
    return peers, errors


async def burst(new_peer: Callable[[], Peer], count: int) -> dict[str, Any]:
    """`count` connection attempts at once, past the cap: how many got in."""
    outcomes: dict[str, int] = {}
    admitted: list[Peer] = []

    async def one() -> None:
        peer = new_peer()
        try:
            await asyncio.wait_for(peer.open(), 60)  # type: ignore[attr-defined]
        except Exception as error:
            text = str(error)
            key = "refused 503" if "503" in text else f"failed: {type(error).__name__} {text[:80]}"
            outcomes[key] = outcomes.get(key, 0) + 1
            await peer.aclose()
            return
        admitted.append(peer)

    await bounded(asyncio.gather(*(one() for _ in range(count))), "the burst")
    for peer in admitted:
        await peer.aclose()
    return {"attempts": count, "admitted": len(admitted), "outcomes": outcomes}


class Probes:
    """The probe connections, in a process of their own (so that what they measure is the
    server's answer, not this process's backlog of the others' messages): on "go" each
    sends `session/new` one after the other until "stop"; then the round trips, in ms."""

    def __init__(self, transport: str, port: int, count: int) -> None:
        argv = [sys.executable, __file__, "--probe", transport, "--port", str(port)]
        argv += ["--probes", str(count)]
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            preexec_fn=raise_fd_limit,
        )

    async def line(self, what: str) -> str:
        assert self.process.stdout is not None
        line = await bounded(asyncio.to_thread(self.process.stdout.readline), what, 90)
        if not line:
            raise RuntimeError(f"the probe process ended ({what})")
        return str(line)

    def say(self, word: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(word + "\n")
        self.process.stdin.flush()

    async def ready(self) -> None:
        line = await self.line("the probes connecting")
        if line.strip() != "ready":
            raise RuntimeError(f"the probes failed: {line.strip()}")

    async def samples(self) -> list[float]:
        self.say("stop")
        return list(json.loads(await self.line("the probes' samples")))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.say("quit")
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


async def probe(peer: Peer, stopped: asyncio.Future[Any], samples: list[float]) -> None:
    """`session/new` after `session/new` until `stopped`; each round trip in ms."""
    while not stopped.done():
        sent = time.perf_counter()
        await peer.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        if not stopped.done():  # taken while the others ran their turns
            samples.append(1000 * (time.perf_counter() - sent))


def run_probes(transport: str, port: int, count: int) -> None:
    raise_fd_limit()

    async def main() -> None:
        url = f"{'ws' if transport == 'ws' else 'http'}://127.0.0.1:{port}/acp"
        try:
            peers, errors = await open_all(
                lambda: WsPeer(url) if transport == "ws" else HttpPeer(port), count
            )
            if errors:
                raise RuntimeError(errors[0])
        except Exception as error:
            print(f"error: {error!r}", flush=True)
            return
        print("ready", flush=True)
        while (await asyncio.to_thread(sys.stdin.readline)).strip() == "go":
            samples: list[float] = []
            stopped = asyncio.get_running_loop().create_task(asyncio.to_thread(sys.stdin.readline))
            probing = [probe(p, stopped, samples) for p in peers]
            await bounded(asyncio.gather(*probing), "probing")
            print(json.dumps(samples), flush=True)
            if stopped.result().strip() != "stop":
                break
        for peer in peers:
            await peer.aclose()

    asyncio.run(main())


async def phase(
    peers: list[Peer], probes: Probes, prompt: str, rounds: int, pid: int
) -> dict[str, Any]:
    """Every peer runs `prompt` at once, `rounds` times; probes time session/new meanwhile."""
    samples: list[float] = []
    seconds: list[float] = []
    rates: list[float] = []
    server_busy: list[float] = []  # CPU seconds per second of the phase
    server_cpu: list[float] = []  # CPU microseconds per update received
    load_busy: list[float] = []
    failed = 0
    peak = PeakRss(pid)
    poller = asyncio.get_running_loop().create_task(peak.poll())
    try:
        for _ in range(rounds):
            before = sum(p.updates for p in peers)
            probes.say("go")
            cpu = cpu_seconds(pid), time.process_time()
            started = time.perf_counter()
            turns = asyncio.gather(*(p.prompt(prompt) for p in peers), return_exceptions=True)
            results = await bounded(turns, f"{len(peers)} turns of {prompt!r}")
            elapsed = time.perf_counter() - started
            server_busy.append((cpu_seconds(pid) - cpu[0]) / elapsed)
            received = sum(p.updates for p in peers) - before
            server_cpu.append(1e6 * (cpu_seconds(pid) - cpu[0]) / max(1, received))
            load_busy.append((time.process_time() - cpu[1]) / elapsed)
            samples += await probes.samples()
            failed += sum(1 for r in results if r != "end_turn")
            seconds.append(elapsed)
            rates.append((sum(p.updates for p in peers) - before) / elapsed)
            await asyncio.sleep(0.5)  # let the server settle between rounds
    finally:
        poller.cancel()
    return {
        "prompt": prompt,
        "rounds": rounds,
        "turns_failed": failed,
        "turn_seconds_median": statistics.median(seconds),
        "updates_per_s_median": statistics.median(rates),
        "updates_per_s_all": [round(r) for r in rates],
        "round_trip_samples": len(samples),
        "round_trip_ms_p50": quantile(samples, 0.5) if samples else None,
        "round_trip_ms_p99": quantile(samples, 0.99) if samples else None,
        "round_trip_ms_max": max(samples) if samples else None,
        "peak_rss_mb": peak.peak / 1024,
        "server_cpu_busy": statistics.median(server_busy),
        "server_cpu_us_per_update": statistics.median(server_cpu),
        "load_process_cpu_busy": statistics.median(load_busy),
    }


async def load(
    server: str, transport: str, port: int, pid: int, count: int, args: argparse.Namespace
) -> dict[str, Any]:
    url = f"{'ws' if transport == 'ws' else 'http'}://127.0.0.1:{port}/acp"

    def new_peer() -> Peer:
        return WsPeer(url) if transport == "ws" else HttpPeer(port)

    result: dict[str, Any] = {"server": server, "transport": transport, "connections": count}
    # Warm up: the first connection and turn build the codec, the models and so on.
    warm, errors = await open_all(new_peer, 1)
    if errors:
        raise RuntimeError(f"the warm-up connection failed: {errors[0]}")
    await bounded(warm[0].prompt("demo"), "the warm-up turn")
    probes = Probes(transport, port, args.probes)
    try:
        await probes.ready()
        await asyncio.sleep(0.5)
        baseline = rss_kb(pid)
        started = time.perf_counter()
        peers, errors = await open_all(new_peer, count)
        result["open_seconds"] = time.perf_counter() - started
        result["held"] = len(peers)
        result["open_errors"] = sorted(set(errors))[:5]
        result["open_error_count"] = len(errors)
        await asyncio.sleep(1.0)
        idle = rss_kb(pid)
        result["rss_baseline_mb"] = baseline / 1024
        result["rss_idle_mb"] = idle / 1024
        result["rss_per_idle_connection_kb"] = (idle - baseline) / max(1, len(peers))
        if server != "ts" and args.burst:
            result["over_the_cap"] = await burst(new_peer, args.burst)
        result["demo"] = await phase(peers, probes, "demo", args.rounds, pid)
        result["stream"] = await phase(
            peers, probes, f"stream {args.updates}", max(1, args.rounds // 2), pid
        )
        result["peak_rss_mb"] = rss_kb(pid, "VmHWM") / 1024
        await bounded(asyncio.gather(*(p.aclose() for p in [*peers, *warm])), "closing", 60)
    finally:
        probes.close()
    return result


# ---------------------------------------------------------------------------- orchestration


def start_server(
    server: str, max_connections: int, baseline: Path | None = None
) -> subprocess.Popen[str]:
    if server in ("ours", "base"):
        argv = [sys.executable, __file__, "--serve", "--max-connections", str(max_connections)]
        tree = baseline if server == "base" and baseline is not None else ROOT
        env = {**os.environ, "PYTHONPATH": str(tree)}
    else:
        sys.path.insert(0, str(ROOT))
        from tests.interop.node_setup import ensure_installed

        argv = [ensure_installed(NODE_DIR), str(TS_SERVER)]
        env = {**os.environ, "ACP_NODE_DIR": str(NODE_DIR)}

    def raise_child_limit() -> None:
        raise_fd_limit()

    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=raise_child_limit,
    )


def listening_port(process: subprocess.Popen[str]) -> int:
    assert process.stdout is not None
    found: list[int] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("listening: "):
                found.append(int(line.split()[1]))
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(START_TIMEOUT)
    if not found:
        process.kill()
        raise RuntimeError("the server did not start")
    return found[0]


def stop_server(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    with contextlib.suppress(OSError):
        process.stdin.close()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def measure(server: str, transport: str, count: int, args: argparse.Namespace) -> dict[str, Any]:
    process = start_server(server, count + args.probes + 1, args.baseline)
    try:
        port = listening_port(process)
        started = time.perf_counter()
        result = asyncio.run(load(server, transport, port, process.pid, count, args))
        result["seconds"] = time.perf_counter() - started
        return result
    except Exception as error:
        return {
            "server": server,
            "transport": transport,
            "connections": count,
            "error": repr(error),
        }
    finally:
        stop_server(process)


def show(result: dict[str, Any]) -> None:
    head = f"{result['server']:>4} {result['transport']:>4} x{result['connections']}"
    if "error" in result:
        print(f"{head}: FAILED {result['error']}", flush=True)
        return
    print(
        f"{head}: held {result['held']}, {result['rss_per_idle_connection_kb']:.1f} KB per idle "
        f"connection (RSS {result['rss_baseline_mb']:.0f} -> {result['rss_idle_mb']:.0f} MB), "
        f"peak RSS {result['peak_rss_mb']:.0f} MB",
        flush=True,
    )
    if "over_the_cap" in result:
        cap = result["over_the_cap"]
        print(
            f"      over the cap: {cap['admitted']} of {cap['attempts']} admitted {cap['outcomes']}"
        )
    for name in ("demo", "stream"):
        p = result[name]
        rtt = (
            f"round trip p50 {p['round_trip_ms_p50']:.1f} ms, p99 {p['round_trip_ms_p99']:.1f} ms "
            f"({p['round_trip_samples']} samples)"
            if p["round_trip_samples"]
            else "no round-trip sample"
        )
        print(
            f"      {p['prompt']}: {p['turn_seconds_median']:.2f} s, "
            f"{p['updates_per_s_median']:,.0f} updates/s, {rtt}, "
            f"peak RSS {p['peak_rss_mb']:.0f} MB, "
            f"server CPU {p['server_cpu_us_per_update']:.0f} us per update (busy "
            f"{p['server_cpu_busy']:.0%}; the load process {p['load_process_cpu_busy']:.0%})"
            + (f", {p['turns_failed']} turns FAILED" if p["turns_failed"] else ""),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=1000, help="WebSocket connections")
    parser.add_argument("--http-connections", type=int, default=200)
    parser.add_argument("--updates", type=int, default=100, help="updates per streaming turn")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the demo phase")
    parser.add_argument("--probes", type=int, default=4, help="round-trip probe connections")
    parser.add_argument("--burst", type=int, default=100, help="attempts past the cap (0: none)")
    parser.add_argument(
        "--quick", action="store_true", help="a quarter of the connections, 2 rounds"
    )
    parser.add_argument("--no-ts", action="store_true", help="skip the TypeScript server")
    parser.add_argument("--only", choices=["ws", "http"], help="one transport only")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="also serve from this source tree (another checkout's root), as server 'base'",
    )
    parser.add_argument("--output", type=Path, default=RESULTS / "remote-load-latest.json")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--max-connections", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--probe", choices=["ws", "http"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        run_probes(args.probe, args.port, args.probes)
        return
    if args.serve:
        run_our_server(args.max_connections)
        return
    if args.quick:
        args.connections = max(1, args.connections // 4)
        args.http_connections = max(1, args.http_connections // 4)
        args.rounds = 2
    limit = raise_fd_limit()
    servers = ["ours"] if args.no_ts else ["ours", "ts"]
    if args.baseline is not None:
        servers.insert(0, "base")
    transports = [args.only] if args.only else ["ws", "http"]
    print(
        f"open-file limit {limit}; {args.connections} WebSocket and {args.http_connections} "
        f"HTTP connections; load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    load_before = os.getloadavg()
    results = []
    for transport in transports:
        count = args.connections if transport == "ws" else args.http_connections
        for server in servers:
            result = measure(server, transport, count, args)
            show(result)
            results.append(result)
    record = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "platform": platform.platform(),
            "cores": os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
        },
        "python": sys.version.split()[0],
        "open_file_limit": limit,
        "options": {k: str(v) for k, v in vars(args).items() if k not in ("serve",)},
        "results": results,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=1) + "\n")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
