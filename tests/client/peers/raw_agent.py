"""A raw ACP agent that speaks JSON lines by hand (no acp_sdk), with hostile options.

    python raw_agent.py [flags]

It answers `initialize`, `session/new`, `session/prompt` (streaming `--stream` updates),
the extension requests `_torture/echo` (returns its params) and `_torture/count` (how many
`_torture/note` notifications it has read), and anything else with -32601. Stdin is read
on the main thread; a prompt streams on its own thread, so both directions flow at once.

Flags:
    --pidfile PATH      write "<pid> <parent pid>" there first thing
    --bom               put a UTF-8 BOM before the first frame
    --stall             after answering initialize, never read stdin again
    --ignore-term       ignore SIGTERM
    --ignore-eof        at stdin EOF keep running (sleep forever) instead of exiting
    --stderr-line MIB   at initialize, write one stderr line of MIB MiB, then a short one
    --bad-response KIND answer the first `_torture/echo` malformed (see BAD_RESPONSES)
    --die HOW           mid-prompt, after 2 updates, print "boom: fatal" to stderr and
                        `exit3` (exit code 3) or `sigkill` (kill itself)
    --die-on-request    on `_torture/echo`: print "boom: fatal" to stderr and exit 3
    --stream N          updates per prompt (default 3), each "<index:07d> " + padding
    --size BYTES        padding per update text (default 8)
    --junk KIND         one malformed frame in the middle of the stream (see JUNK)
    --progress PATH     while streaming, keep the number of updates written in PATH, and
                        "done" once the whole stream is written
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from typing import Any

BAD_RESPONSES: dict[str, dict[str, Any]] = {
    "both": {"result": {"text": "x"}, "error": {"code": -32603, "message": "both"}},
    "error-not-object": {"error": "boom"},
    "code-string": {"error": {"code": "-32603", "message": "boom"}},
    "no-message": {"error": {"code": -32603}},
}

JUNK: dict[str, bytes] = {
    "not-json": b"{this is not json\n",
    "array": b'[{"jsonrpc":"2.0","method":"session/update","params":{}}]\n',
    "unknown-id": b'{"jsonrpc":"2.0","id":987654,"result":{"stopReason":"end_turn"}}\n',
    "garbage-10mb": b"\x00garbage" * (10 * 1024 * 1024 // 8) + b"\n",
    "scalar": b"42\n",
    "unknown-request": b'{"jsonrpc":"2.0","id":"x1","method":"_nobody/knows","params":{}}\n',
    "bad-params": b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":5}}\n',
    "crlf-blank": b"\r\n   \n",
}

OUT_LOCK = threading.Lock()
WROTE_FIRST = [False]
NOTES = [0]
ECHOES = [0]


def write(data: bytes, options: argparse.Namespace) -> None:
    with OUT_LOCK:
        if options.bom and not WROTE_FIRST[0]:
            data = b"\xef\xbb\xbf" + data
        WROTE_FIRST[0] = True
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def frame(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


def die(how: str) -> None:
    sys.stderr.write("boom: fatal\n")
    sys.stderr.flush()
    if how == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    os._exit(3)


def update_frame(index: int, padding: str) -> bytes:
    text = f"{index:07d} {padding}"
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    params = {"sessionId": "s1", "update": update}
    return frame({"method": "session/update", "params": params})


def stream(rid: Any, options: argparse.Namespace) -> None:
    padding = "p" * options.size
    batch: list[bytes] = []
    size = 0
    for index in range(options.stream):
        if options.die and index == 2:
            write(b"".join(batch), options)
            die(options.die)
        if options.junk and index == options.stream // 2:
            batch.append(JUNK[options.junk])
            size += len(batch[-1])
        batch.append(update_frame(index, padding))
        size += len(batch[-1])
        if size >= 1 << 16:
            write(b"".join(batch), options)
            batch, size = [], 0
            progress(str(index + 1), options)
    batch.append(frame({"id": rid, "result": {"stopReason": "end_turn"}}))
    write(b"".join(batch), options)
    progress("done", options)


def progress(text: str, options: argparse.Namespace) -> None:
    if options.progress:
        with open(options.progress, "w") as out:
            out.write(text)


def answer(request: dict[str, Any], options: argparse.Namespace) -> None:
    rid, method = request.get("id"), request.get("method")
    if rid is None:
        if method == "_torture/note":
            NOTES[0] += 1
        return
    if method == "initialize":
        if options.stderr_line:
            chunk = b"x" * (1 << 20)
            for _ in range(options.stderr_line):
                os.write(2, chunk)
            os.write(2, b"\nafter-the-flood\n")
        write(frame({"id": rid, "result": {"protocolVersion": 1}}), options)
    elif method == "session/new":
        write(frame({"id": rid, "result": {"sessionId": "s1"}}), options)
    elif method == "session/prompt":
        threading.Thread(target=stream, args=(rid, options), daemon=True).start()
    elif method == "_torture/echo":
        if options.die_on_request:
            die("exit3")
        ECHOES[0] += 1
        if options.bad_response and ECHOES[0] == 1:
            write(frame({"id": rid, **BAD_RESPONSES[options.bad_response]}), options)
        else:
            write(frame({"id": rid, "result": request.get("params") or {}}), options)
    elif method == "_torture/count":
        write(frame({"id": rid, "result": {"text": str(NOTES[0]), "length": NOTES[0]}}), options)
    else:
        error = {"code": -32601, "message": "Method not found"}
        write(frame({"id": rid, "error": error}), options)


def sleep_forever() -> None:
    while True:
        time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pidfile")
    parser.add_argument("--bom", action="store_true")
    parser.add_argument("--stall", action="store_true")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--ignore-eof", action="store_true")
    parser.add_argument("--stderr-line", type=int, default=0)
    parser.add_argument("--bad-response", choices=sorted(BAD_RESPONSES))
    parser.add_argument("--die", choices=["exit3", "sigkill"])
    parser.add_argument("--die-on-request", action="store_true")
    parser.add_argument("--stream", type=int, default=3)
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--junk", choices=sorted(JUNK))
    parser.add_argument("--progress")
    options = parser.parse_args()
    if options.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if options.pidfile:
        with open(options.pidfile + ".tmp", "w") as out:
            out.write(f"{os.getpid()} {os.getppid()}\n")
        os.replace(options.pidfile + ".tmp", options.pidfile)
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        request = json.loads(line)
        answer(request, options)
        if options.stall and request.get("method") == "initialize":
            sleep_forever()
    if options.ignore_eof:
        sleep_forever()


if __name__ == "__main__":
    main()
