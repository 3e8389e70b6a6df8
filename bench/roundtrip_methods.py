"""Round trips of several methods against an agent written only with the public API.

    python bench/roundtrip_methods.py              # 3 interleaved rounds
    python bench/roundtrip_methods.py --rounds 5 --calls 3000 --pairs floor,raw-ours

After one `initialize` and one `session/new`, each pair times `--calls` round trips
(after `--warmup` untimed ones) of each method, one method after the other:
`authenticate`, `session/set_mode`, `session/new` and a minimal prompt turn
(`session/prompt`, no update, `end_turn`). A round trip is timed from the call (or the
first byte written) to its answer, decoded. Reported per pair and method: the median
over the rounds of each round's median and p99, and the ratio of the median to the
floor's median in the same round (the median of those ratios over the rounds).

Pairs (client <- agent), every agent a subprocess over stdio pipes:

- `floor`: a raw client (blocking pipe writes, `readline`, orjson) <- a raw agent that
  does the least: read a line, `orjson.loads` it, `orjson.dumps` the answer, write it
  (`--agent floor` of this script). What a pair of Python processes pays at least.
- `raw-asyncio`: the raw client <- `bench/peers/floor_agent.py` (asyncio pipes, orjson):
  what an asyncio agent pays at least.
- `asyncio-floor`: a raw asyncio client (pipes, orjson) <- that asyncio agent: the floor
  pair of an asyncio client (`bench/streaming.py`'s round-trip floor).
- `raw-ours`: the raw client <- our agent (`--agent ours`: `acp_sdk.Agent` subclass +
  `run_agent`, nothing else): the agent side alone.
- `async-ours` / `sync-ours`: `AsyncClient` / `Client` <- our agent.
- `raw-incumbent`, `incumbent`: the raw client / the incumbent's client
  (`agent-client-protocol`) <- an agent written on the incumbent's public API
  (`--agent incumbent`).
- with `--base CHECKOUT`: `raw-base`, `async-base`, `sync-base` run our agent imported
  from that checkout (the client stays this one): before/after in one run.

`--instructions` (needs valgrind) reports instead the instructions each agent executes
per request, per method (callgrind, `--calls` requests each, 200 is plenty): the
figure to compare two commits by on a busy machine.

Besides the times, each process's CPU time per call is reported (Linux `schedstat`, all
threads, over the timed calls): on a shared machine it moves much less than the wall
time, and it says which side pays.

With ACP_BENCH_PROFILE=PATH, `--agent ours` runs under cProfile and dumps its stats to
PATH at exit (use with `--pairs raw-ours --rounds 1`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
METHODS = ("authenticate", "session/set_mode", "session/new", "session/prompt")
CWD = "/tmp"
NEWLINE = orjson.OPT_APPEND_NEWLINE
BASE = Path(os.environ.get("ACP_BENCH_BASE", ROOT))
"""The checkout whose agent the `raw-base` pair runs (`--base`): compare two commits."""


# ----------------------------------------------------------------------------- agents


def floor_agent() -> None:
    """Read a line, parse it, write the answer: nothing else."""
    dumps, loads, write = orjson.dumps, orjson.loads, os.write
    results: dict[str, Any] = {
        "initialize": {
            "protocolVersion": 1,
            "agentCapabilities": {},
            "authMethods": [{"id": "bench-login", "name": "Bench login"}],
        },
        "session/new": {"sessionId": "bench-1"},
        "session/prompt": {"stopReason": "end_turn"},
    }
    empty: dict[str, Any] = {}
    for line in sys.stdin.buffer:
        message = loads(line)
        if "id" in message:
            result = results.get(message["method"], empty)
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            write(1, dumps(reply, option=NEWLINE))


def ours_agent() -> None:
    """An agent on acp_sdk's public API only, as a user writes one."""
    from acp_sdk import Agent, AgentContext, run_agent
    from acp_sdk.schema import (
        AuthenticateRequest,
        AuthenticateResponse,
        AuthMethodAgent,
        NewSessionRequest,
        NewSessionResponse,
        PromptRequest,
        PromptResponse,
        SessionMode,
        SessionModeState,
        SetSessionModeRequest,
        SetSessionModeResponse,
    )

    modes = SessionModeState(
        current_mode_id="ask",
        available_modes=[SessionMode(id="ask", name="Ask"), SessionMode(id="code", name="Code")],
    )

    class BenchAgent(Agent):
        auth_methods = (AuthMethodAgent(id="bench-login", name="Bench login"),)

        async def authenticate(
            self, params: AuthenticateRequest, ctx: AgentContext
        ) -> AuthenticateResponse:
            return AuthenticateResponse()

        async def new_session(
            self, params: NewSessionRequest, ctx: AgentContext
        ) -> NewSessionResponse:
            return NewSessionResponse(session_id="bench-1", modes=modes)

        async def set_mode(
            self, params: SetSessionModeRequest, ctx: AgentContext
        ) -> SetSessionModeResponse:
            return SetSessionModeResponse()

        async def prompt(self, params: PromptRequest, ctx: AgentContext) -> PromptResponse:
            return PromptResponse(stop_reason="end_turn")

    profile_path = os.environ.get("ACP_BENCH_PROFILE")
    if not profile_path:
        run_agent(BenchAgent())
        return
    import cProfile

    profile = cProfile.Profile()
    profile.enable()
    try:
        run_agent(BenchAgent())
    finally:
        profile.disable()
        profile.dump_stats(profile_path)


