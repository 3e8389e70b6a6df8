"""A hostile review of the rewritten driver layer (engine, flows, both trampolines, the
agent runtime), black-box, on both facades where it applies.

Each test states the behaviour a user can rely on. Tests that fail demonstrate a bug (see
the docstring of each); the others guard something non-trivial. Every blocking step is
`guarded` (a hang fails the test instead of stalling the suite) and the harness kills
leftover peers at teardown.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import attrs
import pytest

from acp_sdk import AsyncClient, Client, ConnectionClosed, RequestTimeout, Side
from acp_sdk.methods import TABLE, Method
from acp_sdk.protocol._errors import LocalProtocolError
from tests._parallel import load_factor
from tests.client.facades import (
    FACADES,
    Facade,
    Harness,
    SyncFacade,
    close_bound,
    guarded,
)

pytestmark = pytest.mark.timeout(90)

T = TypeVar("T")
PEERS = Path(__file__).with_name("peers")
ROOT = Path(__file__).resolve().parents[2]
RAW = [sys.executable, str(PEERS / "raw_agent.py")]
REVIEW = [sys.executable, str(PEERS / "review_agent.py")]
GRACE: dict[str, Any] = {"close_timeout": 0.5, "terminate_timeout": 0.5}
BOUND = close_bound(0.5, 0.5)
STEP = 10.0


@attrs.frozen(kw_only=True, order=False)
class Blob:
    text: str
    length: int = 0


ECHO = Method.extension("_torture/echo", handled_by=Side.AGENT, params_type=Blob, result_type=Blob)
BIG = Method.extension(
    "_review/big",
    handled_by=Side.AGENT,
    params_type=Blob,
    result_type=Blob,
    handler_name="review_big",
)
FOREVER = Method.extension(
    "_review/forever",
    handled_by=Side.AGENT,
    params_type=Blob,
    result_type=Blob,
    handler_name="review_forever",
)
EXTENDED = TABLE.extend([ECHO, BIG, FOREVER])


@pytest.fixture(params=sorted(FACADES))
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    made = Harness(FACADES[request.param], tmp_path)
    yield made
    made.cleanup()


def in_client(
    driver: Facade,
    sync_body: Callable[[Client], T],
    async_body: Callable[[AsyncClient], Awaitable[T]],
    timeout: float,
    what: str,
) -> T:
    """Run the facade's version of one step against the driver's client, guarded."""
    if isinstance(driver, SyncFacade):
        client = driver.client
        return guarded(lambda: sync_body(client), timeout, what)
    aclient: AsyncClient = driver.client

    async def go() -> T:
        return await async_body(aclient)

    return guarded(lambda: driver.run(go), timeout, what)


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONASYNCIODEBUG", "PYTHONWARNINGS")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


# ------------------------------------------------------------------ backpressure


def test_a_call_made_while_iterating_a_turn_is_answered_under_backpressure(
    harness: Harness,
) -> None:
    """BUG: the reader stops once `max_buffered_updates` updates are unconsumed, even while
    the consumer of those very updates is blocked waiting for the answer to a call it made
    from its loop body (`for update in turn: client.request(...)`). The answer sits behind
    the updates in the pipe: the consumer waits for the reader, the reader for the
    consumer. With the default limit the same happens once 4096 updates are ahead."""
    driver = harness.open([*RAW, "--stream", "50"], table=EXTENDED, max_buffered_updates=4, **GRACE)

    def sync_body(client: Client) -> tuple[int, Blob | None]:
        seen, echoed = 0, None
        for _ in client.session("s1").prompt("go"):
            if seen == 0:
                echoed = client.request(ECHO, Blob(text="mid-turn"))
            seen += 1
        return seen, echoed

    async def async_body(client: AsyncClient) -> tuple[int, Blob | None]:
        seen, echoed = 0, None
        async for _ in client.session("s1").prompt("go"):
            if seen == 0:
                echoed = await client.request(ECHO, Blob(text="mid-turn"))
            seen += 1
        return seen, echoed

    seen, echoed = in_client(driver, sync_body, async_body, STEP, "a call from a turn's loop")
    assert (seen, echoed) == (50, Blob(text="mid-turn"))


def test_an_update_callback_may_call_the_client_under_backpressure(harness: Harness) -> None:
    """BUG: a notification callback counts against `max_buffered_updates` until it returns.
    A callback that calls the client (documented as allowed) while the limit is reached
    waits for an answer the reader will never read: the callback runner, the reader and
    every call deadlock. With `max_buffered_updates=1` a single callback suffices."""
    echoed: list[Blob] = []
    holder: list[Any] = []

    def on_update(_: object) -> None:
        if not echoed:
            echoed.append(holder[0].request(ECHO, Blob(text="from a callback")))

    async def on_update_async(_: object) -> None:
        if not echoed:
            echoed.append(await holder[0].request(ECHO, Blob(text="from a callback")))

    sync = harness.cls is SyncFacade
    driver = harness.open(
        [*RAW, "--stream", "20"],
        table=EXTENDED,
        max_buffered_updates=4,
        on_update=on_update if sync else on_update_async,
        **GRACE,
    )
    holder.append(driver.client)

    # The raw agent streams into session "s1": outside the turn (of session "other"), so
    # every update goes to `on_update`.
    def sync_body(client: Client) -> Blob:
        list(client.session("other").prompt("go"))
        return client.request(ECHO, Blob(text="after"))

    async def async_body(client: AsyncClient) -> Blob:
        [_ async for _ in client.session("other").prompt("go")]
        return await client.request(ECHO, Blob(text="after"))

    after = in_client(driver, sync_body, async_body, STEP, "a turn whose callbacks call back")
    assert after == Blob(text="after")
    assert echoed == [Blob(text="from a callback")]


def test_an_abandoned_turn_releases_its_unconsumed_updates(harness: Harness) -> None:
    """BUG: updates of a turn nobody iterates to the end (a `break`, an exception in the
    loop body, a cancelled consumer) stay counted in the engine's `buffered` forever, even
    after the turn ended and its `Turn` was garbage-collected (`_finish_turn` never
    releases them). Once the leftovers of finished turns add up to
    `max_buffered_updates`, the reader stops for good and every later call hangs."""
    driver = harness.open([*RAW, "--stream", "6"], table=EXTENDED, max_buffered_updates=8, **GRACE)

    def sync_body(client: Client) -> Blob:
        session = client.session("s1")
        for _ in range(3):
            while True:  # until the previous (abandoned) turn has ended
                try:
                    for _ in session.prompt("go"):
                        break  # take one update, abandon the rest
                    break
                except LocalProtocolError:
                    time.sleep(0.02)
        gc.collect()
        return client.request(ECHO, Blob(text="after"))

    async def async_body(client: AsyncClient) -> Blob:
        session = client.session("s1")
        for _ in range(3):
            while True:
                try:
                    async for _ in session.prompt("go"):
                        break
                    break
                except LocalProtocolError:
                    await asyncio.sleep(0.02)
        gc.collect()
        return await client.request(ECHO, Blob(text="after"))

    after = in_client(driver, sync_body, async_body, STEP, "calls after three abandoned turns")
    assert after == Blob(text="after")


def test_a_slow_turn_in_one_session_only_delays_calls_with_a_timeout(harness: Harness) -> None:
    """Guard (documented stall): a turn nobody iterates stops the reader, but a call made
    meanwhile with a timeout ends with `RequestTimeout` instead of hanging, and the
    connection recovers once the turn is consumed."""
    driver = harness.open([*RAW, "--stream", "40"], table=EXTENDED, max_buffered_updates=4, **GRACE)

    def sync_body(client: Client) -> tuple[str, int]:
        turn = client.session("s1").prompt("go")
        iterator = iter(turn)
        next(iterator)  # the turn is running; now nobody consumes it
        try:
            client.request(ECHO, Blob(text="stalled"), timeout=0.5)
            outcome = "answered"
        except RequestTimeout:
            outcome = "timed out"
        rest = sum(1 for _ in iterator)
        client.request(ECHO, Blob(text="recovered"), timeout=STEP)
        return outcome, rest

    async def async_body(client: AsyncClient) -> tuple[str, int]:
        turn = client.session("s1").prompt("go")
        await turn.__anext__()
        try:
            await client.request(ECHO, Blob(text="stalled"), timeout=0.5)
            outcome = "answered"
        except RequestTimeout:
            outcome = "timed out"
        rest = len([_ async for _ in turn])
        await client.request(ECHO, Blob(text="recovered"), timeout=STEP)
        return outcome, rest

    outcome, rest = in_client(driver, sync_body, async_body, STEP, "a stalled connection")
    assert outcome in ("timed out", "answered")
    assert rest == 39


# ------------------------------------------------------------------ user callbacks


def test_a_callback_raising_a_base_exception_does_not_stop_later_calls(harness: Harness) -> None:
    """BUG: `callback_loop` catches `Exception` only. A callback that raises a
    `BaseException` (`sys.exit()` in a thread, a `CancelledError` from something the
    callback awaited) ends the callback runner silently; later callbacks never run and
    every later call hangs in `settle`, waiting for them."""
    sync = harness.cls is SyncFacade
    ran: list[int] = []

    def on_update(_: object) -> None:
        ran.append(1)
        if len(ran) == 1:
            raise SystemExit(3)

    async def on_update_async(_: object) -> None:
        ran.append(1)
        if len(ran) == 1:
            raise asyncio.CancelledError

    driver = harness.open(
        [*RAW, "--stream", "3"],
        table=EXTENDED,
        on_update=on_update if sync else on_update_async,
        **GRACE,
    )

    def sync_body(client: Client) -> Blob:
        list(client.session("other").prompt("go"))
        return client.request(ECHO, Blob(text="after"))

    async def async_body(client: AsyncClient) -> Blob:
        [_ async for _ in client.session("other").prompt("go")]
        return await client.request(ECHO, Blob(text="after"))

    after = in_client(driver, sync_body, async_body, STEP, "a call after a failing callback")
    assert after == Blob(text="after")
    assert len(ran) == 3


def test_a_callback_raising_an_exception_is_logged_and_later_calls_work(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Guard: an ordinary exception from `on_update` is logged, and the runner goes on."""
    ran: list[int] = []

    def on_update(_: object) -> None:
        ran.append(1)
        raise ValueError("callback bug")

    driver = harness.open([*RAW, "--stream", "3"], table=EXTENDED, on_update=on_update, **GRACE)

    def sync_body(client: Client) -> Blob:
        list(client.session("other").prompt("go"))
        return client.request(ECHO, Blob(text="after"))

    async def async_body(client: AsyncClient) -> Blob:
        [_ async for _ in client.session("other").prompt("go")]
        return await client.request(ECHO, Blob(text="after"))

    with caplog.at_level("ERROR", logger="acp_sdk.driver"):
        after = in_client(driver, sync_body, async_body, STEP, "a call after failing callbacks")
    assert after == Blob(text="after")
    assert len(ran) == 3
    assert sum("callback failed" in r.getMessage() for r in caplog.records) == 3


