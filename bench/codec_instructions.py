"""The codec benchmark in instructions: deterministic, where times on a shared machine are not.

    python bench/codec_instructions.py                      # this checkout
    python bench/codec_instructions.py --base ../other      # and another one, side by side

For each message of `bench/messages.py`: the instructions per `acp_sdk.encode` of the
decoded model and of the same model built with its constructors (what an agent sends),
per `acp_sdk.decode`, and per run of the typed bounds of `bench/typed_bound.py`, counted
under valgrind's callgrind with instrumentation on only around each case's loop (a small
C helper, compiled here, issues callgrind's client requests; needs gcc and valgrind's
headers). The garbage collector is off inside each loop, and an empty loop's count is
subtracted. Each checkout is measured in its own process, with its own bounds.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HELPER = """
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void cg_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
void cg_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
"""
OPS = ("decoded", "built", "bound", "decode", "dbound")


def _rebuilt(value: Any) -> Any:
    """The same model built with its constructors (every init field, nothing explicit)."""
    import attrs

    if attrs.has(type(value)):
        fields = {a.name: getattr(value, a.name) for a in attrs.fields(type(value)) if a.init}
        return type(value)(**{k: _rebuilt(v) for k, v in fields.items()})
    if isinstance(value, list):
        return [_rebuilt(item) for item in value]
    return value


def child(root: Path, library: str, loops: int) -> None:
    """Run every case under callgrind (this process is the one valgrind started)."""
    import ctypes
    import gc

    sys.path.insert(0, str(root / "bench"))
    from messages import MESSAGES
    from typed_bound import decode_bound, encode_bound

    import acp_sdk

    helper = ctypes.CDLL(library)
    cases: dict[str, Any] = {"empty": lambda: None}
    for label, (wire, type_, _) in MESSAGES.items():
        model = acp_sdk.decode(wire, type_)
        built = _rebuilt(model)
        cases[f"{label}|decoded"] = lambda m=model: acp_sdk.encode(m)
        cases[f"{label}|built"] = lambda m=built: acp_sdk.encode(m)
        cases[f"{label}|bound"] = encode_bound(model)
        cases[f"{label}|decode"] = lambda w=wire, t=type_: acp_sdk.decode(w, t)
        cases[f"{label}|dbound"] = decode_bound(wire, model)
    for name, fn in cases.items():
        for _ in range(200):  # warm: the interpreter specialised, caches filled
            fn()
        gc.collect()
        gc.disable()
        helper.cg_start()
        for _ in range(loops):
            fn()
        helper.cg_stop()
        gc.enable()
        helper.cg_dump(name.encode())


def _part(path: str) -> tuple[str, int]:
    """(case name, instructions) of one dumped part: its self costs, summed."""
    name, total, after_call = "", 0, False
    with open(path) as file:
        for line in file:
            if line.startswith("desc: Trigger: Client Request: "):
                name = line.split("Client Request: ", 1)[1].strip()
            elif line.startswith("calls="):
                after_call = True  # the next cost line is a call's inclusive cost
            elif line[:1].isdigit() or line[:1] in "+-*":
                if after_call:
                    after_call = False
                elif len(parts := line.split()) >= 2:
                    total += int(parts[1])
    return name, total


def measure(root: Path, library: str, loops: int) -> dict[str, float]:
    """Instructions per operation of each case, for the checkout at `root`."""
    out = Path(tempfile.mkdtemp()) / "callgrind.out"
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        sys.executable,
        __file__,
        "--child",
        str(root),
        library,
        str(loops),
    ]
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": "0"}
    subprocess.run(command, env=env, check=True, capture_output=True, cwd=tempfile.gettempdir())
    found = {}
    for path in glob.glob(f"{out}.*"):
        name, total = _part(path)
        os.unlink(path)
        if name:
            found[name] = total / loops
    empty = found.pop("empty")
    return {name: count - empty for name, count in found.items()}


def report(figures: dict[str, dict[str, float]]) -> None:
    labels = list(figures)
    first = figures[labels[0]]
    messages = list(dict.fromkeys(key.split("|")[0] for key in first))
    rows = [("encode, decoded", "decoded", "bound"), ("encode, built", "built", "bound")]
    rows.append(("decode", "decode", "dbound"))
    head = "".join(f"{label:>16}{'x bound':>9}" for label in labels)
    print(f"{'message':28}{'op':17}{head}" + ("    change" if len(labels) == 2 else ""))
    for message in messages:
        for title, op, bound in rows:
            cells = ""
            for label in labels:
                value, limit = (
                    figures[label][f"{message}|{op}"],
                    figures[label][f"{message}|{bound}"],
                )
                cells += f"{value:16,.0f}{value / limit:8.2f}x"
            change = ""
            if len(labels) == 2:
                a, b = (figures[label][f"{message}|{op}"] for label in labels)
                change = f"{b / a - 1:+9.1%}"
            print(f"{message:28}{title:17}{cells}{change}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, help="another checkout, measured first")
    parser.add_argument("--loops", type=int, default=500, help="calls per case (default 500)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), args.child[1], int(args.child[2]))
        return
    build = Path(tempfile.mkdtemp())
    (build / "helper.c").write_text(HELPER)
    library = str(build / "libcghelper.so")
    subprocess.run(
        ["gcc", "-O2", "-shared", "-fPIC", "-o", library, str(build / "helper.c")], check=True
    )
    roots = ([("base", args.base.resolve())] if args.base else []) + [("this", ROOT)]
    print(f"instructions per operation (callgrind, {args.loops} calls per case)")
    report({label: measure(root, library, args.loops) for label, root in roots})


if __name__ == "__main__":
    main()
