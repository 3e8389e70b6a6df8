"""What a remote connection talks to on the server: an in-process `Agent`, or a stdio
agent subprocess (one per connection). Both take and give whole messages; underneath
they speak ACP's newline-framed stdio, so a message holding a raw newline is re-encoded
compactly before it goes in."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

import orjson

from acp_sdk._driver.process import AgentProcess
from acp_sdk.protocol._framing import FRAME_TOO_LARGE, LineFramer

if TYPE_CHECKING:
    from acp_sdk.agent._runtime import Agent
    from acp_sdk.agent._store import SessionStore

log = logging.getLogger("acp_sdk.remote")

OUTPUT_BUFFER: Final = 256 * 1024
"""Bytes of an agent's output queued for the connection before the agent waits. The
in-process agent's runtime queues up to `max_send_buffer` (4 MiB) of its own before
that, so this only needs to keep the connection's sender busy; 4 MiB here doubled what
a connection whose client stops reading could hold."""
INPUT_BUFFER: Final = 4 * 1024 * 1024
"""Bytes of a client's messages waiting for an in-process agent before the client waits."""


Deliver = Callable[[bytes], Awaitable[None]]
"""Sends one message to the remote client (a WebSocket frame)."""


class StartFailed(Exception):
    """The agent could not be started for a connection; `str()` says why in one line
    (`my-agent not found`)."""


class Backend(Protocol):
    def deliver_to(self, deliver: Deliver) -> bool: ...
    async def start(self) -> None: ...
    async def send(self, message: bytes) -> None: ...
    async def recv(self) -> bytes | None: ...
    async def ended(self) -> tuple[bool, str]: ...
    async def aclose(self) -> None: ...


def one_line(message: bytes) -> bytes:
    """The message as one stdio line (without its newline)."""
    if b"\n" not in message and b"\r" not in message:
        return message
    try:
        return orjson.dumps(orjson.loads(message))
    except orjson.JSONDecodeError:
        return b"\x00"  # still malformed, so the agent answers a parse error