# ------------------------------------------------------------------ closing


def test_closing_from_a_callback_releases_every_pipe(harness: Harness) -> None:
    """BUG (blocking Client): `ThreadDriver.close` skips `close_pipes()` while any of its
    threads is alive, and the thread running the close (the callback runner here, or a
    callback slower than JOIN_WAIT) always is. The agent's stdout and stderr pipes are
    then never closed (ResourceWarning, fd leak), and a second `close()` is a no-op."""
    holder: list[Any] = []
    sync = harness.cls is SyncFacade

    def on_update(_: object) -> None:
        holder[0].close()

    async def on_update_async(_: object) -> None:
        await holder[0].aclose()

    driver = harness.open(
        [*RAW, "--stream", "3"], on_update=on_update if sync else on_update_async, **GRACE
    )
    holder.append(driver.client)

    def sync_body(client: Client) -> None:
        list(client.session("other").prompt("go"))

    async def async_body(client: AsyncClient) -> None:
        [_ async for _ in client.session("other").prompt("go")]

    # The turn ends with ConnectionClosed, or normally if its answer came before the close.
    with contextlib.suppress(ConnectionClosed):
        in_client(driver, sync_body, async_body, BOUND, "a turn closed from its callback")
    deadline = time.monotonic() + BOUND
    process = driver.client.process
    assert process is not None
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the callback has returned
    guarded(driver.close, BOUND, "close again")
    assert process.returncode is not None
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    open_pipes = [
        name
        for name, pipe in (
            ("stdin", process.stdin),
            ("stdout", process.stdout),
            ("stderr", process.stderr),
        )
        if not pipe.closed
    ]
    for pipe in (process.stdout, process.stderr):  # do not leak them into later tests
        pipe.close()
    assert open_pipes == []


