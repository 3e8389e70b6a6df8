"""Do the models' emitted dunder methods still pay? Both builds measured in one run.

    python bench/model_methods.py              # about 2 minutes on 2 cores
    python bench/model_methods.py --rounds 3   # quicker, noisier

The generator writes `__init__`, `__eq__`, `__ne__` and `__hash__` into every model class
(`acp_sdk/_codegen/emit_model_methods.py`) so that attrs does not compile them at import.
This script builds two copies of the package in a temporary directory: *emitted* (the
generated code as committed) and *attrs* (regenerated with those four methods left to
attrs; `__repr__` stays the shared `model_repr` in both). Then, round by round, the two
builds interleaved (the order alternating):

- cold: fresh interpreters (byte-code compiled first, `RUNS` each per round, the least
  kept) timing the CPU time of an import statement inside the process: the models module
  alone (its imports loaded first), the public schema, the client plus its first decode
  (as in `bench/import_time.py`), and the unstable namespace;
- per call: one fresh interpreter per round holding both builds' models, timing
  construction, `==`, `!=` and `hash` of a few models, the builds alternating (best of
  200 batches of 2,000 calls, ns per call).

Reported: the median over rounds (min-max), and the median of the per-round ratios
attrs / emitted (above 1: the emitted methods are faster).
"""

from __future__ import annotations

import argparse
import compileall
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RUNS = 7
_CHUNK = (
    b'{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk",'
    b'"content":{"type":"text","text":"hi"}}}'
)
# Cold cases: (label, what the process imports first, untimed; the timed statement).
COLD = {
    "models module alone": (
        "import attrs, acp_sdk.protocol._model_support",
        "import acp_sdk.protocol._generated.models",
    ),
    "import acp_sdk.schema": ("pass", "import acp_sdk.schema"),
    "Client + first decode": (
        "pass",
        "from acp_sdk import Client, decode; from acp_sdk.schema import SessionNotification; "
        f"decode({_CHUNK!r}, SessionNotification)",
    ),
    "import acp_sdk.unstable": ("pass", "import acp_sdk.unstable"),
}
# CPU time, not wall time: on a shared machine a process waiting for a core would
# otherwise count the wait.
PROGRAM = "{pre}; import time; t = time.process_time(); {stmt}; print(time.process_time() - t)"

# Per-call cases: (label, statement), run against the models module `m`.
_SETUP = """
t1 = m.TextContent(text="hi"); t2 = m.TextContent(text="hi")
c1 = m.AgentMessageChunk(content=t1); c2 = m.AgentMessageChunk(content=t2)
n1 = m.SessionNotification(session_id="s", update=c1)
n2 = m.SessionNotification(session_id="s", update=c2)
k1 = m.ToolCall(tool_call_id="t", title="Read", locations=[m.ToolCallLocation(path="/a")])
k2 = m.ToolCall(tool_call_id="t", title="Read", locations=[m.ToolCallLocation(path="/a")])
"""
CASES = [
    ("TextContent(text=...)", 'm.TextContent(text="hi")'),
    ("AgentMessageChunk(content=...)", "m.AgentMessageChunk(content=t1)"),
    ("ToolCall(3 of 10 fields)", 'm.ToolCall(tool_call_id="t", title="Read", locations=())'),
    ("TextContent ==", "t1 == t2"),
    ("SessionNotification == (nested)", "n1 == n2"),
    ("ToolCall ==", "k1 == k2"),
    ("TextContent !=", "t1 != t2"),
    ("hash(TextContent)", "hash(t1)"),
]
# One process holds both builds' models: the emitted one imported as usual, the attrs
# one loaded from its file under another name (a models module imports only attrs and
# `_model_support`). Each case then alternates between the two, 200 times 2,000 calls,
# and keeps each one's best: machine noise hits both alike.
_PER_CALL = """
import importlib.util, json, sys, time
from acp_sdk.protocol._generated import models as emitted
spec = importlib.util.spec_from_file_location("attrs_models", {attrs_models!r})
attrs_models = importlib.util.module_from_spec(spec)
sys.modules["attrs_models"] = attrs_models
spec.loader.exec_module(attrs_models)
def loop_ns():
    code = compile("for _ in range(2000):\\n    pass", "loop", "exec")
    low = float("inf")
    for _ in range(200):
        start = time.perf_counter()
        exec(code, {{}})
        low = min(low, time.perf_counter() - start)
    return low / 2000 * 1e9
loop = loop_ns()  # the loop's own cost per call, taken off every figure
out = {{}}
for label, stmt in {cases!r}:
    best = {{}}
    for name, m in (("emitted", emitted), ("attrs", attrs_models)):
        scope = {{"m": m}}
        exec({setup!r}, scope)
        code = compile("for _ in range(2000):\\n    " + stmt, label, "exec")
        best[name] = (code, scope, float("inf"))
    for _ in range(200):
        for name, (code, scope, low) in best.items():
            start = time.perf_counter()
            exec(code, scope)
            best[name] = (code, scope, min(low, time.perf_counter() - start))
    out[label] = {{name: low / 2000 * 1e9 - loop for name, (_, _, low) in best.items()}}
print(json.dumps(out))
"""


