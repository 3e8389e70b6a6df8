"""`python -m acp_sdk replay FILE.jsonl`: act as the recorded agent toward a client over
stdio; `replay FILE.jsonl --against -- CMD`: re-drive a real agent with the recorded
client messages and report where its answers differ.

Acting as the agent: the recording is cut into one script per client request, holding
what the agent sent while that request was open (updates, its own requests, its stderr
lines) and then its answer. The k-th live request for method M plays the script of the
k-th recorded request for M: the frames are sent as recorded (the answer under the live
request's id), an agent request waits for the client's answer (whatever it is), and a
client notification the recorded agent waited for (`session/cancel`) is waited for
again. A request the recording has no script for gets an error (-32603) saying so.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import sys
from collections.abc import Sequence
from typing import Any, Final, cast

import attrs
import orjson

from acp_sdk.tools._recording import Frame, Recording, id_key, items, obj, session_of

NO_SCRIPT: Final = -32603
LINE_LIMIT: Final = 1 << 30  # frames of any size (asyncio's default limit is 64 KiB)


@attrs.frozen(kw_only=True, order=False)
class _Script:
    method: str
    session: str | None
    steps: list[tuple[str, Any]] = attrs.field(factory=lambda: list[tuple[str, Any]]())


def scripts(recording: Recording) -> tuple[list[tuple[str, Any]], dict[str, list[_Script]]]:
    """The steps sent before any request (the prelude) and each method's scripts in order."""
    prelude: list[tuple[str, Any]] = []
    by_method: dict[str, list[_Script]] = collections.defaultdict(list)
    pending: dict[Any, _Script] = {}
    last: _Script | None = None

    def owner(frame: Frame) -> _Script | None:
        session = session_of(frame)
        for script in reversed(pending.values()):
            if session is None or script.session == session:
                return script
        return next(reversed(pending.values()), None) if pending else last

    for frame in recording.frames:
        if frame.origin == "client":
            if frame.is_request and frame.method is not None:
                script = _Script(method=frame.method, session=session_of(frame))
                by_method[frame.method].append(script)
                pending[_key(frame.id)] = script
                last = script
            elif frame.is_notification:
                # What the agent sent after it, for the requests it concerns (the
                # session's, when it names one), waits for it again.
                session = session_of(frame)
                for script in pending.values():
                    if session is None or script.session in (None, session):
                        script.steps.append(("await", frame.method))
            continue  # the live client answers the agent's requests itself
        if frame.origin == "agent" and frame.is_response and _key(frame.id) in pending:
            pending.pop(_key(frame.id)).steps.append(("respond", frame.message))
            continue
        target = owner(frame)
        steps = target.steps if target is not None else prelude
        if frame.origin == "stderr":
            steps.append(("stderr", frame.data))
        elif frame.is_request:
            steps.append(("request", frame))
        elif not frame.partial:
            steps.append(("send", frame.data))
        else:
            steps.append(("send_partial", frame.data))
    return prelude, by_method


_key = id_key