def test_everything_after_close_raises_connection_closed(harness: Harness) -> None:
    """Guard: after close, calls, notifications and turns raise `ConnectionClosed` at
    once (never hang); close is idempotent; open() on an open client is a no-op."""
    driver = harness.open([*RAW, "--stream", "3"], table=EXTENDED, **GRACE)

    def sync_body(client: Client) -> list[str]:
        assert client.open() is client
        client.close()
        client.close()
        errors: list[str] = []
        for step in (
            lambda: client.request(ECHO, Blob(text="x")),
            lambda: client.cancel(session_id="s1"),
            lambda: list(client.session("s1").prompt("go")),
            lambda: client.new_session(cwd="/tmp"),
        ):
            try:
                step()
                errors.append("returned")
            except ConnectionClosed:
                errors.append("closed")
        return errors

    async def async_body(client: AsyncClient) -> list[str]:
        assert await client.open() is client
        await client.aclose()
        await client.aclose()

        async def prompt() -> None:
            [_ async for _ in client.session("s1").prompt("go")]

        errors: list[str] = []
        for step in (
            lambda: client.request(ECHO, Blob(text="x")),
            lambda: client.cancel(session_id="s1"),
            prompt,
            lambda: client.new_session(cwd="/tmp"),
        ):
            try:
                await step()
                errors.append("returned")
            except ConnectionClosed:
                errors.append("closed")
        return errors

    assert in_client(driver, sync_body, async_body, BOUND, "use after close") == ["closed"] * 4