def incumbent_agent() -> None:
    """The same agent on the incumbent's public API."""
    import acp
    from acp import (
        AuthenticateResponse,
        InitializeResponse,
        NewSessionResponse,
        PromptResponse,
        SetSessionModeResponse,
    )
    from acp.schema import AuthMethodAgent, SessionMode, SessionModeState

    modes = SessionModeState(
        current_mode_id="ask",
        available_modes=[SessionMode(id="ask", name="Ask"), SessionMode(id="code", name="Code")],
    )

    base: Any = acp.Agent  # every method abstract: a minimal agent is not well-typed

    class BenchAgent(base):  # type: ignore[misc] # the incumbent's base, as Any
        async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
            return InitializeResponse(
                protocol_version=protocol_version,
                auth_methods=[AuthMethodAgent(id="bench-login", name="Bench login")],
            )

        async def authenticate(self, method_id: str, **kwargs: Any) -> Any:
            return AuthenticateResponse()

        async def new_session(self, cwd: str, **kwargs: Any) -> Any:
            return NewSessionResponse(session_id="bench-1", modes=modes)

        async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> Any:
            return SetSessionModeResponse()

        async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
            return PromptResponse(stop_reason="end_turn")

    asyncio.run(acp.run_agent(BenchAgent()))


AGENTS: dict[str, Callable[[], None]] = {
    "floor": floor_agent,
    "ours": ours_agent,
    "incumbent": incumbent_agent,
}


def agent_command(name: str) -> list[str]:
    if name == "asyncio-floor":
        return [sys.executable, str(HERE.parent / "peers" / "floor_agent.py")]
    return [sys.executable, str(HERE), "--agent", name]


# ----------------------------------------------------------------------------- clients

Samples = dict[str, list[int]]
"""Per method: ns per round trip (timed calls only); under `cpu:METHOD`, two entries: the
agent's and the client's CPU time in ns over the timed calls (all their threads)."""