class _Player:
    """Plays scripts toward the client on our stdin/stdout."""

    def __init__(self, recording: Recording) -> None:
        self.prelude, by_method = scripts(recording)
        self.queues = {method: collections.deque(s) for method, s in by_method.items()}
        self.answers: dict[Any, asyncio.Future[Any]] = {}
        self.seen: collections.Counter[str] = collections.Counter()
        self.changed = asyncio.Condition()
        self.out = sys.stdout.buffer
        self.ended = False  # the client closed our input

    def write(self, data: bytes, newline: bool = True) -> None:
        self.out.write(data + b"\n" if newline else data)
        self.out.flush()

    async def play(
        self, steps: list[tuple[str, Any]], live_id: Any, marks: collections.Counter[str]
    ) -> None:
        """Play one script; `marks` counts the client notifications seen before its
        request (taken when the request arrived: a cancel right behind it in the same
        read must still count)."""
        for kind, value in steps:
            if kind == "send":
                self.write(value)
            elif kind == "send_partial":
                self.write(value, newline=False)
            elif kind == "stderr":
                sys.stderr.buffer.write(value + b"\n")
                sys.stderr.flush()
            elif kind == "await":
                method: str = value

                def notified(method: str = method) -> bool:
                    return self.ended or self.seen[method] > marks[method]

                async with self.changed:
                    await self.changed.wait_for(notified)
                if self.ended:
                    return
                marks[value] += 1
            elif kind == "request":
                answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                self.answers[_key(value.id)] = answer
                self.write(value.data)
                await answer
                if self.ended:
                    return
            elif kind == "respond":
                self.write(orjson.dumps({**value, "id": live_id}))

    async def on_message(self, parsed: Any, tasks: set[asyncio.Task[None]]) -> None:
        if not isinstance(parsed, dict):
            return
        message = obj(parsed)
        method = message.get("method")
        if isinstance(method, str) and "id" in message:
            queue = self.queues.get(method)
            if queue:
                steps, marks = queue.popleft().steps, collections.Counter(self.seen)
                tasks.add(asyncio.create_task(self.play(steps, message["id"], marks)))
                return
            error = {
                "code": NO_SCRIPT,
                "message": "Internal error",
                "data": {"reason": f"replay: the recording has no more answers for {method}"},
            }
            self.write(orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}))
        elif isinstance(method, str):
            async with self.changed:
                self.seen[method] += 1
                self.changed.notify_all()
        elif "id" in message:
            answer = self.answers.pop(_key(message["id"]), None)
            if answer is not None and not answer.done():
                answer.set_result(message)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
        await self.play(self.prelude, None, collections.Counter())
        tasks: set[asyncio.Task[None]] = set()  # each request's script; awaited below
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                with contextlib.suppress(orjson.JSONDecodeError):
                    await self.on_message(orjson.loads(line), tasks)
            # End of input: what is waiting for the client never gets it; the rest of
            # each script is played out before we exit.
            async with self.changed:
                self.ended = True
                self.changed.notify_all()
            for answer in self.answers.values():
                if not answer.done():
                    answer.set_result(None)
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()


def serve(recording: Recording) -> int:
    """Act as the recorded agent on stdio until the client closes our input."""
    asyncio.run(_Player(recording).run())
    return 0


# ---------------------------------------------------------------------- --against


def diff(recorded: Any, live: Any, path: str = "", limit: int = 20) -> list[str]:
    """Where two JSON values differ, one line per difference (at most `limit`)."""
    out: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            old, new = obj(a), obj(b)
            for key in list(old) + [k for k in new if k not in old]:
                child = f"{where}.{key}" if where else key
                if key not in new:
                    out.append(f"{child}: recorded {_short(old[key])}, missing now")
                elif key not in old:
                    out.append(f"{child}: not recorded, now {_short(new[key])}")
                else:
                    walk(old[key], new[key], child)
        elif isinstance(a, list) and isinstance(b, list):
            before, after = items(a), items(b)
            for index, (x, y) in enumerate(zip(before, after, strict=False)):
                walk(x, y, f"{where}[{index}]")
            if len(before) != len(after):
                out.append(f"{where}: recorded {len(before)} items, now {len(after)}")
        elif a != b or type(cast(object, a)) is not type(cast(object, b)):  # 1 is not True
            out.append(f"{where or '(whole)'}: recorded {_short(a)}, now {_short(b)}")

    walk(recorded, live, path)
    return out


def _short(value: Any, size: int = 80) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= size else text[: size - 1] + "…"