def test_close_before_open_is_harmless_and_calls_say_not_open() -> None:
    """Guard: closing a client never opened does nothing; its calls raise ConnectionClosed."""
    client = Client.spawn([*RAW])
    guarded(client.close, 5, "close before open")
    with pytest.raises(ConnectionClosed):
        client.list_sessions()
    assert client.process is None

    async def go() -> None:
        aclient = AsyncClient.spawn([*RAW])
        await aclient.aclose()
        with pytest.raises(ConnectionClosed):
            await aclient.list_sessions()
        assert aclient.process is None

    guarded(lambda: asyncio.run(go()), 10, "aclose before open")


def test_a_peer_that_closed_its_stdin_fails_calls_instead_of_hanging(harness: Harness) -> None:
    """BUG: when writing to the agent fails (it closed its stdin, but keeps running and
    keeps its stdout open), the writer drops the queue (`close_output(flush=False)`) but
    nothing fails the calls: the request just dropped, and every later one (begin_call
    still accepts them; `_queue_frame` silently discards them), waits forever for an
    answer to a request that was never sent."""
    driver = harness.open([*REVIEW, "raw-close-stdin"], table=EXTENDED, **GRACE)

    def sync_body(client: Client) -> list[str]:
        outcomes = []
        for _ in range(2):
            try:
                client.request(ECHO, Blob(text="into a closed pipe"))
                outcomes.append("answered")
            except ConnectionClosed:
                outcomes.append("closed")
        return outcomes

    async def async_body(client: AsyncClient) -> list[str]:
        outcomes = []
        for _ in range(2):
            try:
                await client.request(ECHO, Blob(text="into a closed pipe"))
                outcomes.append("answered")
            except ConnectionClosed:
                outcomes.append("closed")
        return outcomes

    outcomes = in_client(driver, sync_body, async_body, 5.0, "calls to an agent with no stdin")
    assert outcomes == ["closed", "closed"]
    guarded(driver.close, BOUND, "closing")


