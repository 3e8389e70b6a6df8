"""The built-in local handlers: `LocalFileSystem` and `LocalTerminals`, directly."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_sdk import RequestError
from acp_sdk.handlers import (
    DEFAULT_MAX_READ_BYTES,
    HandlerSet,
    LocalFileSystem,
    LocalTerminals,
)
from acp_sdk.schema import (
    CreateTerminalRequest,
    EnvVariable,
    KillTerminalRequest,
    ReadTextFileRequest,
    ReleaseTerminalRequest,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WriteTextFileRequest,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file types and process groups")

INVALID_PARAMS = -32602


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root").mkdir()
    (tmp_path / "outside.txt").write_text("secret")
    (tmp_path / "outside").mkdir()
    return (tmp_path / "root").resolve()


def read(fs: LocalFileSystem, path: str, **kw: Any) -> str:
    return fs.read_text_file(ReadTextFileRequest(session_id="s", path=path, **kw)).content


def write(fs: LocalFileSystem, path: str, content: str) -> None:
    fs.write_text_file(WriteTextFileRequest(session_id="s", path=path, content=content))


def refused(call: Callable[[], Any], *, code: int = INVALID_PARAMS) -> dict[str, Any]:
    with pytest.raises(RequestError) as caught:
        call()
    assert caught.value.code == code, caught.value
    data: dict[str, Any] = caught.value.data
    return data


def in_time(call: Callable[[], Any], seconds: float = 5.0) -> Any:
    """Run `call` in a thread: it must finish in time (a FIFO must never block the client)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as error:
            box["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the call blocked"
    if "error" in box:
        raise box["error"]
    return box.get("value")


# ------------------------------------------------------------------ paths


def _bad_paths(root: Path) -> list[tuple[str, str]]:
    (root / "link").symlink_to(root.parent / "outside.txt")
    (root / "dirlink").symlink_to(root.parent / "outside")
    (root / "loop").symlink_to(root / "loop")
    return [
        (f"{root}/a\x00b.txt", "NUL byte"),
        ("notes.txt", "absolute"),
        ("./notes.txt", "absolute"),
        ("", "absolute"),
        (f"{root}/../outside.txt", "outside"),
        (f"{root}/sub/../../outside/new.txt", "outside"),
        (f"{root}/link", "outside"),
        (f"{root}/dirlink/new.txt", "outside"),
        (f"{root}/loop", "resolved"),
    ]


BAD_PATH_IDS = ["nul", "relative", "dot-relative", "empty", "dotdot", "dotdot-deep"]
BAD_PATH_IDS += ["symlink-file", "symlink-dir", "symlink-loop"]


@posix_only
@pytest.mark.parametrize("case", range(9), ids=BAD_PATH_IDS)
@pytest.mark.parametrize("operation", ["read", "write"])
def test_bad_paths_are_invalid_params_naming_the_path(
    root: Path, case: int, operation: str
) -> None:
    path, reason = _bad_paths(root)[case]
    fs = LocalFileSystem(root)

    def call() -> Any:
        return read(fs, path) if operation == "read" else write(fs, path, "x")

    data = refused(call)
    assert data["path"] == path
    assert reason in data["reason"]
    assert (root.parent / "outside.txt").read_text() == "secret"
    assert not (root.parent / "outside" / "new.txt").exists()


def test_paths_inside_the_root_through_dotdot_and_symlinks_are_fine(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "a.txt").write_text("A")
    (root / "alias").symlink_to(root / "a.txt")
    fs = LocalFileSystem(root)
    assert read(fs, f"{root}/sub/../a.txt") == "A"
    write(fs, f"{root}/alias", "B")  # written through the link, which stays a link
    assert (root / "alias").is_symlink()
    assert (root / "a.txt").read_text() == "B"


def test_missing_file_is_resource_not_found(root: Path) -> None:
    refused(lambda: read(LocalFileSystem(root), f"{root}/nope.txt"), code=-32002)


# ------------------------------------------------------------------ what is read


@posix_only
@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_only_regular_files_are_read_never_blocking(root: Path, kind: str) -> None:
    fs = LocalFileSystem(root)
    if kind == "directory":
        path = root / "dir"
        path.mkdir()
    elif kind == "fifo":
        path = root / "pipe"
        os.mkfifo(path)
    else:
        fs, path = LocalFileSystem("/dev"), Path("/dev/null")
    try:
        data = refused(lambda: in_time(lambda: read(fs, str(path))))
        assert data["path"] == str(path)
        assert "not a regular file" in data["reason"]
    finally:
        if kind == "fifo":  # release a reader blocked by a regressed implementation
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def test_reads_are_capped(root: Path) -> None:
    assert LocalFileSystem.max_read_bytes == DEFAULT_MAX_READ_BYTES == 16 << 20
    (root / "ten").write_text("0123456789")
    (root / "eleven").write_text("0123456789A")
    fs = LocalFileSystem(root, max_read_bytes=10)
    assert read(fs, f"{root}/ten") == "0123456789"
    data = refused(lambda: read(fs, f"{root}/eleven"))
    assert (data["path"], data["size"], data["limit"]) == (f"{root}/eleven", 11, 10)
    refused(lambda: read(fs, f"{root}/eleven", line=1, limit=1))  # the cap is on the file


def test_non_utf8_is_refused(root: Path) -> None:
    (root / "bin").write_bytes(b"\xff\xfe\x00")
    assert "UTF-8" in refused(lambda: read(LocalFileSystem(root), f"{root}/bin"))["reason"]


TEXT = "a\nb\r\nc\rd\n"


@pytest.mark.parametrize(
    ("line", "limit", "expected"),
    [
        (None, None, TEXT),
        (1, None, TEXT),
        (2, None, "b\r\nc\rd\n"),
        (2, 2, "b\r\nc\r"),
        (None, 1, "a\n"),
        (4, 10, "d\n"),
        (5, None, ""),
        (1, 0, ""),
        (0, 1, "a\n"),
    ],
)
def test_line_is_one_based_and_limit_counts_lines(
    root: Path, line: int | None, limit: int | None, expected: str
) -> None:
    (root / "f").write_bytes(TEXT.encode())
    assert read(LocalFileSystem(root), f"{root}/f", line=line, limit=limit) == expected


# ------------------------------------------------------------------ what is written


def test_write_creates_the_file_and_missing_parents(root: Path) -> None:
    write(LocalFileSystem(root), f"{root}/new/deep/f.txt", "hello\r\nthere")
    assert (root / "new/deep/f.txt").read_bytes() == b"hello\r\nthere"


@posix_only
def test_write_preserves_the_mode_and_new_files_follow_the_umask(root: Path) -> None:
    target = root / "script.sh"
    target.write_text("old")
    target.chmod(0o750)
    fs = LocalFileSystem(root)
    write(fs, str(target), "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert target.read_text() == "new"
    umask = os.umask(0o022)
    try:
        write(fs, f"{root}/fresh.txt", "x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((root / "fresh.txt").stat().st_mode) == 0o644


def test_write_is_atomic(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = root / "config.json"
    target.write_text("old")

    def crash(*_: Any) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", crash)
    monkeypatch.setattr(os, "rename", crash)
    data = refused(lambda: write(LocalFileSystem(root), str(target), "new content"))
    assert data["path"] == str(target)
    assert target.read_text() == "old"  # never half-written, never replaced
    assert sorted(p.name for p in root.iterdir()) == ["config.json"]  # no temporary left


@posix_only
@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_writing_over_a_non_regular_file_is_refused(root: Path, kind: str) -> None:
    path = root / kind
    if kind == "directory":
        path.mkdir()
    else:
        os.mkfifo(path)
    try:
        data = refused(lambda: in_time(lambda: write(LocalFileSystem(root), str(path), "x")))
        assert "not a regular file" in data["reason"]
    finally:
        if kind == "fifo":
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))


def test_unencodable_content_is_refused(root: Path) -> None:
    refused(lambda: write(LocalFileSystem(root), f"{root}/s.txt", "lone \ud800 surrogate"))
    assert not (root / "s.txt").exists()


# ------------------------------------------------------------------ terminals

PY = sys.executable


def create(terminals: LocalTerminals, code: str, **kw: Any) -> str:
    request = CreateTerminalRequest(session_id="s", command=PY, args=["-c", code], **kw)
    return terminals.create_terminal(request).terminal_id


def output(terminals: LocalTerminals, terminal_id: str) -> TerminalOutputResponse:
    return terminals.terminal_output(TerminalOutputRequest(session_id="s", terminal_id=terminal_id))


def wait(terminals: LocalTerminals, terminal_id: str) -> None:
    terminals.wait_for_terminal_exit(
        WaitForTerminalExitRequest(session_id="s", terminal_id=terminal_id)
    )


def poll(condition: Callable[[], bool], seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.fixture
def terminals() -> Iterator[LocalTerminals]:
    made = LocalTerminals()
    yield made
    made.close()


def test_the_agents_output_limit_is_clamped() -> None:
    terminals = LocalTerminals(max_output_limit=1000)
    try:
        tid = create(terminals, "print('x' * 5000)", output_byte_limit=2**62)
        wait(terminals, tid)
        result = output(terminals, tid)
        assert len(result.output.encode()) <= 1000
        assert result.truncated
        assert result.output.endswith("x\n")
    finally:
        terminals.close()


def test_a_smaller_agent_limit_is_kept(terminals: LocalTerminals) -> None:
    tid = create(terminals, "print('x' * 5000)", output_byte_limit=10)
    wait(terminals, tid)
    assert len(output(terminals, tid).output) <= 10


ENCODE = "import sys; w = sys.stdout.buffer.write; "


@pytest.mark.parametrize(
    ("code", "limit", "expected", "truncated"),
    [
        # 'é' is two bytes: a cut at an odd offset drops the orphaned continuation byte
        (ENCODE + "w('é'.encode() * 10)", 7, "ééé", True),
        # '€' is three bytes, '😀' four
        (ENCODE + "w('a€😀'.encode())", 6, "😀", True),
        (ENCODE + "w('a€😀'.encode())", 100, "a€😀", False),
        # truly invalid bytes become U+FFFD, within the byte limit (U+FFFD is 3 bytes)
        (ENCODE + "w(b'ok\\xff\\xfe')", 100, "ok\ufffd\ufffd", False),
        (ENCODE + "w(b'\\xff' * 10)", 10, "\ufffd" * 3, True),
        # an incomplete character at the very end, after exit: invalid
        (ENCODE + "w(b'ab\\xc3')", 100, "ab\ufffd", False),
    ],
)
def test_output_is_cut_at_character_boundaries(
    terminals: LocalTerminals, code: str, limit: int, expected: str, truncated: bool
) -> None:
    tid = create(terminals, code, output_byte_limit=limit)
    wait(terminals, tid)
    result = output(terminals, tid)
    assert (result.output, result.truncated) == (expected, truncated)
    assert len(result.output.encode()) <= limit


def test_a_character_still_being_written_is_held_back(terminals: LocalTerminals) -> None:
    code = ENCODE + "w(b'ok\\xc3'); sys.stdout.flush(); import time; time.sleep(60)"
    tid = create(terminals, code)
    poll(lambda: output(terminals, tid).output != "")
    assert output(terminals, tid).output == "ok"  # not "ok\ufffd": the rest may follow


@posix_only
@pytest.mark.parametrize(
    ("cwd", "reason"),
    [
        ("relative/dir", "absolute"),
        ("/tmp/a\x00b", "NUL byte"),
        ("{root}/../outside", "outside"),
        ("{root}/dirlink", "outside"),
        ("/", "outside"),
        ("{root}/missing", "not an existing directory"),
    ],
)
def test_cwd_must_be_absolute_and_inside_the_root(root: Path, cwd: str, reason: str) -> None:
    (root / "dirlink").symlink_to(root.parent / "outside")
    cwd = cwd.format(root=root)
    terminals = LocalTerminals(root=root)
    try:
        data = refused(lambda: create(terminals, "print(1)", cwd=cwd))
        assert data["cwd"] == cwd
        assert reason in data["reason"]
    finally:
        terminals.close()


def test_relative_cwd_is_refused_without_a_root(terminals: LocalTerminals) -> None:
    assert "absolute" in refused(lambda: create(terminals, "print(1)", cwd="."))["reason"]


def test_a_rooted_terminal_runs_in_the_root_by_default(root: Path) -> None:
    (root / "sub").mkdir()
    terminals = LocalTerminals(root=root)
    try:
        for cwd, expected in ((None, root), (str(root / "sub"), root / "sub")):
            tid = create(terminals, "import os; print(os.getcwd())", cwd=cwd)
            wait(terminals, tid)
            assert output(terminals, tid).output.strip() == str(expected)
    finally:
        terminals.close()


def test_a_command_that_cannot_start_is_invalid_params(terminals: LocalTerminals) -> None:
    for command in ("/no/such/program", "bad\x00name"):
        request = CreateTerminalRequest(session_id="s", command=command)
        data = refused(lambda r=request: terminals.create_terminal(r))  # type: ignore[misc]
        assert data["command"] == command


SHOW_ENV = "import json, os; print(json.dumps(dict(os.environ)))"


def test_env_inherits_the_clients_plus_the_agents(
    terminals: LocalTerminals, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_TEST_INHERITED", "client")
    monkeypatch.setenv("ACP_TEST_OVERRIDDEN", "client")
    agent = [EnvVariable(name="ACP_TEST_OVERRIDDEN", value="agent")]
    tid = create(terminals, SHOW_ENV, env=agent)
    wait(terminals, tid)
    env = json.loads(output(terminals, tid).output)
    assert env["ACP_TEST_INHERITED"] == "client"
    assert env["ACP_TEST_OVERRIDDEN"] == "agent"


def test_an_env_argument_replaces_the_inherited_base(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_TEST_INHERITED", "client")
    terminals = LocalTerminals(env={"ONLY": "base", "PATH": os.environ.get("PATH", "")})
    try:
        tid = create(terminals, SHOW_ENV, env=[EnvVariable(name="AGENT", value="a")])
        wait(terminals, tid)
        env = json.loads(output(terminals, tid).output)
    finally:
        terminals.close()
    assert "ACP_TEST_INHERITED" not in env
    assert (env["ONLY"], env["AGENT"]) == ("base", "a")
    # The interpreter may add its own locale variable; nothing else appears.
    assert set(env) - {"ONLY", "AGENT", "PATH", "LC_CTYPE", "__CF_USER_TEXT_ENCODING"} == set()


# ------------------------------------------------------------------ process groups


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as status:
            return status.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# The command starts a grandchild in the background and prints its pid.
SPAWNS = (
    "import subprocess, sys, time; "
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
    "print(p.pid, flush=True); {rest}"
)


def _grandchild(terminals: LocalTerminals, tid: str) -> int:
    poll(lambda: output(terminals, tid).output.strip() != "")
    return int(output(terminals, tid).output.split()[0])


@posix_only
@pytest.mark.parametrize("how", ["kill", "release", "close", "handler-set-close"])
def test_the_whole_process_group_dies(how: str) -> None:
    terminals = LocalTerminals()
    try:
        tid = create(terminals, SPAWNS.format(rest="time.sleep(120)"))
        child = _grandchild(terminals, tid)
        assert _alive(child)
        if how == "kill":
            terminals.kill_terminal(KillTerminalRequest(session_id="s", terminal_id=tid))
            wait(terminals, tid)
            assert output(terminals, tid).exit_status is not None  # still valid after kill
        elif how == "release":
            terminals.release_terminal(ReleaseTerminalRequest(session_id="s", terminal_id=tid))
            refused(lambda: output(terminals, tid), code=-32002)
        elif how == "close":
            terminals.close()
        else:
            HandlerSet([terminals]).close()
        poll(lambda: not _alive(child))
    finally:
        terminals.close()


@posix_only
def test_release_kills_what_outlives_the_command(terminals: LocalTerminals) -> None:
    tid = create(terminals, SPAWNS.format(rest="pass"))  # the command exits at once
    child = _grandchild(terminals, tid)
    wait(terminals, tid)
    assert _alive(child)
    terminals.release_terminal(ReleaseTerminalRequest(session_id="s", terminal_id=tid))
    poll(lambda: not _alive(child))


def test_close_is_idempotent_and_final(terminals: LocalTerminals) -> None:
    tids = [create(terminals, "import time; time.sleep(120)") for _ in range(2)]
    terminals.close()
    terminals.close()
    for tid in tids:
        refused(lambda t=tid: output(terminals, t), code=-32002)  # type: ignore[misc]
    with pytest.raises(RequestError):
        create(terminals, "print(1)")
