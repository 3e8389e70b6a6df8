"""The command line: `python -m acp_sdk {demo,prompt,chat,agent,serve,record,replay,show}`
(also `acp-typed`).

Exit codes:
    0   the turn completed (any stop reason the agent chose, `cancelled` included)
    1   the agent failed: it answered with an error, died, or could not be started, or
        it is not an agent (no answer to `initialize`: other output, or silence)
    2   usage error (bad arguments)
    3   protocol error: the agent broke the protocol
    4   timed out, and the agent stopped: `--timeout` or `--idle-timeout` passed, the
        client sent `session/cancel`, and the agent ended the turn `cancelled`
    5   timed out, and the agent did not stop within the grace (5 s) after the cancel
    130 interrupted (a second Ctrl-C during a turn, or Ctrl-C outside a turn)

Threads: the main thread owns the screen and stdin. During a turn a pump thread iterates
the turn and queues its updates; permission handlers (SDK worker threads) queue their
questions in the same queue and wait for the answer, so updates, questions and decisions
are shown in the order they happened and there is never more than one reader on stdin.
Ctrl-C is a SIGINT handler that only queues an event (first press: cancel the turn), or
raises (second press: quit; or while a question is being asked: answer it `cancelled`).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from acp_sdk.handlers import ClientHandlers, LocalFileSystem, LocalTerminals
from acp_sdk.protocol._errors import (
    ACPError,
    ConnectionClosed,
    ProtocolError,
    RequestError,
    RequestTimeout,
)
from acp_sdk.tools._check import add_check_parser
from acp_sdk.tools._live import (
    EXIT_AGENT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROTOCOL,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    GIVE_UP_AFTER_CANCEL,
    SCENARIO_AGENT,
    Permissions,
    _Agent,
    _CliError,
    _Ui,
    run_turn,
)
from acp_sdk.tools._recording_cli import add_commands as add_recording_commands
from acp_sdk.tools._render import Renderer, neutralize

log = logging.getLogger("acp_sdk.cli")


def _handlers(args: argparse.Namespace, ui: _Ui, default_mode: str) -> list[ClientHandlers]:
    mode = "allow" if getattr(args, "yes", False) else default_mode
    handlers: list[ClientHandlers] = [Permissions(mode, ui)]
    if getattr(args, "fs", False):
        handlers.append(LocalFileSystem(args.cwd))
    if getattr(args, "terminal", False):
        handlers.append(LocalTerminals())
    return handlers


def _start(agent: _Agent, client: Any, args: argparse.Namespace) -> Any:
    """Authenticate (`--auth`) and open the session."""
    if getattr(args, "auth", None):
        agent.authenticate(args.auth)
    return client.new_session(cwd=args.cwd)


def _renderer(args: argparse.Namespace) -> Renderer:
    return Renderer(raw=bool(getattr(args, "raw", False)))


def cmd_demo(args: argparse.Namespace) -> int:
    ui = _Ui(_renderer(args))
    # The bundled scenario agent touches nothing; off a terminal the demo allows, so CI
    # and pipes see the whole turn.
    default = "ask" if sys.stdin.isatty() else "allow"
    print("Running the bundled scenario agent (python -m acp_sdk agent) through one prompt turn.\n")
    agent = _Agent(SCENARIO_AGENT, args, _handlers(args, ui, default))
    with agent as client:
        info = client.agent_info
        if info:
            name = neutralize(f"{info.title or info.name} {info.version}")
            print(f"Connected to {name}.")
        else:
            print("Connected.")
        session = _start(agent, client, args)
        print(f"Session {neutralize(session.session_id)}. Prompt: demo\n")
        run_turn(agent, session, "demo", args, ui)
    return EXIT_OK


def cmd_prompt(args: argparse.Namespace) -> int:
    ui = _Ui(None if args.json else _renderer(args))
    default = "ask" if sys.stdin.isatty() else "reject"
    agent = _Agent(args.command, args, _handlers(args, ui, default))
    with agent as client:
        session = _start(agent, client, args)
        run_turn(agent, session, args.text, args, ui)
    return EXIT_OK


def cmd_chat(args: argparse.Namespace) -> int:
    with contextlib.suppress(ImportError):  # not on every platform
        import readline  # noqa: F401  # pyright: ignore[reportUnusedImport] - line editing for input()
    ui = _Ui(_renderer(args))
    default = "ask" if sys.stdin.isatty() else "reject"
    agent = _Agent(args.command, args, _handlers(args, ui, default))
    with agent as client:
        session = _start(agent, client, args)
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
                run_turn(agent, session, text, args, ui)


def cmd_agent(args: argparse.Namespace) -> int:
    from acp_sdk.tools._scenario_agent import main as agent_main

    agent_main()
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    from acp_sdk.remote._serve import UnsafeBind, serve

    token = args.token or os.environ.get("ACP_SERVE_TOKEN") or None
    # Connections opening and closing, and each agent's stderr, on our stderr. Under
    # --debug the `acp_sdk` logger's handler already shows them (they propagate to it):
    # a second handler here would print every line twice.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Neutralizing("[%(name)s] %(message)s"))
    loggers = [] if getattr(args, "debug", False) else ["acp_sdk.remote", "acp_sdk.agent.stderr"]
    for name in loggers:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(min(logger.getEffectiveLevel(), logging.INFO))
    try:
        serve(
            args.command,
            host=args.host,
            port=args.port,
            token=token,
            insecure=args.insecure,
            allowed_origins=args.allow_origin,
            max_connections=args.max_connections,
            idle_timeout=args.idle_timeout,
        )
    except UnsafeBind as error:
        raise _CliError(str(error), EXIT_USAGE) from None
    except ImportError as error:
        raise _CliError(str(error), EXIT_USAGE) from None
    finally:
        for name in loggers:
            logging.getLogger(name).removeHandler(handler)
    return EXIT_OK


DEFAULT_PERMISSIONS = (
    "Default: ask when stdin is a terminal, else reject (the reject_once option, else the "
    "'cancelled' outcome)"
)
PERMISSIONS_HELP = (
    "Permission requests are asked on a terminal (stdin is a TTY); otherwise they are "
    "rejected (the agent's reject_once option, else the 'cancelled' outcome) unless --yes"
)


def build_parser() -> argparse.ArgumentParser:
    invoked = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    parser = argparse.ArgumentParser(
        prog=invoked if invoked and invoked != "__main__.py" else "python -m acp_sdk",
        description="Talk to Agent Client Protocol agents. "
        + PERMISSIONS_HELP
        + " (the demo, against the bundled agent, allows off a terminal).",
        epilog="exit codes: 0 completed, 1 agent failed, 2 usage, 3 protocol error, "
        "4 timed out (the agent stopped), 5 timed out (the agent did not stop), "
        "130 interrupted",
    )
    debug_help = (
        "show on stderr the SDK's log (logger acp_sdk at DEBUG), the agent's stderr and "
        "tracebacks; before or after the command"
    )
    parser.add_argument("--debug", action="store_true", help=debug_help)
    commands = parser.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def with_client_options(sub: argparse.ArgumentParser, yes_default: str) -> None:
        sub.add_argument(
            "--cwd", default=os.getcwd(), help="session working directory (default: here)"
        )
        sub.add_argument(
            "--yes",
            action="store_true",
            help="allow every permission request (its allow_once option, else allow_always). "
            + yes_default,
        )
        sub.add_argument("--fs", action="store_true", help="serve fs requests rooted at --cwd")
        sub.add_argument("--terminal", action="store_true", help="serve terminal requests")
        sub.add_argument(
            "--timeout",
            type=float,
            default=None,
            metavar="SECONDS",
            help=f"cancel the turn after SECONDS, then give up {GIVE_UP_AFTER_CANCEL:g}s later "
            "(default: no timeout)",
        )
        sub.add_argument(
            "--idle-timeout",
            type=float,
            default=None,
            metavar="SECONDS",
            help="cancel the turn when the agent sends nothing (no update, no request) for "
            f"SECONDS, then give up {GIVE_UP_AFTER_CANCEL:g}s later (default: no limit)",
        )
        sub.add_argument(
            "--auth",
            metavar="METHOD_ID",
            default=None,
            help="authenticate with this advertised auth method before the session",
        )
        sub.add_argument(
            "--raw",
            action="store_true",
            help="print the agent's text as is (default: control characters and escape "
            "sequences are shown visibly, e.g. ESC as \\x1b)",
        )
        # SUPPRESS: when absent after the command, it keeps the top-level value.
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=debug_help)

    demo = commands.add_parser("demo", help="a real prompt turn against the bundled scenario agent")
    with_client_options(
        demo, "Default: ask when stdin is a terminal, else allow (the demo agent touches nothing)"
    )
    demo.set_defaults(func=cmd_demo)

    prompt = commands.add_parser(
        "prompt",
        help="one prompt turn: prompt TEXT -- COMMAND [ARGS...]",
        description=PERMISSIONS_HELP + ".",
    )
    prompt.add_argument("text", metavar="TEXT")
    prompt.add_argument("command", nargs="+", metavar="COMMAND", help="the agent command, after --")
    prompt.add_argument(
        "--json", action="store_true", help="JSON lines: each session/update, then a summary"
    )
    with_client_options(prompt, DEFAULT_PERMISSIONS)
    prompt.set_defaults(func=cmd_prompt)

    chat = commands.add_parser(
        "chat",
        help="an interactive session: chat -- COMMAND [ARGS...]",
        description="Ctrl-C cancels the running turn (twice: quit), Ctrl-D exits. "
        + PERMISSIONS_HELP
        + ".",
    )
    chat.add_argument("command", nargs="+", metavar="COMMAND", help="the agent command, after --")
    with_client_options(chat, DEFAULT_PERMISSIONS)
    chat.set_defaults(func=cmd_chat)

    serve = commands.add_parser(
        "serve",
        help="serve a stdio agent over WebSocket and HTTP: serve [OPTIONS] -- COMMAND [ARGS...]",
        description="Serve COMMAND (a stdio agent, one process per remote connection) on "
        "ws://HOST:PORT/acp and http://HOST:PORT/acp. Binding anything but loopback needs "
        "--token (or --insecure): an agent runs commands.",
    )
    serve.add_argument("command", nargs="+", metavar="COMMAND", help="the agent command, after --")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    serve.add_argument(
        "--token",
        default=None,
        help="require 'Authorization: Bearer TOKEN' on every request and WebSocket upgrade "
        "(default: $ACP_SERVE_TOKEN)",
    )
    serve.add_argument(
        "--insecure", action="store_true", help="allow a non-loopback bind without a token"
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed besides the server's own (repeatable; '*': any)",
    )
    serve.add_argument(
        "--max-connections", type=int, default=16, help="connections at once (default: 16)"
    )
    serve.add_argument(
        "--idle-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="close a connection idle this long, stopping its agent (default: 300)",
    )
    serve.set_defaults(func=cmd_serve)

    add_check_parser(commands)

    agent = commands.add_parser("agent", help="run the deterministic scenario agent over stdio")
    agent.set_defaults(func=cmd_agent)
    add_recording_commands(commands)  # record, replay, show
    return parser


class _Neutralizing(logging.Formatter):
    """Log records may carry the agent's bytes: show control characters visibly."""

    def format(self, record: logging.LogRecord) -> str:
        return neutralize(super().format(record))