def test_an_agent_that_closed_its_stdout_but_runs_on(harness: Harness) -> None:
    """Guard: an agent that closes its stdout but keeps running (and ignores stdin EOF):
    calls fail with a `ConnectionClosed` that says so, and close() still stops it within
    its bound."""
    driver = harness.open([*REVIEW, "raw-close-stdout"], table=EXTENDED, **GRACE)

    def sync_body(client: Client) -> str:
        try:
            client.request(ECHO, Blob(text="x"))
        except ConnectionClosed as error:
            return str(error)
        return "answered"

    async def async_body(client: AsyncClient) -> str:
        try:
            await client.request(ECHO, Blob(text="x"))
        except ConnectionClosed as error:
            return str(error)
        return "answered"

    message = in_client(driver, sync_body, async_body, 5.0, "a call to a mute agent")
    assert "closed its output" in message
    started = time.monotonic()
    guarded(driver.close, BOUND, "closing a mute agent")
    assert time.monotonic() - started < BOUND * load_factor()
    process = driver.client.process
    assert process is not None
    assert process.returncode is not None


# ------------------------------------------------------------------ timeouts and interrupts


def test_answers_racing_their_timeouts_end_each_call_exactly_once(harness: Harness) -> None:
    """Guard: calls whose timeout is about their round trip either return their own value
    or raise `RequestTimeout` (never hang, never another error, never another's value),
    and late answers of timed-out calls do not disturb the next calls."""
    driver = harness.open([*RAW], table=EXTENDED, **GRACE)
    timeouts = [0.0002 * (1 + i % 25) for i in range(150)]

    def sync_body(client: Client) -> list[str]:
        outcomes = []
        for index, timeout in enumerate(timeouts):
            try:
                got = client.request(ECHO, Blob(text=str(index)), timeout=timeout)
                outcomes.append("ok" if got.text == str(index) else f"wrong {got.text}")
            except RequestTimeout:
                outcomes.append("timeout")
        final = client.request(ECHO, Blob(text="final"), timeout=STEP)
        outcomes.append(final.text)
        return outcomes

    async def async_body(client: AsyncClient) -> list[str]:
        outcomes = []
        for index, timeout in enumerate(timeouts):
            try:
                got = await client.request(ECHO, Blob(text=str(index)), timeout=timeout)
                outcomes.append("ok" if got.text == str(index) else f"wrong {got.text}")
            except RequestTimeout:
                outcomes.append("timeout")
        final = await client.request(ECHO, Blob(text="final"), timeout=STEP)
        outcomes.append(final.text)
        return outcomes

    outcomes = in_client(driver, sync_body, async_body, 30.0, "calls racing their timeouts")
    assert outcomes[-1] == "final"
    assert set(outcomes[:-1]) <= {"ok", "timeout"}