class Gate:
    """A wait until `open()`: futures made only when someone waits (an idle connection
    holds no waiter objects; an asyncio.Event costs a deque of its own, about 0.8 KB).
    Each wait has its own future: a waiter that is cancelled cancels only its own (a
    shared one would end every other wait with CancelledError: several HTTP POSTs of a
    connection wait for room in the agent's input)."""

    __slots__ = ("_waiter",)

    def __init__(self) -> None:
        # None, the one waiting future, or a list of them when several wait.
        self._waiter: asyncio.Future[None] | list[asyncio.Future[None]] | None = None

    async def wait(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        current = self._waiter
        if current is None or (not isinstance(current, list) and current.done()):
            self._waiter = waiter
        elif isinstance(current, list):
            current.append(waiter)
        else:
            self._waiter = [current, waiter]
        await waiter

    def open(self) -> None:
        current = self._waiter
        if current is None:
            return
        self._waiter = None
        for waiter in current if isinstance(current, list) else (current,):
            if not waiter.done():
                waiter.set_result(None)


class _Lines:
    """Frames out of a byte stream, queued with a byte bound (`OUTPUT_BUFFER`): over it,
    the writer's `drain()` (or the pipe's pump) waits until the reader takes some."""

    __slots__ = ("_arrived", "_eof", "_frames", "_next", "_room", "framer", "queued")

    def __init__(self, max_message_size: int) -> None:
        self.framer = LineFramer(max_message_size)
        # A list read from `_next` on, emptied whenever it has been read through: an
        # empty deque costs 0.8 KB, an empty list 56 bytes (thousands of idle connections).
        self._frames: list[bytes] = []
        self._next = 0
        self._eof = False
        self.queued = 0
        self._arrived = Gate()
        self._room = Gate()

    def frames(self, data: bytes) -> list[bytes]:
        """The whole frames `data` completes (over-long ones dropped, with a warning)."""
        frames: list[bytes] = []
        for frame in self.framer.feed(data):
            if frame is FRAME_TOO_LARGE:
                log.warning("dropped an agent message over %d bytes", self.framer.max_frame_size)
                continue
            assert isinstance(frame, bytes)
            frames.append(frame)
        return frames

    def feed(self, data: bytes) -> None:
        for frame in self.frames(data):
            self._frames.append(frame)
            self.queued += len(frame)
        if not data:
            self._eof = True
        self._arrived.open()

    def full(self) -> bool:
        return self.queued > OUTPUT_BUFFER and not self._eof

    async def room(self) -> None:
        """Wait while more than `OUTPUT_BUFFER` bytes are queued."""
        while self.full():
            await self._room.wait()

    async def get(self) -> bytes | None:
        while self._next == len(self._frames):
            if self._eof:
                return None
            await self._arrived.wait()
        message = self._frames[self._next]
        self._next += 1
        if self._next == len(self._frames):
            self._frames.clear()
            self._next = 0
        self.queued -= len(message)
        if self.queued <= OUTPUT_BUFFER:
            self._room.open()
        return message


class _Input:
    """The agent's input: bytes in order, at most `INPUT_BUFFER` waiting (the client is
    made to wait beyond that, as a pipe would make it)."""

    __slots__ = ("_arrived", "_chunks", "_eof", "_room", "_size")

    def __init__(self) -> None:
        self._chunks: list[bytes] = []  # a list, not a deque: see _Lines
        self._size = 0
        self._eof = False
        self._arrived = Gate()
        self._room = Gate()

    def at_eof(self) -> bool:
        return self._eof

    async def put(self, data: bytes) -> None:
        while self._size > INPUT_BUFFER and not self._eof:
            await self._room.wait()
        if self._eof:
            raise ConnectionResetError("the agent is gone")
        self._chunks.append(data)
        self._size += len(data)
        self._arrived.open()

    def end(self) -> None:
        self._eof = True
        self._arrived.open()
        self._room.open()

    async def read(self, n: int = -1, /) -> bytes:
        while not self._chunks:
            if self._eof:
                return b""
            await self._arrived.wait()
        # What waits, in one read (the agent's reader frames lines itself), but whole
        # chunks of at most `n` bytes (at least one): the reader checks the runtime's
        # rules (max_inflight, ...) between reads, as over a pipe.
        chunks = self._chunks
        take, size = 1, len(chunks[0])
        while take < len(chunks) and (n < 0 or size + len(chunks[take]) <= n):
            size += len(chunks[take])
            take += 1
        data = chunks[0] if take == 1 else b"".join(chunks[:take])
        del chunks[:take]
        self._size -= len(data)
        if self._size <= INPUT_BUFFER:
            self._room.open()
        return data


class AgentBackend:
    """An in-process `Agent`, served by `serve_agent` over in-memory streams."""

    def __init__(
        self, agent: Agent, max_message_size: int, store: SessionStore | None = None
    ) -> None:
        self.agent = agent
        self.store = store  # shared by every connection; the app's owner closes it
        self._input = _Input()
        self._output = _Lines(max_message_size)
        self._deliver: Deliver | None = None
        self._task: asyncio.Task[None] | None = None

    def deliver_to(self, deliver: Deliver) -> bool:
        """Have the agent's own writer task send each message with `deliver` (call before
        `start`): no queue and no task switch between the agent and the socket, and a
        client that reads slowly makes the agent's writer wait (the runtime then holds up
        to its `max_send_buffer`). `recv()` then only returns None once the agent ends."""
        self._deliver = deliver
        return True

    async def start(self) -> None:
        from acp_sdk.agent._runtime import serve_agent

        writer = _OutputWriter(self._output, self._deliver)
        self._task = asyncio.get_running_loop().create_task(
            serve_agent(self.agent, self._input, writer, store=self.store)
        )

    async def send(self, message: bytes) -> None:
        if self._input.at_eof() or (self._task is not None and self._task.done()):
            raise ConnectionResetError("the agent is gone")
        await self._input.put(one_line(message) + b"\n")

    async def recv(self) -> bytes | None:
        return await self._output.get()

    async def ended(self) -> tuple[bool, str]:
        """Once `recv()` gave None: whether that was a normal end, and how it ended."""
        return True, "the agent ended the connection"

    async def aclose(self) -> None:
        self._input.end()
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(self._task), 10)
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        self._output.feed(b"")


class _OutputWriter:
    """The in-process agent's byte stream out: its frames go into `lines` for `recv()`,
    or straight to the client through `deliver`, awaited in `drain()` (the runtime's
    writer task calls `write` then `drain`)."""

    __slots__ = ("_closed", "_deliver", "_lines", "_pending")

    def __init__(self, lines: _Lines, deliver: Deliver | None = None) -> None:
        self._lines = lines
        self._deliver = deliver
        self._pending: list[bytes] = []
        self._closed = False

    def write(self, data: bytes, /) -> None:
        if self._closed:
            raise BrokenPipeError("closed")
        if self._deliver is None:
            self._lines.feed(data)
        else:
            self._pending += self._lines.frames(data)

    async def drain(self) -> None:
        if self._deliver is None:
            await self._lines.room()
            return
        while self._pending:
            frames, self._pending = self._pending, []
            for frame in frames:
                try:
                    await self._deliver(frame)
                except Exception as error:  # ASGI servers raise their own "disconnected"
                    raise BrokenPipeError(f"the client is gone: {error!r}") from error

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._lines.feed(b"")


