"""Cold import time, each in a fresh interpreter: acp_sdk vs `import orjson` vs the incumbent.

    python bench/import_time.py

Byte-code is compiled first (as a wheel install does). Each command then runs `RUNS` times
in a new process, the commands interleaved (A B C D A B C D ...) so drift hits all alike:

- whole process: the wall time of `python -c STATEMENT`, from start to exit, interpreter
  start-up included (what a user waits for; `python -c pass` is the start-up alone);
- import only: the import statement's own time, measured inside the process.

Both are reported as the median with min-max.
"""

from __future__ import annotations

import compileall
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 15
ROOT = Path(__file__).resolve().parents[1]
_CHUNK = (
    b'{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk",'
    b'"content":{"type":"text","text":"hi"}}}'
)
STATEMENTS = {
    "python -c pass": "pass",
    "import orjson": "import orjson",
    "from acp_sdk import Client": "from acp_sdk import Client",
    "import acp (incumbent)": "import acp",
    # What a program pays before its first typed message: acp_sdk builds its models and
    # codec on first use, so this row shows the deferred cost (the target is the row above).
    "Client + first decode": (
        "from acp_sdk import Client, decode; from acp_sdk.schema import SessionNotification; "
        f"decode({_CHUNK!r}, SessionNotification)"
    ),
    "acp + first decode (incumbent)": (
        f"import acp; from acp.schema import SessionNotification; "
        f"SessionNotification.model_validate_json({_CHUNK!r})"
    ),
}
PROGRAM = "import time; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"


def once(stmt: str) -> tuple[float, float]:
    """(whole-process ms, import-statement ms) of one fresh interpreter."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(stmt=stmt)],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
        cwd=tempfile.gettempdir(),
    )
    whole = time.perf_counter() - start
    return whole * 1000, float(out.stdout) * 1000


def run(runs: int = RUNS) -> dict[str, dict[str, list[float]]]:
    compileall.compile_dir(ROOT / "acp_sdk", quiet=1)
    for stmt in STATEMENTS.values():  # warm the file cache, compile what is missing
        once(stmt)
    samples: dict[str, dict[str, list[float]]] = {
        label: {"whole": [], "import": []} for label in STATEMENTS
    }
    for _ in range(runs):
        for label, stmt in STATEMENTS.items():
            whole, imported = once(stmt)
            samples[label]["whole"].append(whole)
            samples[label]["import"].append(imported)
    return samples


def main() -> None:
    samples = run()
    base = statistics.median(samples["import orjson"]["whole"])
    print(f"cold import, median (min-max) of {RUNS} fresh interpreters")
    for label, figures in samples.items():
        whole, imported = figures["whole"], figures["import"]
        print(
            f"  {label:28} whole process {statistics.median(whole):6.1f} ms "
            f"({min(whole):.1f}-{max(whole):.1f}), {statistics.median(whole) / base:4.2f}x "
            f"`import orjson`; import only {statistics.median(imported):6.1f} ms"
        )


if __name__ == "__main__":
    main()
