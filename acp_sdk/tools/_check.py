"""`python -m acp_sdk check`: run a battery of conformance cases against an agent.

The checker is a client written at the wire level: it speaks raw JSON-RPC lines to the
agent (so it can send what a well-behaved client never would: malformed JSON, invalid
requests), records every frame the agent sends in arrival order, and judges each case
against a rule of the v1 spec docs (`_check_cases.py` holds the cases and their
citations). Each case ends `pass`, `fail`, `warn` (a SHOULD not met, or a doubt where the
spec is silent) or `skip` (with the reason). The exit code is 1 when a MUST fails.

Over stdio the agent is started in its own process group, so the end-of-input case can
see whether anything of it outlives it. Over `--url` the same cases run through the
SDK's WebSocket or Streamable HTTP transport; the ones that need the process (or a raw,
unparsed body) are skipped.
"""

# The checker reads the agent's raw JSON on purpose (it must see what a typed client
# would refuse), so its values are `Any` narrowed by checks, and `x.get(k) or {}` mixes
# them with empty literals: pyright's unknown-type reports say nothing useful here.
# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs
import orjson

from acp_sdk.protocol._intake import STRAY_LIMIT_BYTES, STRAY_LIMIT_LINES

__all__ = ["CheckOptions", "Peer", "Report", "main_check"]

PASS: Final = "pass"
FAIL: Final = "fail"
WARN: Final = "warn"
SKIP: Final = "skip"
MUST: Final = "MUST"
SHOULD: Final = "SHOULD"

DEFAULT_PROMPT: Final = "Reply with the single word: hello"
DEFAULT_LONG_PROMPT: Final = "wait then count from 1 to 300, one number per line"
"""Long enough to cancel: the scenario agent's `wait` never ends by itself, a model counts."""


@attrs.frozen(kw_only=True, order=False)
class CheckOptions:
    """What the checker runs and how long it waits (all times in seconds)."""

    command: tuple[str, ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    prompt: str = DEFAULT_PROMPT
    long_prompt: str = DEFAULT_LONG_PROMPT
    big_prompt_size: int = 1024 * 1024
    auth: str | None = None
    request_timeout: float = 30.0
    turn_timeout: float = 120.0
    cancel_timeout: float = 10.0
    cancel_after: float = 1.0
    exit_timeout: float = 5.0
    grace: float = 0.5


class AgentGone(Exception):
    """The agent's side of the connection ended."""


class NoAnswer(Exception):
    """A request got no response in time."""


class NotSpeakingAcp(NoAnswer):
    """`initialize` got no answer, and the agent printed more lines that are not
    JSON-RPC than a client accepts before it (the SDK's `NotAnAgent` limits)."""


class InitializeUnanswered(Exception):
    """The main connection's `initialize` got no answer: nothing else can be checked,
    so the run stops there (not a case's failure: `Run.guard` lets it through)."""


def short(value: Any, limit: int = 240) -> str:
    """One line of at most `limit` characters showing a frame or value."""
    if isinstance(value, bytes):
        text = value.decode("utf-8", "replace")
    elif isinstance(value, str):
        text = value
    else:
        text = orjson.dumps(value).decode()
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------- links


class StdioLink:
    """The agent as a subprocess in its own process group; bytes in, lines out."""

    def __init__(self, command: Sequence[str]) -> None:
        self.command = list(command)
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self._buffer = b""
        self._tasks: list[asyncio.Task[None]] = []
        self.raw_ok = True  # a malformed line can be written as is

    async def open(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            # Started where the checker runs, as an editor starts it in the project (the
            # session cwd goes in session/new). In its own process group: at the end,
            # anything left in the group is the agent's leftovers.
            start_new_session=os.name == "posix",
        )
        self._tasks.append(asyncio.get_running_loop().create_task(self._drain_stderr()))

    async def _drain_stderr(self) -> None:
        assert self.proc is not None
        assert self.proc.stderr is not None
        # Chunks, not readline(): a line past the stream's 64 KiB limit would end this
        # drain, and an agent whose stderr nobody reads blocks once the pipe is full.
        pending = b""
        while chunk := await self.proc.stderr.read(1 << 16):
            *lines, pending = (pending + chunk).split(b"\n")
            pending = pending[-(1 << 16) :]  # a longer line keeps its end
            self.stderr_tail.extend(line.decode("utf-8", "replace").rstrip() for line in lines)
        if pending:
            self.stderr_tail.append(pending.decode("utf-8", "replace").rstrip())

    async def recv(self) -> bytes | None:
        assert self.proc is not None
        assert self.proc.stdout is not None
        while b"\n" not in self._buffer:
            chunk = await self.proc.stdout.read(1 << 16)
            if not chunk:
                rest, self._buffer = self._buffer, b""
                return rest if rest.strip() else None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.rstrip(b"\r")

    async def send(self, data: bytes) -> None:
        assert self.proc is not None
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data + b"\n")
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as error:
            raise AgentGone(str(error)) from error

    def end_input(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            with contextlib.suppress(Exception):
                self.proc.stdin.close()

    def group_alive(self) -> bool:
        """Whether any process of the agent's group still runs (POSIX only)."""
        if self.proc is None or os.name != "posix":
            return False
        try:
            os.killpg(self.proc.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def kill_group(self) -> None:
        if self.proc is None:
            return
        if os.name == "posix":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        elif self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    async def aclose(self) -> None:
        self.end_input()
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.proc.wait(), 2.0)
        self.kill_group()
        if self.proc is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.proc.wait(), 2.0)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.proc is not None:
            # Close the transport's pipes now, not in a finalizer after the loop ends.
            transport: Any = getattr(self.proc, "_transport", None)
            if transport is not None:
                transport.close()