class ProcessBackend:
    """A stdio agent subprocess in its own process group (one per remote connection),
    stopped with the same escalation as a spawned client's agent."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None,
        cwd: str | os.PathLike[str] | None,
        max_message_size: int,
        stderr: Callable[[str], Any] | None = None,
        close_timeout: float = 2.0,
        terminate_timeout: float = 2.0,
    ) -> None:
        self.argv = tuple(argv)
        self.env = env
        self.cwd = cwd
        self.stderr = stderr
        self.close_timeout = close_timeout
        self.terminate_timeout = terminate_timeout
        self.process: AgentProcess | None = None
        self._output = _Lines(max_message_size)
        self._tasks: list[asyncio.Task[None]] = []
        self._writer: Any = None
        self._closers: tuple[Callable[[], Any], ...] = ()
        self._closed = False

    def deliver_to(self, deliver: Deliver) -> bool:
        return False  # the pipe is read by a task of ours; the server takes from recv()

    async def start(self) -> None:
        from acp_sdk._driver.aio import open_process_pipes
        from acp_sdk._driver.process import log_agent_stderr, start_failure

        try:
            self.process = AgentProcess(
                self.argv, env=self.env, cwd=self.cwd, stderr=self.stderr or log_agent_stderr
            )
        except OSError as error:  # each connection's client gets 502, the log one line
            raise StartFailed(start_failure(error, self.cwd)) from error
        stdout, self._writer, stderr, self._closers = await open_process_pipes(self.process)
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._pump(stdout, self._output.feed)),
            loop.create_task(self._pump(stderr, self.process.stderr.feed)),
        ]

    async def _pump(self, stream: Any, feed: Callable[[bytes], None]) -> None:
        while True:
            try:
                data = await stream.read(1 << 16)
            except (OSError, ValueError):
                data = b""
            feed(data)
            if not data:
                return
            if feed == self._output.feed:
                await self._output.room()

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ConnectionResetError("the agent is gone")
        try:
            self._writer.write(one_line(message) + b"\n")
            await self._writer.drain()
        except (OSError, RuntimeError) as error:
            raise ConnectionResetError(f"the agent is gone: {error}") from error

    async def recv(self) -> bytes | None:
        return await self._output.get()

    async def ended(self) -> tuple[bool, str]:
        """Once `recv()` gave None: whether the agent exited with code 0, and how it
        ended (its exit status, waited for up to `EXIT_WAIT`)."""
        process = self.process
        if process is None:
            return False, "the agent did not start"
        for delay in process.exit_steps():
            await asyncio.sleep(delay)
        code = process.returncode
        if code is None:
            return False, "the agent closed its output"
        if code < 0:
            try:
                name = f" ({signal.Signals(-code).name})"
            except ValueError:
                name = ""
            return False, f"the agent was killed by signal {-code}{name}"
        return code == 0, f"the agent exited with code {code}"

    async def aclose(self) -> None:
        """Close the agent's stdin, then SIGTERM and SIGKILL its group if it lingers."""
        if self._closed:
            return
        self._closed = True
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
        if self.process is not None:
            for delay in self.process.stop_steps(self.close_timeout, self.terminate_timeout):
                await asyncio.sleep(delay)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        for close in self._closers:
            with contextlib.suppress(Exception):
                close()
        if self.process is not None:
            self.process.close_pipes()
        self._output.feed(b"")


WARM_UP_TIMEOUT: Final = 60.0


async def warm_up(max_message_size: int) -> None:
    """Build what the first message builds (the codec, the models, the method table) by
    serving one `initialize` to a bare Agent in memory, before any client connects: a
    server whose file descriptors run out under a burst cannot import them then (every
    connection of the burst failed so in a test at the limit)."""
    from acp_sdk.agent._runtime import Agent

    backend = AgentBackend(Agent(), max_message_size)
    params: dict[str, object] = {"protocolVersion": 1, "clientCapabilities": {}}
    try:
        await backend.start()
        await backend.send(
            orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        )
        await asyncio.wait_for(backend.recv(), WARM_UP_TIMEOUT)
    except Exception:  # only a head start: the first connection builds them otherwise
        log.debug("warming up the in-process agent path failed", exc_info=True)
    finally:
        await backend.aclose()
