"""The `record`, `replay` and `show` commands (see `acp_sdk.tools._record` for the
recording format)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from acp_sdk.tools._live import EXIT_USAGE, _CliError, positive_seconds


def cmd_record(args: argparse.Namespace) -> int:
    from acp_sdk.tools._record import run

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise _CliError("record needs the agent command after --", EXIT_USAGE)
    return run(args.out, command)


def _load(path: str) -> Any:
    from acp_sdk.tools._recording import RecordingError, load

    try:
        return load(path)
    except RecordingError as error:
        raise _CliError(str(error), EXIT_USAGE) from None


def cmd_replay(args: argparse.Namespace) -> int:
    from acp_sdk.tools import _replay

    recording = _load(args.file)
    command = list(args.command)
    against = bool(args.against)
    timeout: float = args.timeout
    # The options may follow FILE too (`replay FILE --against --timeout 5 -- CMD`, as
    # the docs write it): the remainder takes them, so read them off it, up to `--`.
    while command[:1] in (["--against"], ["--timeout"]):
        if command[0] == "--against":
            against, command = True, command[1:]
            continue
        try:
            timeout = positive_seconds(command[1])
        except (IndexError, argparse.ArgumentTypeError):
            raise _CliError("--timeout needs a number of seconds", EXIT_USAGE) from None
        command = command[2:]
    if command[:1] == ["--"]:
        command = command[1:]
    if against:
        if not command:
            raise _CliError("replay --against needs the agent command after --", EXIT_USAGE)
        return _replay.against(recording, command, timeout)
    if command:
        raise _CliError(f"unexpected arguments: {' '.join(command)}", EXIT_USAGE)
    return _replay.serve(recording)


def cmd_show(args: argparse.Namespace) -> int:
    from acp_sdk.tools._show import show, show_raw

    recording = _load(args.file)
    if args.raw:
        show_raw(recording, sys.stdout)
    else:
        show(recording, sys.stdout)
    return 0


def add_commands(commands: Any) -> None:
    """Add `record`, `replay` and `show` to the CLI's subcommands."""
    record = commands.add_parser(
        "record",
        help="relay stdio to an agent and record every frame: record --out FILE -- COMMAND",
        description="A transparent stdio relay to put in an editor's agent command: starts "
        "COMMAND, passes bytes both ways unchanged, passes its stderr and exit code through, "
        "forwards SIGINT/SIGTERM/SIGHUP, and records each frame (timestamp, direction, raw "
        "text) as JSON lines in FILE.",
    )
    record.add_argument("--out", required=True, metavar="FILE", help="the recording (JSON lines)")
    # REMAINDER: the agent command verbatim, its own `--` included (nargs="+" drops one).
    record.add_argument(
        "command", nargs=argparse.REMAINDER, metavar="COMMAND", help="the agent command, after --"
    )
    record.set_defaults(func=cmd_record)

    replay = commands.add_parser(
        "replay",
        help="act as a recorded agent over stdio, or re-drive a real one: replay FILE "
        "[--against -- COMMAND]",
        description="Without --against: act as the recorded agent toward a client on stdio "
        "(each request gets the recorded answer for the same method, in order, after the "
        "recorded updates). With --against: send the recorded client messages to COMMAND and "
        "report where its answers differ (exit code 1 if any does).",
    )
    replay.add_argument("file", metavar="FILE")
    replay.add_argument("--against", action="store_true", help="re-drive the agent COMMAND")
    replay.add_argument(
        "--timeout",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="--against: how long to wait for each answer (default: 30)",
    )
    # REMAINDER: `FILE --against -- COMMAND` (argparse cannot put a flag between two
    # positionals, so a trailing --against is taken out of the rest by cmd_replay).
    replay.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND")
    replay.set_defaults(func=cmd_replay)

    show = commands.add_parser(
        "show", help="render a recording as the CLI renders a live turn: show FILE [--raw]"
    )
    show.add_argument("file", metavar="FILE")
    show.add_argument("--raw", action="store_true", help="print the frames themselves")
    show.set_defaults(func=cmd_show)