def _cpu_ns(pid: int) -> int:
    """A process's CPU time so far, in ns, all threads (Linux `schedstat`: precise,
    unlike the 10 ms ticks of `stat`)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as file:
            total += int(file.read().split()[0])
    return total


class _Meter:
    """Times each method's calls and the CPU both processes spend meanwhile."""

    def __init__(self, pid: int, calls: int, warmup: int) -> None:
        self.pid, self.calls, self.warmup = pid, calls, warmup
        self.samples: Samples = {}

    def run(self, method: str, action: Callable[[], Any]) -> None:
        clock = time.perf_counter_ns
        for _ in range(self.warmup):
            action()
        timed = self.samples[method] = []
        agent_cpu, client_cpu = _cpu_ns(self.pid), _cpu_ns(os.getpid())
        for _ in range(self.calls):
            start = clock()
            action()
            timed.append(clock() - start)
        self.samples["cpu:" + method] = [
            _cpu_ns(self.pid) - agent_cpu,
            _cpu_ns(os.getpid()) - client_cpu,
        ]

    async def arun(self, method: str, action: Callable[[], Any]) -> None:
        clock = time.perf_counter_ns
        for _ in range(self.warmup):
            await action()
        timed = self.samples[method] = []
        agent_cpu, client_cpu = _cpu_ns(self.pid), _cpu_ns(os.getpid())
        for _ in range(self.calls):
            start = clock()
            await action()
            timed.append(clock() - start)
        self.samples["cpu:" + method] = [
            _cpu_ns(self.pid) - agent_cpu,
            _cpu_ns(os.getpid()) - client_cpu,
        ]


def _params(method: str) -> dict[str, Any]:
    if method == "initialize":
        return {"protocolVersion": 1, "clientCapabilities": {}}
    if method == "authenticate":
        return {"methodId": "bench-login"}
    if method == "session/set_mode":
        return {"sessionId": "bench-1", "modeId": "code"}
    if method == "session/new":
        return {"cwd": CWD, "mcpServers": []}
    return {"sessionId": "bench-1", "prompt": [{"type": "text", "text": "hi"}]}