def _enable_debug_logging() -> Callable[[], None]:
    """The `acp_sdk` logger at DEBUG, to stderr; returns the undo."""
    logger = logging.getLogger("acp_sdk")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Neutralizing("[%(name)s] %(levelname)s %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)

    def undo() -> None:
        logger.removeHandler(handler)
        logger.setLevel(level)

    return undo


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    undo = _enable_debug_logging() if debug and args.cmd != "agent" else None
    try:
        code: int = args.func(args)
        return code
    except _CliError as error:
        if debug and error.__cause__ is not None:
            traceback.print_exception(error.__cause__)
        print(f"error: {error}", file=sys.stderr)
        return error.code
    except RequestError as error:
        if debug:
            raise
        # str() carries the code and the agent's data (what went wrong, e.g. a missing
        # API key), which the message alone often does not say.
        print(
            f"error: the agent answered with an error: {neutralize(str(error))}",
            file=sys.stderr,
        )
        return EXIT_AGENT
    except ConnectionClosed as error:
        if debug:
            raise
        print(f"error: {neutralize(str(error))}", file=sys.stderr)
        return EXIT_AGENT
    except RequestTimeout:
        print("error: timed out", file=sys.stderr)
        return EXIT_TIMEOUT
    except (ProtocolError, ACPError) as error:
        if debug:
            raise
        print(f"error: protocol error: {neutralize(str(error))}", file=sys.stderr)
        return EXIT_PROTOCOL
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if undo is not None:
            undo()