class _Against:
    """Drives a live agent with the recorded client frames; collects its answers."""

    def __init__(self, recording: Recording, timeout: float) -> None:
        self.recording = recording
        self.timeout = timeout
        self.sessions: dict[str, str] = {}  # recorded session id -> live one
        self.responses: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.updates: dict[Any, list[Any]] = collections.defaultdict(list)
        self.notified = 0
        self.changed = asyncio.Condition()
        self.open_ids: list[Any] = []
        self.ended = asyncio.Event()  # the agent's output ended: no answer will come
        self.stopped: int | None = None  # client frames sent before the agent stopped reading
        # The recorded client's answers to the agent's requests, per method, in order.
        answers: dict[Any, Frame] = {}
        self.recorded_answers: dict[Any, dict[str, Any]] = {}
        for frame in recording.frames:
            if frame.origin == "client" and frame.is_response:
                answers[_key(frame.id)] = frame
            elif frame.origin == "agent" and frame.is_response and frame.message is not None:
                self.recorded_answers.setdefault(_key(frame.id), frame.message)
        self.client_answers: dict[str, collections.deque[dict[str, Any]]] = collections.defaultdict(
            collections.deque
        )
        for frame in recording.frames:
            if frame.origin == "agent" and frame.is_request and frame.method is not None:
                reply = answers.get(_key(frame.id))
                if reply is not None and reply.message is not None:
                    self.client_answers[frame.method].append(reply.message)

    def map_sessions(self, value: Any) -> Any:
        """`value` with each recorded session id replaced by the live agent's."""
        return _replace_strings(value, self.sessions)

    def unmap_sessions(self, value: Any) -> Any:
        """`value` with each live session id replaced by the recorded one."""
        return _replace_strings(value, {live: old for old, live in self.sessions.items()})

    async def read(self, stdout: asyncio.StreamReader, stdin: asyncio.StreamWriter) -> None:
        try:
            await self._read(stdout, stdin)
        finally:
            self.ended.set()

    async def _read(self, stdout: asyncio.StreamReader, stdin: asyncio.StreamWriter) -> None:
        while True:
            line = await stdout.readline()
            if not line:
                break
            try:
                parsed: Any = orjson.loads(line)
            except orjson.JSONDecodeError:
                print(f"agent wrote a non-JSON line: {_short(line.decode('utf-8', 'replace'))}")
                continue
            if not isinstance(parsed, dict):
                continue
            message = obj(parsed)
            method = message.get("method")
            if isinstance(method, str) and "id" in message:
                queue = self.client_answers.get(method)
                reply: dict[str, Any] = (
                    {**queue.popleft(), "id": message["id"]}
                    if queue
                    else {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": NO_SCRIPT, "message": "no recorded answer"},
                    }
                )
                stdin.write(orjson.dumps(self.map_sessions(reply)) + b"\n")
            elif isinstance(method, str):
                owner = self.open_ids[-1] if self.open_ids else None
                self.updates[owner].append(self.unmap_sessions(message))
                async with self.changed:
                    self.notified += 1
                    self.changed.notify_all()
            elif "id" in message:
                key = _key(message["id"])
                recorded = self.recorded_answers.get(key)
                if recorded is not None:  # before the next client frame is mapped
                    self._learn_sessions(recorded, message)
                if key in self.open_ids:  # later notifications are not this request's
                    self.open_ids.remove(key)
                future = self.responses.get(key)
                if future is not None and not future.done():
                    future.set_result(message)

    async def wait(self, future: asyncio.Future[Any], timeout: float) -> Any:
        """The answer, or None after `timeout` (at once once the agent's output ended)."""
        if not future.done() and not self.ended.is_set():
            ended = asyncio.ensure_future(self.ended.wait())
            try:
                await asyncio.wait({future, ended}, timeout=timeout, return_when="FIRST_COMPLETED")
            finally:
                ended.cancel()
        return future.result() if future.done() else None

    async def drive(self, argv: Sequence[str]) -> int:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=LINE_LIMIT,
            )
        except OSError as error:  # as `record` says it
            from acp_sdk._driver.process import start_failure

            print(f"error: cannot start the agent: {start_failure(error)}", file=sys.stderr)
            return 127 if isinstance(error, FileNotFoundError) else 126
        assert process.stdin is not None
        assert process.stdout is not None
        reader = asyncio.create_task(self.read(process.stdout, process.stdin))
        try:
            differ = await self._compare(process.stdin)
            if self.stopped is not None:
                code = await _exit_code(process)
                print(f"the agent stopped reading after {self.stopped} client frames ({code})")
                differ = 1
            return differ
        finally:
            with contextlib.suppress(OSError):
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 5.0)
            except asyncio.TimeoutError:
                process.kill()
                # wait() also waits for the pipes, which a grandchild may hold: bounded.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(process.wait(), 5.0)
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader

    async def _compare(self, stdin: asyncio.StreamWriter) -> int:
        loop = asyncio.get_running_loop()
        answered: list[Any] = []  # recorded answers seen since the last client frame
        recorded_updates: dict[Any, list[Any]] = collections.defaultdict(list)
        requests: list[Frame] = []
        notified = 0
        sent = 0
        open_ids: list[Any] = []
        for frame in self.recording.frames:
            if frame.origin == "client" and (frame.is_request or frame.is_notification):
                # Wait as the recorded client did: for the answers it had, and (briefly)
                # for the notifications it had seen.
                for key in answered:
                    await self.wait(self.responses[key], self.timeout)
                answered.clear()

                def caught_up(count: int = notified) -> bool:
                    return self.notified >= count

                async with self.changed:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.changed.wait_for(caught_up), 1.0)
                if frame.is_request:
                    key = _key(frame.id)
                    self.responses[key] = loop.create_future()
                    requests.append(frame)
                    open_ids.append(key)
                    self.open_ids.append(key)
                try:
                    stdin.write(orjson.dumps(self.map_sessions(frame.message)) + b"\n")
                    await stdin.drain()
                except (ConnectionError, OSError):  # it exited (or closed its input)
                    self.stopped = sent
                    break
                sent += 1
            elif frame.origin == "agent" and frame.is_response and _key(frame.id) in self.responses:
                key = _key(frame.id)
                answered.append(key)
                if key in open_ids:
                    open_ids.remove(key)
            elif frame.origin == "agent" and frame.is_notification:
                notified += 1
                recorded_updates[open_ids[-1] if open_ids else None].append(frame.message)
        differing = 0
        for frame in requests:
            key = _key(frame.id)
            live = await self.wait(self.responses[key], self.timeout)
            expected = self.recorded_answers.get(key)
            label = f"{frame.method} (id {frame.id})"
            if live is None:
                differing += 1
                why = "the agent's output ended" if self.ended.is_set() else None
                print(f"{label}: no answer ({why or f'within {self.timeout:g}s'})")
                continue
            if expected is None:
                print(f"{label}: not answered in the recording; now answered")
                continue
            lines = diff(
                {k: v for k, v in expected.items() if k != "id"},
                {k: v for k, v in self.unmap_sessions(live).items() if k != "id"},
            )
            lines += self._update_diff(recorded_updates.get(key, []), self.updates.get(key, []))
            if lines:
                differing += 1
                print(f"{label}: differs")
                for line in lines:
                    print(f"    {line}")
            else:
                print(f"{label}: same")
        total = len(requests)
        print(f"{differing} of {total} answers differ" if differing else f"all {total} the same")
        return 1 if differing else 0

    def _learn_sessions(self, recorded: dict[str, Any], live: dict[str, Any]) -> None:
        a = obj(recorded.get("result")).get("sessionId")
        b = obj(live.get("result")).get("sessionId")
        if isinstance(a, str) and isinstance(b, str) and a != b:
            self.sessions[a] = b

    @staticmethod
    def _update_diff(recorded: list[Any], live: list[Any]) -> list[str]:
        if recorded == live:
            return []
        lines = [f"notifications: recorded {len(recorded)}, now {len(live)}"]
        for index, (a, b) in enumerate(zip(recorded, live, strict=False)):
            found = diff(a, b, f"notification[{index}]", limit=3)
            if found:
                return lines + found
        return lines


async def _exit_code(process: asyncio.subprocess.Process) -> str:
    try:
        code = await asyncio.wait_for(process.wait(), 5.0)
    except asyncio.TimeoutError:
        return "it is still running"
    return f"exit code {code}"


def _replace_strings(value: Any, table: dict[str, str]) -> Any:
    if isinstance(value, str):
        return table.get(value, value)
    if isinstance(value, dict):
        return {k: _replace_strings(v, table) for k, v in obj(value).items()}
    if isinstance(value, list):
        return [_replace_strings(v, table) for v in items(value)]
    return value


def against(recording: Recording, argv: Sequence[str], timeout: float) -> int:
    """Re-drive `argv` with the recorded client frames; print the differences; 1 if any."""
    print(f"replaying {sum(1 for f in recording.frames if f.origin == 'client')} client frames")
    return asyncio.run(_Against(recording, timeout).drive(argv))