def build(where: Path) -> dict[str, Path]:
    """The two copies of the package: {"emitted": path, "attrs": path}."""
    builds = {}
    for name in ("emitted", "attrs"):
        target = where / name
        shutil.copytree(ROOT / "acp_sdk", target / "acp_sdk", ignore=_no_caches)
        shutil.copy(ROOT / "pyproject.toml", target)  # the generator formats with its ruff rules
        builds[name] = target
    # Regenerate the attrs build with only `__repr__` written into each class body.
    patch = (
        "from acp_sdk._codegen import emit_model_methods as m\n"
        "m.methods = lambda name, slots: ['', '    __repr__ = model_repr']\n"
        "from acp_sdk._codegen.__main__ import main\n"
        "raise SystemExit(main())\n"
    )
    # Run from the copy: `python -c` puts the working directory first on sys.path.
    attrs_build = builds["attrs"]
    subprocess.run(
        [sys.executable, "-c", patch], check=True, cwd=attrs_build, env=_env(attrs_build)
    )
    if model_lines(attrs_build) >= model_lines(builds["emitted"]):
        raise RuntimeError("the attrs build was not regenerated")
    for target in builds.values():
        compileall.compile_dir(target / "acp_sdk", quiet=1)
    return builds


def _no_caches(_dir: str, names: list[str]) -> list[str]:
    return [n for n in names if n == "__pycache__"]


def _env(path: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(path)}


def _python(code: str, path: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=_env(path),
        cwd=tempfile.gettempdir(),
    )
    return result.stdout


def model_lines(path: Path) -> int:
    text = (path / "acp_sdk/protocol/_generated/models.py").read_text(encoding="utf-8")
    return text.count("\n")


def measure(builds: dict[str, Path], rounds: int) -> dict[str, Any]:
    cold: dict[str, dict[str, list[float]]] = {
        label: {name: [] for name in builds} for label in COLD
    }
    calls: dict[str, dict[str, list[float]]] = {
        label: {name: [] for name in builds} for label, _ in CASES
    }
    for pre, stmt in COLD.values():  # warm the file cache
        for path in builds.values():
            _python(PROGRAM.format(pre=pre, stmt=stmt), path)
    for round_ in range(rounds):
        order = list(builds) if round_ % 2 == 0 else list(reversed(builds))
        for label, (pre, stmt) in COLD.items():
            per_build: dict[str, list[float]] = {name: [] for name in builds}
            for _ in range(RUNS):
                for name in order:
                    out = _python(PROGRAM.format(pre=pre, stmt=stmt), builds[name])
                    per_build[name].append(float(out) * 1000)
            for name in builds:  # the least CPU time of the round's runs
                cold[label][name].append(min(per_build[name]))
        attrs_models = builds["attrs"] / "acp_sdk/protocol/_generated/models.py"
        code = _PER_CALL.format(setup=_SETUP, cases=CASES, attrs_models=str(attrs_models))
        figures: dict[str, dict[str, float]] = json.loads(_python(code, builds["emitted"]))
        for label, by_build in figures.items():
            for name, ns in by_build.items():
                calls[label][name].append(ns)
        print(f"round {round_ + 1}/{rounds} done", file=sys.stderr)
    return {"cold_ms": cold, "call_ns": calls}


def _report(title: str, table: dict[str, dict[str, list[float]]], unit: str) -> None:
    print(f"\n{title}")
    print(f"  {'case':34} {'emitted':>22} {'attrs':>22}  attrs/emitted")
    for label, per_build in table.items():
        cells = []
        for name in ("emitted", "attrs"):
            values = per_build[name]
            cells.append(f"{statistics.median(values):7.1f} ({min(values):.1f}-{max(values):.1f})")
        ratios = [a / e for a, e in zip(per_build["attrs"], per_build["emitted"], strict=True)]
        print(f"  {label:34} {cells[0]:>22} {cells[1]:>22}  {statistics.median(ratios):.2f}x")
    print(f"  ({unit}; median over rounds (min-max); ratio: median of per-round ratios)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as where:
        builds = build(Path(where))
        lines = {name: model_lines(path) for name, path in builds.items()}
        results = measure(builds, args.rounds)
    print(f"models.py lines: emitted {lines['emitted']}, attrs {lines['attrs']}")
    _report("cold: CPU time of the statement, fresh interpreters", results["cold_ms"], "ms")
    _report("per call", results["call_ns"], "ns per call, best of 200 batches")


if __name__ == "__main__":
    main()