class UrlLink:
    """A remote agent through the SDK's WebSocket or Streamable HTTP transport."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float) -> None:
        from acp_sdk.remote._client import transport_for

        self.transport = transport_for(url, headers, timeout, 64 * 1024 * 1024)
        # Streamable HTTP parses each message before it POSTs it.
        self.raw_ok = url.lower().startswith(("ws:", "wss:"))
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=1)

    async def open(self) -> None:
        await self.transport.open()

    async def recv(self) -> bytes | None:
        return await self.transport.recv()

    async def send(self, data: bytes) -> None:
        try:
            await self.transport.send(data)
        except (ConnectionError, OSError) as error:
            raise AgentGone(str(error)) from error

    def end_input(self) -> None:
        pass

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self.transport.aclose()


# ---------------------------------------------------------------------- the peer


@attrs.frozen(kw_only=True, order=False)
class Inbound:
    """One frame the agent sent, in arrival order."""

    seq: int
    at: float
    raw: bytes
    msg: dict[str, Any] | None  # None: not a JSON-RPC message


def _is_jsonrpc(msg: Any) -> bool:
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return False
    if "method" in msg:
        return isinstance(msg["method"], str)
    return "id" in msg and (("result" in msg) != ("error" in msg))


class Peer:
    """A raw JSON-RPC client: sends frames, records what comes back, answers the agent.

    The agent's requests get what a cautious client answers: permission requests the
    first reject option (or `cancelled`; held while `hold_permissions` is set, to be
    answered `cancelled` at the cancel), everything else -32601, since the checker
    advertises no client capability.
    """

    def __init__(self, link: StdioLink | UrlLink, name: str) -> None:
        self.link = link
        self.name = name
        self.inbound: list[Inbound] = []
        self.junk: list[Inbound] = []
        self.agent_requests: list[Inbound] = []
        self.held: list[Any] = []
        self.hold_permissions = False
        self.closed = False
        self._next_id = 0
        self._pending: dict[bytes, asyncio.Future[dict[str, Any]]] = {}
        self._changed = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self._started = time.monotonic()
        self.answered = False  # the agent answered a request of ours
        self.stray = [0, 0]  # lines (and their bytes) not JSON-RPC before the first answer
        self._first_stray = b""
        self.not_acp: str | None = None  # why it is not an ACP agent (past the limits)

    async def start(self) -> None:
        await self.link.open()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            while (raw := await self.link.recv()) is not None:
                if not raw.strip():
                    continue
                try:
                    decoded = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    decoded = None
                msg = decoded if _is_jsonrpc(decoded) else None
                frame = Inbound(seq=len(self.inbound), at=time.monotonic(), raw=raw, msg=msg)
                self.inbound.append(frame)
                if msg is None:
                    self.junk.append(frame)
                    if not isinstance(decoded, dict) and self._flooded(raw):
                        break  # not an ACP agent: stop reading it, as the SDK's client does
                elif "method" in msg and "id" in msg:
                    self.agent_requests.append(frame)
                    await self._answer_agent(msg)
                elif "method" not in msg:
                    self.answered = True
                    future = self._pending.pop(orjson.dumps(msg.get("id")), None)
                    if future is not None and not future.done():
                        future.set_result(msg)
                self._wake()
        except (OSError, ValueError):
            pass
        finally:
            self.closed = True
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(AgentGone("the agent closed the connection"))
                    future.exception()  # retrieved: its caller may have stopped waiting
            self._pending.clear()
            self._wake()

    def _flooded(self, raw: bytes) -> bool:
        """Count a line that is not JSON-RPC; True once, before any answer, it took the
        agent past the SDK client's limits (`NotAnAgent`)."""
        if self.answered:
            return False
        if not self.stray[0]:
            self._first_stray = raw
        self.stray[0] += 1
        self.stray[1] += len(raw) + 1
        if self.stray[0] <= STRAY_LIMIT_LINES and self.stray[1] <= STRAY_LIMIT_BYTES:
            return False
        self.not_acp = (
            f"not an ACP agent: it printed {self.stray[0]} lines that are not JSON-RPC and "
            f"no answer to initialize; the first: {short(self._first_stray, 200)}"
        )
        return True

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _answer_agent(self, msg: dict[str, Any]) -> None:
        method = msg["method"]
        if method == "session/request_permission":
            if self.hold_permissions:
                self.held.append(msg["id"])
                return
            params = msg.get("params")
            options = params.get("options") if isinstance(params, dict) else None
            # The agent's JSON, any shape: only objects are options we could pick.
            offered = (
                [o for o in options if isinstance(o, dict)] if isinstance(options, list) else []
            )
            rejects = [o for o in offered if str(o.get("kind", "")).startswith("reject")]
            if rejects:
                outcome = {"outcome": "selected", "optionId": rejects[0].get("optionId")}
            else:
                outcome = {"outcome": "cancelled"}
            await self.respond(msg["id"], {"outcome": outcome})
            return
        error = {"code": -32601, "message": f"Method not found: {method}"}
        await self.send({"jsonrpc": "2.0", "id": msg["id"], "error": error})

    async def respond(self, request_id: Any, result: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def answer_held_cancelled(self) -> None:
        """Answer every held permission request `cancelled` (prompt-turn.mdx § Cancellation)."""
        held, self.held = self.held, []
        for request_id in held:
            with contextlib.suppress(AgentGone):
                await self.respond(request_id, {"outcome": {"outcome": "cancelled"}})

    async def send(self, msg: Any) -> None:
        await self.send_raw(orjson.dumps(msg))

    async def send_raw(self, data: bytes) -> None:
        if self.closed:
            raise AgentGone("the agent closed the connection")
        await self.link.send(data)

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def start_call(
        self, method: str, params: Any, request_id: Any = None
    ) -> tuple[Any, asyncio.Future[dict[str, Any]]]:
        """Send a request; return its id and the future of its response message."""
        request_id = self.new_id() if request_id is None else request_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[orjson.dumps(request_id)] = future
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id, future

    async def call(self, method: str, params: Any, timeout: float) -> dict[str, Any]:
        """The whole response message (with `result` or `error`)."""
        _, future = await self.start_call(method, params)
        return await self.wait(future, timeout, method)

    async def wait(
        self, future: asyncio.Future[dict[str, Any]], timeout: float, what: str
    ) -> dict[str, Any]:
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except asyncio.TimeoutError:
            raise NoAnswer(f"no answer to {what} within {timeout:g}s") from None

    async def wait_initialize(
        self, future: asyncio.Future[dict[str, Any]], timeout: float
    ) -> dict[str, Any]:
        """`initialize`'s answer, as `wait`; but fails at once (`NotSpeakingAcp`) once the
        agent printed past the SDK client's limits of lines that are not JSON-RPC, and
        says what it printed when the answer does not come."""
        deadline = time.monotonic() + timeout
        while not future.done():
            left = deadline - time.monotonic()
            if left <= 0 or self.closed:
                break
            changed: asyncio.Future[Any] = asyncio.ensure_future(self._changed.wait())
            either: set[asyncio.Future[Any]] = {future, changed}
            await asyncio.wait(either, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            changed.cancel()
        if self.not_acp is not None:
            raise NotSpeakingAcp(self.not_acp)
        if future.done():
            return future.result()
        printed = [short(f.raw, 200) for f in self.junk[-3:]]
        also = f" (it printed, not JSON-RPC: {' | '.join(printed)})" if printed else ""
        raise NoAnswer(f"no answer to initialize within {timeout:g}s{also}")

    async def notify(self, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def wait_for(
        self, predicate: Callable[[Inbound], bool], timeout: float, since: int = 0
    ) -> Inbound | None:
        """The first frame from `since` on that matches, waiting up to `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            for frame in self.inbound[since:]:
                if predicate(frame):
                    return frame
            since = len(self.inbound)
            left = deadline - time.monotonic()
            if left <= 0 or self.closed:
                return None
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    async def quiet(self, seconds: float) -> None:
        """Let `seconds` pass while frames keep being read."""
        await asyncio.sleep(seconds)

    def updates(self, session_id: str, start: int, end: int | None = None) -> list[Inbound]:
        """The `session/update` notifications of a session in `inbound[start:end]`."""
        return [
            f
            for f in self.inbound[start:end]
            if f.msg is not None
            and f.msg.get("method") == "session/update"
            and "id" not in f.msg
            and isinstance(f.msg.get("params"), dict)
            and f.msg["params"].get("sessionId") == session_id
        ]

    def stderr_hint(self) -> str:
        tail = [line for line in self.link.stderr_tail if line.strip()]
        return f" (agent stderr: {short(tail[-1], 160)})" if tail else ""

    def kill(self) -> None:
        """Stop the agent now, without the grace `aclose` gives it (a process only)."""
        if isinstance(self.link, StdioLink):
            self.link.kill_group()

    async def aclose(self) -> None:
        await self.link.aclose()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader


def make_link(options: CheckOptions) -> StdioLink | UrlLink:
    if options.url is not None:
        return UrlLink(options.url, dict(options.headers), options.request_timeout)
    return StdioLink(options.command)


# ---------------------------------------------------------------------- the report


@attrs.frozen(kw_only=True, order=False)
class Result:
    id: str
    spec: str
    level: str
    outcome: str
    detail: str


@attrs.frozen(kw_only=True, order=False)
class Report:
    """The cases' outcomes, in the order of the case table, and what the agent said (the
    dicts fill as the run goes)."""

    agent: dict[str, Any] = attrs.field(factory=dict)
    results: dict[str, Result] = attrs.field(factory=dict)
    stopped: list[str] = attrs.field(factory=list)
    """Why the run stopped before the cases ran (the agent never answered `initialize`)."""

    def ordered(self) -> list[Result]:
        from acp_sdk.tools._check_cases import CASES

        order = {case.id: index for index, case in enumerate(CASES)}
        return sorted(self.results.values(), key=lambda r: order.get(r.id, len(order)))

    def must_failed(self) -> bool:
        return any(r.outcome == FAIL and r.level == MUST for r in self.results.values())

    def as_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "cases": [
                {
                    "id": r.id,
                    "spec": r.spec,
                    "level": r.level,
                    "outcome": r.outcome,
                    "detail": r.detail,
                }
                for r in self.ordered()
            ],
        }

    def table(self) -> str:
        rows = [("case", "spec", "level", "outcome", "detail")]
        rows += [(r.id, r.spec, r.level, r.outcome, r.detail) for r in self.ordered()]
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        lines = []
        for row in rows:
            cells = [row[i].ljust(widths[i]) for i in range(4)]
            lines.append("  ".join([*cells, short(row[4], 300)]).rstrip())
        counts = collections.Counter(r.outcome for r in self.results.values())
        summary = ", ".join(f"{counts[o]} {o}" for o in (PASS, FAIL, WARN, SKIP))
        verdict = "a MUST failed" if self.must_failed() else "no MUST failed"
        return "\n".join([*lines, "", f"{summary}: {verdict}"])

    def junit(self) -> bytes:
        results = self.ordered()
        suite = ET.Element(
            "testsuite",
            name="acp-check",
            tests=str(len(results)),
            failures=str(sum(r.outcome == FAIL for r in results)),
            skipped=str(sum(r.outcome == SKIP for r in results)),
            errors="0",
        )
        for r in results:
            case = ET.SubElement(suite, "testcase", name=r.id, classname=f"acp.{r.level}")
            if r.outcome == FAIL:
                failure = ET.SubElement(case, "failure", message=short(r.detail, 500))
                failure.text = f"{r.spec}\n{r.detail}"
            elif r.outcome == SKIP:
                ET.SubElement(case, "skipped", message=short(r.detail, 500))
            else:
                out = ET.SubElement(case, "system-out")
                out.text = f"{r.outcome}: {r.spec}\n{r.detail}"
        suites = ET.Element("testsuites")
        suites.append(suite)
        data: bytes = ET.tostring(suites, encoding="utf-8", xml_declaration=True)
        return data


async def run_check(options: CheckOptions) -> Report:
    """Run every case against the agent; the report holds one result per case."""
    from acp_sdk.tools._check_main import run_cases

    report = Report()
    if options.url is not None:
        report.agent["url"] = options.url
    else:
        report.agent["command"] = list(options.command)
    with contextlib.ExitStack() as stack:
        cwd = options.cwd
        if cwd is None:
            cwd = stack.enter_context(tempfile.TemporaryDirectory(prefix="acp-check-"))
        await run_cases(options, os.path.realpath(cwd), report)
    return report


# ---------------------------------------------------------------------- the command


def add_check_parser(commands: Any) -> None:
    """Add `check` to the CLI's subcommands (the CLI calls this; kept in one place)."""
    check = commands.add_parser(
        "check",
        help="check an agent against the ACP spec: check [OPTIONS] -- COMMAND [ARGS...]",
        description="Run conformance cases against an agent and print a table: case, the "
        "spec rule (doc § section, MUST or SHOULD), outcome (pass, fail, warn, skip) and a "
        "detail. Exit code 0 when no MUST fails, 1 when one does, 2 on a usage error.",
    )
    check.add_argument("command", nargs="*", metavar="COMMAND", help="the agent command, after --")
    check.add_argument("--url", default=None, help="a remote agent: ws://, wss://, http://...")
    check.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="an HTTP header for --url (repeatable), e.g. 'Authorization: Bearer T'",
    )
    check.add_argument("--json", dest="json_out", metavar="FILE", help="write the report as JSON")
    check.add_argument("--junit", metavar="FILE", help="write the report as JUnit XML")
    check.add_argument("--cwd", default=None, help="session cwd (default: a fresh temp dir)")
    check.add_argument("--prompt", default=DEFAULT_PROMPT, help="the plain turn's prompt")
    check.add_argument(
        "--long-prompt",
        default=DEFAULT_LONG_PROMPT,
        help="a prompt whose turn lasts long enough to cancel",
    )
    check.add_argument(
        "--big-prompt-size",
        type=int,
        default=1024 * 1024,
        metavar="BYTES",
        help="size of the big-prompt case's text (default 1 MiB; 0 skips it)",
    )
    check.add_argument("--auth", metavar="METHOD_ID", help="authenticate before the sessions")
    for flag, default, what in (
        ("--request-timeout", 30.0, "a non-prompt request's answer"),
        ("--turn-timeout", 120.0, "a prompt turn"),
        ("--cancel-timeout", 10.0, "the cancelled stop reason after session/cancel"),
        ("--cancel-after", 1.0, "a long turn's first update before cancelling it anyway"),
        ("--exit-timeout", 5.0, "the agent to exit after its stdin closes"),
        ("--grace", 0.5, "late frames after a response"),
    ):
        check.add_argument(
            flag, type=float, default=default, metavar="SECONDS", help=f"wait for {what}"
        )
    check.set_defaults(func=main_check)


def main_check(args: Any) -> int:
    """The `check` subcommand: 0 when no MUST fails, 1 otherwise, 2 on a usage error."""
    command = tuple(args.command or ())
    if (args.url is None) == (not command):
        print("error: give either -- COMMAND [ARGS...] or --url URL", file=sys.stderr)
        return 2
    headers = []
    for header in args.header:
        name, sep, value = header.partition(":")
        if not sep:
            print(f"error: --header needs NAME:VALUE, got {header!r}", file=sys.stderr)
            return 2
        headers.append((name.strip(), value.strip()))
    options = CheckOptions(
        command=command,
        url=args.url,
        headers=tuple(headers),
        cwd=os.path.abspath(args.cwd) if args.cwd else None,
        prompt=args.prompt,
        long_prompt=args.long_prompt,
        big_prompt_size=args.big_prompt_size,
        auth=args.auth,
        request_timeout=args.request_timeout,
        turn_timeout=args.turn_timeout,
        cancel_timeout=args.cancel_timeout,
        cancel_after=args.cancel_after,
        exit_timeout=args.exit_timeout,
        grace=args.grace,
    )
    report = asyncio.run(run_check(options))
    if report.stopped:  # nothing was checked: one line, not a table of skips
        print(f"error: {report.stopped[0]}; no other case was run", file=sys.stderr)
    else:
        print(report.table())
    if args.json_out:
        with open(args.json_out, "wb") as file:
            file.write(orjson.dumps(report.as_json(), option=orjson.OPT_INDENT_2))
    if args.junit:
        with open(args.junit, "wb") as file:
            file.write(report.junit())
    return 1 if report.must_failed() else 0
