"""One turn, run for a person at a terminal: the live turn, permission questions and
Ctrl-C (see `acp_sdk.tools._cli` for the threads and the exit codes)."""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import contextlib
import logging
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from types import FrameType, TracebackType
from typing import Any, cast

import orjson

from acp_sdk._driver.turn import CANCEL_GRACE
from acp_sdk.client._common import INITIALIZE_TIMEOUT
from acp_sdk.handlers import AllowOnce, ClientHandlers
from acp_sdk.protocol._codec import to_json_value
from acp_sdk.protocol._errors import (
    ConnectionClosed,
    NotAnAgent,
    RequestError,
    RequestTimeout,
)
from acp_sdk.protocol._state import State
from acp_sdk.schema import (
    AuthMethodTerminal,
    CancelledPermissionOutcome,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    SessionNotification,
)
from acp_sdk.tools._render import Progress, Renderer, neutralize

EXIT_OK, EXIT_AGENT, EXIT_USAGE, EXIT_PROTOCOL, EXIT_TIMEOUT, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
EXIT_TIMEOUT_UNSTOPPED = 5
"""A limit passed and the agent did not end the turn within the grace after the cancel
(EXIT_TIMEOUT: it passed and the agent stopped, answering `cancelled`)."""
SCENARIO_AGENT = [sys.executable, "-m", "acp_sdk", "agent"]
AUTH_REQUIRED = -32000
STDERR_LINES = 10  # the agent's last stderr lines shown when it fails
GIVE_UP_AFTER_CANCEL = CANCEL_GRACE  # the SDK's grace after a timeout's session/cancel
CATCH_UP = 2.0  # seconds a permission question waits for earlier updates to be shown
PUMP_AHEAD = 256  # updates the turn pump may queue ahead of the screen
WAITING_LINE_AFTER = 2.0  # seconds without an initialize answer before saying so

log = logging.getLogger("acp_sdk.cli")


class _CliError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class _Interrupted(Exception):  # a signal, not a failure
    """Raised by the SIGINT handler into a permission question (main thread, in input())."""

    def __init__(self, by_user: bool) -> None:
        super().__init__("interrupted")
        self.by_user = by_user


def _cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=CancelledPermissionOutcome())


def _reject(params: RequestPermissionRequest) -> RequestPermissionResponse:
    """The non-interactive answer: the `reject_once` option, else `cancelled`."""
    for option in params.options:
        if option.kind == "reject_once":
            return RequestPermissionResponse(
                outcome=SelectedPermissionOutcome(option_id=option.option_id)
            )
    return _cancelled()


def _settle(
    future: concurrent.futures.Future[RequestPermissionResponse],
    response: RequestPermissionResponse,
) -> None:
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_result(response)


# ---------------------------------------------------------------------------- one turn


