"""Cold import time of acp_sdk vs the incumbent, each in a fresh interpreter.

    python bench/import_time.py

Byte-code is compiled first (as a wheel install does), then each import runs in a new
process `RUNS` times; the median wall time of the import statement is reported.
"""

from __future__ import annotations

import compileall
import statistics
import subprocess
import sys
from pathlib import Path

RUNS = 15
ROOT = Path(__file__).resolve().parents[1]
IMPORTS = {
    "import acp_sdk": "import acp_sdk",
    "acp_sdk + schema + methods + codec": (
        "import acp_sdk, acp_sdk.schema, acp_sdk.methods; "
        "acp_sdk.decode(b'{}', acp_sdk.schema.LogoutRequest)"
    ),
    "incumbent: import acp": "import acp",
}
PROGRAM = "import time; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"


def measure(stmt: str) -> float:
    samples = []
    for _ in range(RUNS):
        out = subprocess.run(
            [sys.executable, "-c", PROGRAM.format(stmt=stmt)],
            capture_output=True,
            text=True,
            check=True,
            env={"PATH": "/usr/bin:/bin"},
        )
        samples.append(float(out.stdout))
    return statistics.median(samples) * 1000


def main() -> None:
    compileall.compile_dir(ROOT / "acp_sdk", quiet=1)
    for label, stmt in IMPORTS.items():
        try:
            print(f"{label:40} {measure(stmt):7.1f} ms")
        except subprocess.CalledProcessError:
            print(f"{label:40}     n/a (not installed)")


if __name__ == "__main__":
    main()
