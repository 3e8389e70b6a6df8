"""An agent that cannot be started says what failed: its working directory or its
program. A missing `cwd` was reported as `[Errno 2] No such file or directory:
'/nonexistent'`, which the CLI read as the program ("python not found")."""

from __future__ import annotations

import errno
import sys
from pathlib import Path

import pytest

from tests.client.facades import FACADES, SCENARIO

pytestmark = pytest.mark.timeout(30)


def cases(tmp: Path) -> list[tuple[list[str], str | None, type[OSError], str]]:
    a_file = tmp / "file"
    a_file.write_text("")
    script = tmp / "script"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    return [
        (SCENARIO, "/nonexistent", FileNotFoundError,
         "[Errno 2] the agent's working directory does not exist: '/nonexistent'"),
        (SCENARIO, str(a_file), NotADirectoryError,
         f"[Errno 20] the agent's working directory is not a directory: '{a_file}'"),
        (["no-such-agent-for-acp"], None, FileNotFoundError,
         "[Errno 2] the agent command was not found: 'no-such-agent-for-acp'"),
        ([str(a_file)], None, PermissionError,
         f"[Errno 13] the agent command is not executable (permission denied): '{a_file}'"),
        ([str(script)], None, FileNotFoundError,
         f"[Errno 2] the agent command's interpreter (its #! line) was not found: '{script}'"),
        ([str(tmp)], None, PermissionError,
         f"[Errno 13] the agent command is a directory: '{tmp}'"),
        ([""], None, PermissionError, "[Errno 13] the agent command is empty: ''"),
    ]  # fmt: skip


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX exec errors")
@pytest.mark.parametrize("facade", sorted(FACADES))
def test_a_failed_start_names_the_directory_or_the_program(facade: str, tmp_path: Path) -> None:
    for argv, cwd, kind, message in cases(tmp_path):
        with pytest.raises(kind) as raised, FACADES[facade](argv, cwd=cwd):
            pass
        assert type(raised.value) is kind
        assert str(raised.value) == message
        assert raised.value.filename == (cwd if cwd is not None else argv[0])
        assert raised.value.errno in (errno.ENOENT, errno.ENOTDIR, errno.EACCES)