def test_ctrl_c_during_a_blocking_call_gives_it_up_and_the_client_goes_on() -> None:
    """Guard (blocking Client, main thread): Ctrl-C while waiting for an answer raises
    KeyboardInterrupt at once, tells the agent (`$/cancel_request`, which cancels its
    handler), and the client stays usable."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("needs the main thread")
    client = Client.spawn([*REVIEW, "sdk-big"], table=EXTENDED, **GRACE)
    guarded(client.open, STEP, "opening")
    main = threading.main_thread().ident
    assert main is not None
    # A real SIGINT to the main thread, as Ctrl-C delivers it (interrupt_main() would not
    # wake a blocked lock acquire).
    timer = threading.Timer(0.5, lambda: signal.pthread_kill(main, signal.SIGINT))
    try:
        timer.start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            client.request(FOREVER, Blob(text="never answered"), timeout=STEP)
        assert time.monotonic() - started < 3.0 * load_factor()
        after = guarded(lambda: client.request(BIG, Blob(text="", length=5)), STEP, "next")
        assert after == Blob(text="xxxxx", length=5)
    finally:
        timer.cancel()
        guarded(client.close, BOUND, "closing")


# ------------------------------------------------------------------ big frames


def test_a_40mb_frame_in_each_direction(harness: Harness) -> None:
    """Guard: one 40 MB request and its 40 MB answer (under the 64 MiB frame limit) go
    through, with a 4 MiB send buffer, in reasonable time."""
    driver = harness.open([*RAW], table=EXTENDED, **GRACE)
    payload = "y" * (40 << 20)

    def sync_body(client: Client) -> int:
        return len(client.request(ECHO, Blob(text=payload)).text)

    async def async_body(client: AsyncClient) -> int:
        return len((await client.request(ECHO, Blob(text=payload))).text)

    assert in_client(driver, sync_body, async_body, 60.0, "a 40 MB round trip") == 40 << 20


# ------------------------------------------------------------------ agent side


def test_an_agent_delivers_an_owed_answer_to_a_client_that_reads_late() -> None:
    """BUG (agent runtime): at the client's end of input an answer already queued is cut
    short when the client reads it more than ~1 s later. `AsyncFacade.aclose` waits at
    most 1 s for the writer (`min(1.0, ...)`), then cancels it mid-`drain`, and
    `_serve_stdio` closes the protocol fd right after closing the write transport, so
    whatever the transport still buffers is dropped: the client gets a truncated line
    (exactly one pipe's worth here) and the agent exits 0. The docs promise the owed
    answers are flushed for a few seconds (ANSWER_GRACE)."""
    size = 300_000
    process = subprocess.Popen(
        [*REVIEW, "sdk-big"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )
    assert process.stdin is not None
    assert process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    try:
        stdin.write(line({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}))
        stdin.flush()
        first = guarded(stdout.readline, STEP, "the initialize answer")
        assert b'"protocolVersion":1' in first
        request = {"id": 1, "method": "_review/big", "params": {"text": "", "length": size}}
        stdin.write(line(request))
        stdin.close()  # the client ends its input; the answer is owed
        time.sleep(1.5)  # a busy client, reading late (well within ANSWER_GRACE)
        rest = guarded(stdout.read, STEP, "reading the owed answer")
        guarded(lambda: process.wait(STEP), STEP + 1, "the agent's exit")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        stdout.close()
    assert rest.endswith(b"\n"), f"a truncated frame: {len(rest)} bytes, no newline"
    answer = json.loads(rest)
    assert len(answer["result"]["text"]) == size
    assert process.returncode == 0


def test_an_agent_whose_handler_never_returns_exits_after_its_grace() -> None:
    """Guard (agent runtime): a non-prompt handler that never returns keeps the agent
    alive at most ANSWER_GRACE (5 s) plus the close bound after the client's end of
    input; then the agent exits 0."""
    process = subprocess.Popen(
        [*REVIEW, "sdk-big"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )
    assert process.stdin is not None
    assert process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    try:
        stdin.write(line({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}))
        stdin.flush()
        guarded(stdout.readline, STEP, "the initialize answer")
        stdin.write(line({"id": 1, "method": "_review/forever", "params": {"text": ""}}))
        stdin.close()
        started = time.monotonic()
        guarded(lambda: process.wait(20), 21, "the agent's exit")
        assert time.monotonic() - started < (5.0 + close_bound(2.0, 2.0)) * load_factor()
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        stdout.close()


def test_run_agent_with_stdout_closed_exits_instead_of_hanging() -> None:
    """Guard (agent runtime): started with fd 1 closed, the agent exits (with an error)
    rather than serving into nowhere or hanging."""
    script = (
        "import os, runpy, sys; os.close(1); sys.argv = sys.argv[1:]; "
        "runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(PEERS / "review_agent.py"), "sdk-big"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    try:
        _, err = guarded(lambda: process.communicate(timeout=STEP), STEP + 1, "the agent's exit")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode not in (None, 0), err.decode(errors="replace")[-2000:]