class _Live:
    """The turn on screen: one queue of events, consumed by the main thread in order."""

    def __init__(self, turn: Any, session_id: str) -> None:
        self.turn = turn
        self.session_id = session_id
        self.events: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self.forwarded = 0  # updates the pump has queued
        self.shown = 0  # of those, updates the main thread has taken
        self.done = False  # the main thread left the turn: the pump must not wait
        self.changed = threading.Condition()
        self.pending: set[concurrent.futures.Future[RequestPermissionResponse]] = set()
        self.cancelled = False  # session/cancel sent (Ctrl-C or --timeout)
        self.interrupts = 0  # Ctrl-C presses during this turn
        self.asking = False  # the main thread is in input() for a permission question
        self.poked = False  # the next SIGINT is ours (wake the question), not the user's
        self.main = threading.main_thread().ident
        self.handles_sigint = False  # on_sigint is installed (the CLI runs on the main thread)

    def pump(self) -> None:
        """Thread: move the turn's updates into the queue, then its end (or error)."""
        try:
            for update in self.turn:
                with self.changed:
                    # Stay at most PUMP_AHEAD updates ahead of the screen, so the SDK's
                    # backpressure still reaches the agent (a flood cannot fill memory).
                    self.changed.wait_for(
                        lambda: self.done or self.forwarded - self.shown < PUMP_AHEAD
                    )
                self.events.put(("update", update))
                with self.changed:
                    self.forwarded += 1
                    self.changed.notify_all()
            self.events.put(("end", None))
        except BaseException as error:  # handed to the main thread
            self.events.put(("end", error))
        self.poke()  # a question still on screen is moot now

    def took_update(self) -> None:
        with self.changed:
            self.shown += 1
            self.changed.notify_all()

    def leave(self) -> None:
        with self.changed:
            self.done = True
            self.changed.notify_all()

    def poke(self) -> None:
        """Wake a permission question the main thread is blocked in (POSIX only)."""
        if self.asking and self.handles_sigint and self.main is not None:
            self.poked = True
            with contextlib.suppress(OSError, ValueError, AttributeError):
                signal.pthread_kill(self.main, signal.SIGINT)

    def caught_up(self) -> None:
        """Wait until every update routed before a permission request is queued, so the
        question is shown after them (the SDK counts them on its reader as `received`)."""
        target = getattr(self.turn, "received", 0)
        with self.changed:
            self.changed.wait_for(lambda: self.forwarded >= target, timeout=CATCH_UP)

    def ask(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        """Worker thread: queue the question for the main thread and wait for its answer."""
        future: concurrent.futures.Future[RequestPermissionResponse] = concurrent.futures.Future()
        self.pending.add(future)
        self.events.put(("ask", params, future))
        try:
            return future.result()
        finally:
            self.pending.discard(future)

    def answer_pending(self) -> None:
        """Answer every question not answered yet `cancelled` (the spec requires it once
        the turn is cancelled; also on the way out)."""
        for future in list(self.pending):
            _settle(future, _cancelled())

    def on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.poked:
            self.poked = False
            if self.asking:
                raise _Interrupted(by_user=False)
            return
        self.interrupts += 1
        if self.interrupts > 1:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # quitting; restored on the way out
            raise KeyboardInterrupt
        if self.asking:
            raise _Interrupted(by_user=True)
        self.events.put(("interrupt",))


class _Ui:
    """What the permission handler shares with the main thread."""

    def __init__(self, renderer: Renderer | None) -> None:
        self.renderer = renderer
        self.live: _Live | None = None
        self.progress: Progress | None = None


class Permissions(ClientHandlers):
    """Allow (`--yes`), ask on a terminal, or reject; the main thread shows the decision."""

    def __init__(self, mode: str, ui: _Ui) -> None:
        self.mode = mode  # "allow" | "ask" | "reject"
        self.ui = ui

    def _policy(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        return AllowOnce().request_permission(params) if self.mode == "allow" else _reject(params)

    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        live = self.ui.live
        if live is None or live.session_id != params.session_id:
            # No turn on screen (nobody to ask without fighting the chat prompt for stdin).
            response = self._policy(params)
            if self.ui.renderer is not None:
                self.ui.renderer.permission(params, _choice(response))
            return response
        live.caught_up()
        if live.cancelled:
            response = _cancelled()
        elif self.mode == "ask":
            return live.ask(params)  # the main thread shows the decision
        else:
            response = self._policy(params)
        live.events.put(("decided", params, response))
        return response


def _choice(response: RequestPermissionResponse) -> str | None:
    return getattr(response.outcome, "option_id", None)


def _set_sigint(handler: Any) -> Callable[[], None]:
    """Install a SIGINT handler (main thread only); returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGINT, handler)

    def restore() -> None:
        if previous is not None:  # None: installed outside Python; leave ours
            signal.signal(signal.SIGINT, previous)

    return restore


def _ignore_sigint() -> Callable[[], None]:
    return _set_sigint(signal.SIG_IGN)


def run_turn(agent: _Agent, session: Any, text: str, args: argparse.Namespace, ui: _Ui) -> str:
    """One turn, rendered (or as JSON lines); returns the stop reason."""
    renderer = ui.renderer
    # The SDK keeps the turn's clock: past a limit it sends session/cancel, and past
    # the grace after it the turn raises RequestTimeout.
    turn = session.prompt(
        text,
        timeout=getattr(args, "timeout", None),
        idle_timeout=getattr(args, "idle_timeout", None),
    )
    live = _Live(turn, session.session_id)
    ui.live = live
    restore_sigint = _set_sigint(live.on_sigint)
    live.handles_sigint = threading.current_thread() is threading.main_thread()
    pump = threading.Thread(target=live.pump, name="acp-cli-turn", daemon=True)
    pump.start()
    try:
        with Progress(enabled=renderer is not None) as progress:
            ui.progress = progress
            while True:
                try:
                    event = live.events.get()
                    progress.touch()
                    kind = event[0]
                    if kind == "end":
                        if event[1] is not None:
                            raise event[1]
                        break
                    if kind == "update":
                        _show(event[1], session.session_id, renderer)
                        live.took_update()
                    elif kind == "decided":
                        if renderer is not None:
                            renderer.permission(event[1], _choice(event[2]))
                    elif kind == "ask":
                        _ask(live, event[1], event[2], ui)
                    elif kind == "interrupt":
                        _cancel(live, "cancelled")
                except _Interrupted as interrupted:  # a stray one, outside a question
                    live.asking = False
                    if interrupted.by_user:
                        _cancel(live, "cancelled")
    except RequestTimeout as error:
        if renderer is not None:
            renderer.stop("cancelled", f"{_why(turn, args)}; the agent did not stop")
        raise _CliError(
            f"timed out ({_why(turn, args)}); the agent did not end the turn within "
            f"{GIVE_UP_AFTER_CANCEL:g}s of the cancel",
            EXIT_TIMEOUT_UNSTOPPED,
        ) from error
    finally:
        live.leave()
        ui.live = None
        ui.progress = None
        live.answer_pending()
        restore_sigint()
    reason = str(turn.stop_reason)
    if turn.timed_out:
        if renderer is not None:
            renderer.stop(neutralize(reason), _why(turn, args))
        raise _CliError(f"timed out ({_why(turn, args)}); the agent stopped", EXIT_TIMEOUT)
    if renderer is not None:
        renderer.stop(neutralize(reason))
    else:
        summary = {"stopReason": reason, "sessionId": session.session_id}
        sys.stdout.buffer.write(orjson.dumps(summary) + b"\n")
        sys.stdout.flush()
    return reason


def _why(turn: Any, args: argparse.Namespace) -> str:
    """Which limit made the SDK cancel the turn, for people."""
    if turn.timed_out == "idle_timeout":
        return f"no update for {args.idle_timeout:g}s (--idle-timeout)"
    return f"the turn took over {args.timeout:g}s (--timeout)"


def _cancel(live: _Live, why: str) -> None:
    """Send `session/cancel` once; the turn still ends with the agent's answer."""
    if live.cancelled:
        return
    live.cancelled = True
    again = " again" if live.interrupts else ""
    print(f"\n{why}: waiting for the agent to stop; Ctrl-C{again} to quit", file=sys.stderr)
    with contextlib.suppress(ConnectionClosed):  # then the turn ends with that error
        live.turn.cancel()
    live.answer_pending()


def _ask(
    live: _Live,
    params: RequestPermissionRequest,
    future: concurrent.futures.Future[RequestPermissionResponse],
    ui: _Ui,
) -> None:
    """Main thread: ask the person (stdin is a terminal), answer the agent, show it."""
    interrupted_by_user = False
    if future.done() or live.cancelled:
        _settle(future, _cancelled())
    else:
        title = neutralize(params.tool_call.title or params.tool_call.tool_call_id)
        lines = [f"\nThe agent asks permission: {title}"]
        lines += [
            f"  {number}) {neutralize(option.name)} ({neutralize(str(option.kind))})"
            for number, option in enumerate(params.options, 1)
        ]
        lines.append("choose a number (empty: reject; Ctrl-C: cancel the turn): ")
        progress = ui.progress
        if progress is not None:
            progress.paused = True
            progress.touch()
        response = None
        try:
            live.asking = True  # from here, Ctrl-C raises _Interrupted
            print("\n".join(lines), end="", file=sys.stderr, flush=True)
            # input(), not a read of the descriptor: the chat prompt reads through
            # readline, which keeps an answer typed ahead of the question in its buffer.
            # A Ctrl-C within microseconds of the question appearing (before readline
            # waits) is only seen at the next key: a person cannot press that fast.
            answer = input().strip()  # the prompt went to stderr: stdout may be JSON lines
            live.asking = False
        except EOFError:
            answer = ""
        except _Interrupted as interrupted:
            print(file=sys.stderr)
            interrupted_by_user = interrupted.by_user
            response = _cancelled()
            answer = ""
        finally:
            live.asking = False
            if progress is not None:
                progress.paused = False
                progress.touch()
        if response is None:
            if answer.isdigit() and 1 <= int(answer) <= len(params.options):
                chosen = params.options[int(answer) - 1].option_id
                response = RequestPermissionResponse(
                    outcome=SelectedPermissionOutcome(option_id=chosen)
                )
            else:
                response = _reject(params)
        _settle(future, response)
    if ui.renderer is not None:
        ui.renderer.permission(params, _choice(future.result()))
    if interrupted_by_user:
        _cancel(live, "cancelled")


def _show(update: Any, session_id: str, renderer: Renderer | None) -> None:
    if renderer is not None:
        renderer.update(update)
        return
    notification = SessionNotification(session_id=session_id, update=update)
    sys.stdout.buffer.write(orjson.dumps(to_json_value(notification)) + b"\n")
    sys.stdout.flush()


# ---------------------------------------------------------------------------- the agent


def _tail_text(lines: list[str]) -> str:
    return "; the last lines of its stderr:\n" + "\n".join(
        f"  | {neutralize(line[:1000])}" for line in lines
    )


class _Agent:
    """The agent process for one command: started exactly once, on `with`; closed on the
    way out, and its failure (exit code, last stderr lines) turned into one message."""

    def __init__(
        self, argv: Sequence[str], args: argparse.Namespace, handlers: list[ClientHandlers]
    ) -> None:
        from acp_sdk.client._sync import Client

        self.argv = list(argv)
        self.debug = bool(getattr(args, "debug", False))
        self.tail: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.client: Any = Client.spawn(
            self.argv,
            cwd=args.cwd,
            handlers=handlers,
            stderr=self._stderr_line,
            initialize_timeout=INITIALIZE_TIMEOUT,
        )

    def _stderr_line(self, line: str) -> None:
        if line.strip():
            self.tail.append(line[:1000])
        if self.debug:
            # One write: print() writes the newline apart, and other threads log too.
            sys.stderr.write(f"[agent] {neutralize(line)}\n")
            sys.stderr.flush()
        else:
            logging.getLogger("acp_sdk.agent.stderr").info("%s", line)

    def __enter__(self) -> Any:
        waiting = threading.Timer(WAITING_LINE_AFTER, self._waiting_line)
        waiting.daemon = True
        waiting.start()
        try:
            self.client.open()
        except NotAnAgent as error:  # `initialize` got no answer, only other output
            raise _CliError(neutralize(str(error)), EXIT_AGENT) from error
        except RequestTimeout as error:
            if error.method != "initialize":
                raise
            raise _CliError(neutralize(str(error)), EXIT_AGENT) from error
        except ConnectionClosed as error:  # before OSError: it is a ConnectionError too
            self.__exit__(type(error), error, error.__traceback__)  # raises the failure
            raise
        except FileNotFoundError:
            raise _CliError(
                f"cannot start the agent: {self.argv[0]} not found", EXIT_AGENT
            ) from None
        except OSError as error:
            raise _CliError(f"cannot start the agent: {error}", EXIT_AGENT) from None
        finally:
            waiting.cancel()
        return self.client

    def _waiting_line(self) -> None:
        """`initialize` is taking long: say so once, with what the agent printed that
        was not JSON-RPC (a usage line says it is not an agent, or not run right)."""
        connection = getattr(self.client, "connection", None)
        if connection is None or connection.state is not State.INITIALIZING:
            return  # answered, or failed already (and closing)
        printed = [line for line in connection.stray_lines if line.strip()]
        shown = " | ".join(neutralize(line[:200]) for line in printed[-3:])
        also = f" (it printed: {shown})" if shown else ""
        sys.stderr.write(f"waiting for the agent to answer initialize...{also}\n")
        sys.stderr.flush()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if isinstance(error, KeyboardInterrupt):
            # Quitting: do not wait for a graceful end. Closing ignores further Ctrl-Cs.
            restore = _ignore_sigint()
            try:
                process = getattr(self.client, "process", None)
                if process is not None and process.poll() is None:
                    with contextlib.suppress(OSError):
                        process.terminate()
                self.client.close()
            finally:
                restore()
            return
        exit_status = self._exit_status() if isinstance(error, ConnectionClosed) else None
        self.client.close()
        if isinstance(error, ConnectionClosed):
            raise _CliError(self._failure(error, exit_status), EXIT_AGENT) from error
        if isinstance(error, RequestError) and error.code == AUTH_REQUIRED:
            raise _CliError(self._auth_required(error), EXIT_AGENT) from error
        if isinstance(error, RequestError) and not self.debug:  # --debug showed it live
            # A real agent's only explanation of an error (a missing key, a crashed
            # model server) is often on its stderr; closed, the agent said all of it.
            message = f"the agent answered with an error: {neutralize(str(error))}"
            lines = self._stderr_lines(error)
            if lines:
                raise _CliError(message + _tail_text(lines), EXIT_AGENT) from error

    def _exit_status(self) -> int | None:
        """The agent's return code, if it exited (on its own: we have not closed it yet)."""
        process = getattr(self.client, "process", None)
        if process is None:
            return None
        with contextlib.suppress(Exception):
            return int(process.wait(1.0))
        return None

    def _failure(self, error: ConnectionClosed, status: int | None) -> str:
        exit_code = getattr(error, "exit_code", None)
        signal_number = getattr(error, "signal", None)
        if exit_code is None and signal_number is None and status is not None:
            exit_code, signal_number = (status, None) if status >= 0 else (None, -status)
        if signal_number is not None:
            message = f"the agent was killed by signal {signal_number}"
            with contextlib.suppress(ValueError):
                message += f" ({signal.Signals(signal_number).name})"
        elif exit_code is not None:
            message = f"the agent exited with code {exit_code}"
        else:
            message = "the agent closed the connection"
        lines = self._stderr_lines(error)
        message += _tail_text(lines) if lines else " (nothing on its stderr)"
        # What it wrote on stdout that was not JSON-RPC (a usage message, say): shown
        # before only under --debug, though often the whole explanation.
        connection = getattr(self.client, "connection", None)
        stray = str(getattr(error, "stdout_tail", "")).splitlines() or list(
            getattr(connection, "stray_lines", ())
        )
        stray = [line for line in stray if line.strip()][-STDERR_LINES:]
        if stray:
            message += "; it wrote on its stdout, not JSON-RPC:\n" + "\n".join(
                f"  | {neutralize(line[:1000])}" for line in stray
            )
        return message

    def _stderr_lines(self, error: BaseException) -> list[str]:
        """The agent's last non-empty stderr lines."""
        tail = (
            getattr(error, "stderr_tail", "")
            or getattr(self.client, "stderr_tail", "")
            or "\n".join(self.tail)
        )
        return [line for line in str(tail).splitlines() if line.strip()][-STDERR_LINES:]

    def auth_methods(self) -> list[tuple[str, str, Any]]:
        response = getattr(self.client, "initialize_response", None)
        methods: list[Any] = getattr(response, "auth_methods", None) or []
        return [(str(getattr(m, "id", "?")), str(getattr(m, "name", "")), m) for m in methods]

    def _auth_list(self) -> str:
        methods = self.auth_methods()
        if not methods:
            return "it advertised no auth methods"
        listed: list[str] = []
        for i, n, method in methods:
            names = env_vars(method)
            where = f"; set {_names(names)} in the agent's environment" if names else ""
            listed.append(f"{neutralize(i)} ({neutralize(n)}{where})")
        return f"its auth methods: {', '.join(listed)}"

    def _auth_required(self, error: RequestError) -> str:
        message = (
            f"the agent requires authentication: {neutralize(str(error.message))} "
            f"({error.code}); {self._auth_list()}; run again with --auth METHOD_ID"
        )
        if any(env_vars(m) for _, _, m in self.auth_methods()):
            message += " (for a method that names environment variables: set them first)"
        return message

    def authenticate(self, method_id: str) -> None:
        """`authenticate` with an advertised method the agent runs itself."""
        methods = {i: m for i, _, m in self.auth_methods()}
        if method_id not in methods:
            raise _CliError(
                f"--auth {neutralize(method_id)}: not an auth method of this agent; "
                f"{self._auth_list()}",
                EXIT_USAGE,
            )
        if isinstance(methods[method_id], AuthMethodTerminal):
            raise _CliError(
                f"--auth {neutralize(method_id)} is a terminal login: run the agent's own "
                "login in a terminal, then try again without --auth",
                EXIT_USAGE,
            )
        missing = [name for name in env_vars(methods[method_id]) if not os.environ.get(name)]
        if missing:
            # The agent reads these itself (schema v1 has no `env_var` arm: such a method
            # decodes as agent-handled, its fields kept in `extra`); without them the
            # authenticate call can only fail.
            raise _CliError(
                f"--auth {neutralize(method_id)} reads {_names(missing)} from the agent's "
                f"environment: set {_names(missing)} and run again",
                EXIT_USAGE,
            )
        self.client.authenticate(method_id=method_id)


def env_vars(method: Any) -> list[str]:
    """The environment variables an auth method says to set: an `env_var` method of the
    auth-methods RFD (`vars: [{"name": ...}]`, or an earlier draft's `varName`), which
    schema v1 decodes as agent-handled with those fields in `extra`."""
    extra: Mapping[str, Any] = getattr(method, "extra", None) or {}
    names: list[str] = []
    listed: Any = extra.get("vars")
    entries: list[Any] = listed if isinstance(listed, list) else []  # pyright: ignore[reportUnknownVariableType] - JSON
    for item in entries:
        name: Any = cast("dict[str, Any]", item).get("name") if isinstance(item, dict) else item
        if isinstance(name, str) and name:
            names.append(name)
    single: Any = extra.get("varName")
    if isinstance(single, str) and single and single not in names:
        names.append(single)
    return names


def _names(names: list[str]) -> str:
    shown = [neutralize(name) for name in names]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
