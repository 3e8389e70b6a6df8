"""The command line: `python -m acp_sdk {demo,prompt,chat,agent}` (also `acp-typed`).

Exit codes:
    0   the turn completed (any stop reason the agent chose)
    1   the agent failed: it answered with an error, died, or could not be started
    2   usage error (bad arguments)
    3   protocol error: the agent broke the protocol
    4   timeout (`--timeout` elapsed)
    130 interrupted (Ctrl-C outside a turn)
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any

import orjson

from acp_sdk._render import Progress, Renderer
from acp_sdk.codec import to_json_value
from acp_sdk.errors import ACPError, ConnectionClosed, ProtocolError, RequestError, RequestTimeout
from acp_sdk.handlers import AllowOnce, ClientHandlers, LocalFileSystem, LocalTerminals, RejectAll
from acp_sdk.schema import (
    CancelledPermissionOutcome,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    SessionNotification,
)

EXIT_OK, EXIT_AGENT, EXIT_USAGE, EXIT_PROTOCOL, EXIT_TIMEOUT, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
SCENARIO_AGENT = [sys.executable, "-m", "acp_sdk", "agent"]


class _CliError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class _Ui:
    """What the permission prompt shares with the turn being shown: it must wait until
    every update that came before the question is on screen, and pause the progress line."""

    def __init__(self, renderer: Renderer | None) -> None:
        self.renderer = renderer
        self.progress: Progress | None = None
        self.turn: Any = None  # the turn on screen: it counts what the reader routed to it
        self.shown = 0  # ... and this, what the main thread rendered
        self.changed = threading.Condition()

    def note_shown(self) -> None:
        with self.changed:
            self.shown += 1
            self.changed.notify_all()

    def catch_up(self) -> None:
        # The reader routes every earlier update to the turn before it hands this request
        # to a worker, so `received` now covers all of them.
        target = self.turn.received if self.turn is not None else 0
        with self.changed:
            self.changed.wait_for(lambda: self.shown >= target, timeout=2.0)
        if self.progress is not None:
            self.progress.touch()


class _Permissions(ClientHandlers):
    """Allow (`--yes`), ask on a terminal, or reject; and show the decision."""

    def __init__(self, mode: str, ui: _Ui) -> None:
        self.mode = mode  # "allow" | "ask" | "reject"
        self.ui = ui
        self._lock = threading.Lock()

    def request_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        with self._lock:
            self.ui.catch_up()
            if self.mode == "allow":
                response = AllowOnce().request_permission(params)
            elif self.mode == "reject":
                response = RejectAll().request_permission(params)
            else:
                response = self._ask(params)
        if self.ui.renderer is not None:
            outcome = response.outcome
            self.ui.renderer.permission(params, getattr(outcome, "option_id", None))
        return response

    def _ask(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        title = params.tool_call.title or params.tool_call.tool_call_id
        lines = [f"\nThe agent asks permission: {title}"]
        lines += [f"  {number}) {option.name}" for number, option in enumerate(params.options, 1)]
        print("\n".join(lines), file=sys.stderr)
        progress = self.ui.progress
        if progress is not None:
            progress.paused = True
        try:
            answer = input("choose a number (empty: cancel): ").strip()
        except EOFError:
            answer = ""
        finally:
            if progress is not None:
                progress.paused = False
                progress.touch()
        if answer.isdigit() and 1 <= int(answer) <= len(params.options):
            chosen = params.options[int(answer) - 1].option_id
            return RequestPermissionResponse(outcome=SelectedPermissionOutcome(option_id=chosen))
        return RequestPermissionResponse(outcome=CancelledPermissionOutcome())


def _handlers(args: argparse.Namespace, ui: _Ui, default_mode: str) -> list[ClientHandlers]:
    mode = "allow" if getattr(args, "yes", False) else default_mode
    handlers: list[ClientHandlers] = [_Permissions(mode, ui)]
    if getattr(args, "fs", False):
        handlers.append(LocalFileSystem(args.cwd))
    if getattr(args, "terminal", False):
        handlers.append(LocalTerminals())
    return handlers


def _open(argv: Sequence[str], args: argparse.Namespace, handlers: list[ClientHandlers]) -> Any:
    from acp_sdk.sync_client import Client

    client = Client.spawn(list(argv), cwd=args.cwd, handlers=handlers, stderr=_agent_stderr(args))
    try:
        return client.open()
    except FileNotFoundError:
        raise _CliError(f"cannot start the agent: {argv[0]} not found", EXIT_AGENT) from None
    except OSError as error:
        raise _CliError(f"cannot start the agent: {error}", EXIT_AGENT) from None


def _agent_stderr(args: argparse.Namespace) -> Any:
    if getattr(args, "debug", False):
        return lambda line: print(f"[agent] {line}", file=sys.stderr)
    return lambda line: logging.getLogger("acp_sdk.agent.stderr").info("%s", line)


def _run_turn(client: Any, session: Any, text: str, args: argparse.Namespace, ui: _Ui) -> str:
    """One turn, rendered (or as JSON lines); returns the stop reason."""
    renderer = ui.renderer
    turn = session.prompt(text)
    ui.turn, ui.shown = turn, 0
    timer = None
    timed_out = threading.Event()
    if getattr(args, "timeout", None):

        def expire() -> None:
            timed_out.set()
            turn.cancel()
            give_up.start()  # if the agent ignores the cancel, stop waiting for it

        give_up = threading.Timer(5.0, client.close)
        give_up.daemon = True

        timer = threading.Timer(args.timeout, expire)
        timer.start()
    iterator = iter(turn)
    try:
        with Progress(enabled=renderer is not None) as progress:
            ui.progress = progress
            while True:
                try:
                    for update in iterator:
                        progress.touch()
                        _show(update, session.session_id, renderer)
                        ui.note_shown()
                    break
                except KeyboardInterrupt:
                    turn.cancel()  # Ctrl-C cancels the running turn; the agent answers `cancelled`
    except ConnectionClosed:
        if timed_out.is_set():
            raise _CliError("timed out", EXIT_TIMEOUT) from None
        raise
    finally:
        ui.progress = None
        if timer is not None:
            timer.cancel()
            give_up.cancel()
    if timed_out.is_set():
        raise _CliError("timed out", EXIT_TIMEOUT)
    reason = str(turn.stop_reason)
    if renderer is not None:
        renderer.stop(reason)
    else:
        summary = {"stopReason": reason, "sessionId": session.session_id}
        sys.stdout.buffer.write(orjson.dumps(summary) + b"\n")
        sys.stdout.flush()
    return reason


def _show(update: Any, session_id: str, renderer: Renderer | None) -> None:
    if renderer is not None:
        renderer.update(update)
        return
    notification = SessionNotification(session_id=session_id, update=update)
    sys.stdout.buffer.write(orjson.dumps(to_json_value(notification)) + b"\n")
    sys.stdout.flush()


def cmd_demo(args: argparse.Namespace) -> int:
    ui = _Ui(Renderer())
    default = "ask" if sys.stdin.isatty() else "allow"
    print("Running the bundled scenario agent (python -m acp_sdk agent) through one prompt turn.\n")
    with _open(SCENARIO_AGENT, args, _handlers(args, ui, default)) as client:
        info = client.agent_info
        print(f"Connected to {info.title or info.name} {info.version}." if info else "Connected.")
        session = client.new_session(cwd=args.cwd)
        print(f"Session {session.session_id}. Prompt: demo\n")
        _run_turn(client, session, "demo", args, ui)
    return EXIT_OK


def cmd_prompt(args: argparse.Namespace) -> int:
    ui = _Ui(None if args.json else Renderer())
    default = "ask" if sys.stdin.isatty() else "reject"
    with _open(args.command, args, _handlers(args, ui, default)) as client:
        session = client.new_session(cwd=args.cwd)
        _run_turn(client, session, args.text, args, ui)
    return EXIT_OK


def cmd_chat(args: argparse.Namespace) -> int:
    with contextlib.suppress(ImportError):  # not on every platform
        import readline  # noqa: F401 - line editing and history for input()
    ui = _Ui(Renderer())
    default = "ask" if sys.stdin.isatty() else "reject"
    with _open(args.command, args, _handlers(args, ui, default)) as client:
        session = client.new_session(cwd=args.cwd)
        print("Chatting; Ctrl-C cancels the running turn, Ctrl-D exits.", file=sys.stderr)
        while True:
            try:
                text = input("> ")
            except EOFError:
                print(file=sys.stderr)
                return EXIT_OK
            except KeyboardInterrupt:
                print(file=sys.stderr)
                return EXIT_INTERRUPTED
            if text.strip():
                _run_turn(client, session, text, args, ui)


def cmd_agent(args: argparse.Namespace) -> int:
    from acp_sdk.scenario_agent import main as agent_main

    agent_main()
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    invoked = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    parser = argparse.ArgumentParser(
        prog=invoked if invoked and invoked != "__main__.py" else "python -m acp_sdk",
        description="Talk to Agent Client Protocol agents.",
        epilog="exit codes: 0 completed, 1 agent failed, 2 usage, 3 protocol error, 4 timeout",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks and the agent's stderr"
    )
    commands = parser.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def with_client_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--cwd", default=os.getcwd(), help="session working directory (default: here)"
        )
        sub.add_argument("--yes", action="store_true", help="allow permission requests")
        sub.add_argument("--fs", action="store_true", help="serve fs requests rooted at --cwd")
        sub.add_argument("--terminal", action="store_true", help="serve terminal requests")
        sub.add_argument(
            "--timeout", type=float, default=None, help="give up on a turn after SECONDS"
        )
        sub.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    demo = commands.add_parser("demo", help="a real prompt turn against the bundled scenario agent")
    with_client_options(demo)
    demo.set_defaults(func=cmd_demo)

    prompt = commands.add_parser("prompt", help="one prompt turn: prompt TEXT -- COMMAND [ARGS...]")
    prompt.add_argument("text", metavar="TEXT")
    prompt.add_argument("command", nargs="+", metavar="COMMAND", help="the agent command, after --")
    prompt.add_argument(
        "--json", action="store_true", help="JSON lines: each session/update, then a summary"
    )
    with_client_options(prompt)
    prompt.set_defaults(func=cmd_prompt)

    chat = commands.add_parser("chat", help="an interactive session: chat -- COMMAND [ARGS...]")
    chat.add_argument("command", nargs="+", metavar="COMMAND", help="the agent command, after --")
    with_client_options(chat)
    chat.set_defaults(func=cmd_chat)

    agent = commands.add_parser("agent", help="run the deterministic scenario agent over stdio")
    agent.set_defaults(func=cmd_agent)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    try:
        code: int = args.func(args)
        return code
    except _CliError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.code
    except RequestError as error:
        if debug:
            raise
        print(
            f"error: the agent answered with an error: {error.message} ({error.code})",
            file=sys.stderr,
        )
        return EXIT_AGENT
    except ConnectionClosed:
        if debug:
            raise
        print("error: the agent closed the connection", file=sys.stderr)
        return EXIT_AGENT
    except RequestTimeout:
        print("error: timed out", file=sys.stderr)
        return EXIT_TIMEOUT
    except (ProtocolError, ACPError) as error:
        if debug:
            raise
        print(f"error: protocol error: {error}", file=sys.stderr)
        return EXIT_PROTOCOL
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