def raw_client(agent: str, calls: int, warmup: int, root: Path = ROOT) -> Samples:
    """Blocking pipe writes and `readline`, orjson both ways: the least a client does.
    The agent imports acp_sdk from `root` (another checkout: a before/after pair)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    process = subprocess.Popen(
        agent_command(agent), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert process.stdin is not None
    assert process.stdout is not None
    fd, readline = process.stdin.fileno(), process.stdout.readline
    dumps, loads = orjson.dumps, orjson.loads
    next_id = 0

    def call(method: str, params: dict[str, Any]) -> Any:
        nonlocal next_id
        next_id += 1
        message = {"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}
        os.write(fd, dumps(message, option=NEWLINE))
        reply = loads(readline())
        assert reply.get("id") == next_id, reply
        assert "result" in reply, reply
        return reply["result"]

    call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    call("session/new", _params("session/new"))
    meter = _Meter(process.pid, calls, warmup)
    for method in METHODS:
        params = _params(method)
        meter.run(method, lambda: call(method, params))  # noqa: B023 # run at once
    process.stdin.close()
    process.wait(timeout=10)
    return meter.samples


def raw_async_client(agent: str, calls: int, warmup: int) -> Samples:
    """The raw client on asyncio pipes (as `bench/streaming.py`'s round-trip floor)."""

    async def go() -> Samples:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        process = await asyncio.create_subprocess_exec(
            *agent_command(agent),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            limit=1 << 20,
        )
        assert process.stdin is not None
        assert process.stdout is not None
        writer, reader = process.stdin, process.stdout
        dumps, loads = orjson.dumps, orjson.loads
        next_id = 0

        async def call(method: str, params: dict[str, Any]) -> Any:
            nonlocal next_id
            next_id += 1
            message = {"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}
            writer.write(dumps(message, option=NEWLINE))
            await writer.drain()
            reply = loads(await reader.readline())
            assert reply.get("id") == next_id, reply
            assert "result" in reply, reply
            return reply["result"]

        await call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        await call("session/new", _params("session/new"))
        meter = _Meter(process.pid, calls, warmup)
        for method in METHODS:
            params = _params(method)
            await meter.arun(method, lambda: call(method, params))  # noqa: B023 # run at once
        writer.close()
        await process.wait()
        return meter.samples

    return asyncio.run(go())


def sync_client(agent: str, calls: int, warmup: int, root: Path = ROOT) -> Samples:
    from acp_sdk import Client
    from acp_sdk.schema import TextContent

    env = {**os.environ, "PYTHONPATH": str(root)}
    with Client.spawn(agent_command(agent), env=env) as client:
        session = client.new_session(cwd=CWD)
        prompt = [TextContent(text="hi")]
        actions: dict[str, Callable[[], Any]] = {
            "authenticate": lambda: client.authenticate(method_id="bench-login"),
            "session/set_mode": lambda: client.set_mode(session_id="bench-1", mode_id="code"),
            "session/new": lambda: client.new_session(cwd=CWD),
            "session/prompt": lambda: session.prompt(prompt).wait(),
        }
        assert client._process is not None  # the agent's pid, for its CPU time
        meter = _Meter(client._process.pid, calls, warmup)
        for method in METHODS:
            meter.run(method, actions[method])
    return meter.samples


def async_client(agent: str, calls: int, warmup: int, root: Path = ROOT) -> Samples:
    from acp_sdk import AsyncClient
    from acp_sdk.schema import TextContent

    async def go() -> Samples:
        env = {**os.environ, "PYTHONPATH": str(root)}
        async with AsyncClient.spawn(agent_command(agent), env=env) as client:
            session = await client.new_session(cwd=CWD)
            prompt = [TextContent(text="hi")]

            async def prompt_turn() -> Any:
                return await session.prompt(prompt)

            actions: dict[str, Callable[[], Any]] = {
                "authenticate": lambda: client.authenticate(method_id="bench-login"),
                "session/set_mode": lambda: client.set_mode(session_id="bench-1", mode_id="code"),
                "session/new": lambda: client.new_session(cwd=CWD),
                "session/prompt": prompt_turn,
            }
            assert client._process is not None  # the agent's pid
            meter = _Meter(client._process.pid, calls, warmup)
            for method in METHODS:
                await meter.arun(method, actions[method])
        return meter.samples

    return asyncio.run(go())


def incumbent_client(agent: str, calls: int, warmup: int) -> Samples:
    import acp

    async def go() -> Samples:
        command = agent_command(agent)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        handler: Any = object()  # the agent never calls the client here
        async with acp.spawn_agent_process(handler, command[0], *command[1:], env=env) as (
            conn,
            process,
        ):
            await conn.initialize(protocol_version=1)
            await conn.new_session(cwd=CWD, mcp_servers=[])
            prompt: list[Any] = [acp.text_block("hi")]
            actions: dict[str, Callable[[], Any]] = {
                "authenticate": lambda: conn.authenticate(method_id="bench-login"),
                "session/set_mode": lambda: conn.set_session_mode(
                    session_id="bench-1", mode_id="code"
                ),
                "session/new": lambda: conn.new_session(cwd=CWD, mcp_servers=[]),
                "session/prompt": lambda: conn.prompt(session_id="bench-1", prompt=prompt),
            }
            meter = _Meter(process.pid, calls, warmup)
            for method in METHODS:
                await meter.arun(method, actions[method])
        return meter.samples

    return asyncio.run(go())


# The pairs with "base" run only with --base (an agent from another checkout).
PAIRS: dict[str, tuple[str, Callable[[int, int], Samples]]] = {
    "floor": ("raw client <- raw agent", lambda c, w: raw_client("floor", c, w)),
    "raw-asyncio": (
        "raw client <- raw asyncio agent",
        lambda c, w: raw_client("asyncio-floor", c, w),
    ),
    "asyncio-floor": (
        "raw asyncio client <- raw asyncio agent",
        lambda c, w: raw_async_client("asyncio-floor", c, w),
    ),
    "raw-ours": ("raw client <- acp_sdk agent", lambda c, w: raw_client("ours", c, w)),
    "raw-base": (
        "raw client <- acp_sdk agent of --base",
        lambda c, w: raw_client("ours", c, w, BASE),
    ),
    "async-ours": ("AsyncClient <- acp_sdk agent", lambda c, w: async_client("ours", c, w)),
    "async-base": (
        "AsyncClient <- acp_sdk agent of --base",
        lambda c, w: async_client("ours", c, w, BASE),
    ),
    "sync-base": (
        "Client <- acp_sdk agent of --base",
        lambda c, w: sync_client("ours", c, w, BASE),
    ),
    "sync-ours": ("Client <- acp_sdk agent", lambda c, w: sync_client("ours", c, w)),
    "raw-incumbent": (
        "raw client <- incumbent agent",
        lambda c, w: raw_client("incumbent", c, w),
    ),
    "incumbent": (
        "incumbent client <- incumbent agent",
        lambda c, w: incumbent_client("incumbent", c, w),
    ),
}


# ----------------------------------------------------------------------------- instructions


def agent_instructions(agent: str, calls: int, root: Path = ROOT) -> dict[str, float]:
    """Instructions the agent process executes per request, per method (valgrind's
    callgrind; deterministic, unlike times on a shared machine). The raw client sends
    each method's requests between two dumps (`callgrind_control -d`); the part between
    them is divided by the requests in it."""
    import glob
    import tempfile

    out = Path(tempfile.mkdtemp()) / "callgrind.out"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    process = subprocess.Popen(
        command + agent_command(agent),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    fd, readline = process.stdin.fileno(), process.stdout.readline
    sent = 0

    def call(method: str) -> None:
        nonlocal sent
        sent += 1
        message = {"jsonrpc": "2.0", "id": sent, "method": method, "params": _params(method)}
        os.write(fd, orjson.dumps(message, option=NEWLINE))
        assert "result" in orjson.loads(readline())

    def dump() -> None:
        # The dump happens when the agent next runs: keep it busy until it is done.
        control = subprocess.Popen(
            ["callgrind_control", "-d", str(process.pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while control.poll() is None:
            call("authenticate")
            time.sleep(0.05)
        call("authenticate")

    call("initialize")
    call("session/new")
    for method in METHODS:  # warm-up: every path compiled, every table built
        for _ in range(30):
            call(method)
    dump()
    counts: list[int] = []
    for method in METHODS:
        before = sent
        for _ in range(calls):
            call(method)
        dump()
        counts.append(sent - before)
    process.stdin.close()
    process.wait(timeout=60)
    parts = sorted(glob.glob(f"{out}.*"), key=lambda name: int(name.rsplit(".", 1)[1]))
    totals = []
    for part in parts:
        with open(part) as file:
            totals.append(
                next(int(line.split()[1]) for line in file if line.startswith("summary:"))
            )
        os.unlink(part)
    # parts[0] ends at the warm-up dump; then one part per method (with its dump pings)
    return {method: totals[1 + i] / counts[i] for i, method in enumerate(METHODS)}


def print_instructions(agents: list[tuple[str, str, Path]], calls: int) -> None:
    print(f"agent instructions per request (callgrind, {calls} requests per method)")
    figures = {label: agent_instructions(agent, calls, root) for label, agent, root in agents}
    print(f"{'agent':36}" + "".join(f"{method:>18}" for method in METHODS))
    for label, per_method in figures.items():
        print(f"{label:36}" + "".join(f"{per_method[m]:>18,.0f}" for m in METHODS))


# ----------------------------------------------------------------------------- report


def _p99(values: list[int]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


FLOORS = ("floor", "asyncio-floor")


def measure(pairs: list[str], rounds: int, calls: int, warmup: int) -> dict[str, Any]:
    """Every pair once per round (the order rotated), then per pair and method the
    median over rounds of: the round's median and p99, its ratio to each floor's median
    in the same round, and the agent's and the client's CPU time per call."""
    per_round: list[dict[str, Samples]] = []  # per round: pair -> its samples
    for number in range(rounds):
        shift = number % len(pairs)
        order = pairs[shift:] + pairs[:shift]
        per_round.append({pair: PAIRS[pair][1](calls, warmup) for pair in order})
        print(f"round {number + 1}/{rounds} done", file=sys.stderr)

    def median_us(one: dict[str, Samples], pair: str, method: str) -> float:
        return statistics.median(one[pair][method]) / 1000

    def cpu_us(one: dict[str, Samples], pair: str, method: str, side: int) -> float:
        return one[pair]["cpu:" + method][side] / calls / 1000

    report: dict[str, Any] = {}
    for pair in pairs:
        report[pair] = {}
        for method in METHODS:
            medians = [median_us(one, pair, method) for one in per_round]
            entry: dict[str, Any] = {
                "median_us": statistics.median(medians),
                "median_range_us": (min(medians), max(medians)),
                "p99_us": statistics.median(_p99(one[pair][method]) / 1000 for one in per_round),
                "agent_cpu_us": statistics.median(
                    cpu_us(one, pair, method, 0) for one in per_round
                ),
                "client_cpu_us": statistics.median(
                    cpu_us(one, pair, method, 1) for one in per_round
                ),
            }
            for floor in FLOORS:
                if floor in pairs:
                    entry["vs_" + floor] = statistics.median(
                        median_us(one, pair, method) / median_us(one, floor, method)
                        for one in per_round
                    )
            report[pair][method] = entry
    return report


def print_report(report: dict[str, Any], rounds: int, calls: int) -> None:
    print(f"round trip per method: {calls} calls per method per pair, {rounds} rounds;")
    print("median us [min-max of the rounds' medians], p99 us, ratio of the median to the")
    print("blocking floor pair and to the asyncio floor pair (same round), CPU us per call")
    print("spent by the agent process and by the client process (all threads)")
    for method in METHODS:
        print(
            f"\n{method:40} {'median':>20} {'p99':>8} {'/floor':>7} {'/aio fl':>7}"
            f" {'agent':>6} {'client':>6}"
        )
        for pair, methods in report.items():
            entry = methods[method]
            low, high = entry["median_range_us"]
            ratios = [
                f"{entry['vs_' + floor]:.2f}x" if "vs_" + floor in entry else "-"
                for floor in FLOORS
            ]
            print(
                f"  {PAIRS[pair][0]:38} {entry['median_us']:6.1f} ({low:5.1f}-{high:5.1f})"
                f" {entry['p99_us']:8.1f} {ratios[0]:>7} {ratios[1]:>7}"
                f" {entry['agent_cpu_us']:6.1f} {entry['client_cpu_us']:6.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", choices=sorted(AGENTS), help="run as that agent (internal)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument(
        "--pairs",
        help="comma-separated, of: "
        + ", ".join(PAIRS)
        + " (default: all, the base ones with --base)",
    )
    parser.add_argument("--json", help="also write the figures there")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="instead: each agent's instructions per request under callgrind (--calls 200)",
    )
    parser.add_argument("--base", help="a checkout of another commit: its agent, in the base pairs")
    args = parser.parse_args()
    if args.agent:
        AGENTS[args.agent]()
        return
    if args.base:
        global BASE  # read by the raw-base pair
        BASE = Path(args.base).resolve()
    if args.instructions:
        agents = [
            ("raw agent (floor)", "floor", ROOT),
            ("raw asyncio agent", "asyncio-floor", ROOT),
            ("acp_sdk agent", "ours", ROOT),
        ]
        if args.base:
            agents.append(("acp_sdk agent of --base", "ours", BASE))
        print_instructions(agents, args.calls)
        return
    default = [p for p in PAIRS if args.base or "base" not in p]
    pairs = [p for p in args.pairs.split(",") if p] if args.pairs else default
    unknown = [p for p in pairs if p not in PAIRS]
    if unknown:
        parser.error(f"unknown pairs: {unknown}")
    report = measure(pairs, args.rounds, args.calls, args.warmup)
    print_report(report, args.rounds, args.calls)
    if args.json:
        run = {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "python": sys.version.split()[0],
            "orjson": orjson.__version__,
            "load_average_after": os.getloadavg(),
            "rounds": args.rounds,
            "calls": args.calls,
            "warmup": args.warmup,
            "base": str(BASE) if args.base else None,
        }
        document = {"run": run, "pairs": report}
        Path(args.json).write_text(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
