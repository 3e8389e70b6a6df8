"""`LocalFileSystem`: `fs/read_text_file` and `fs/write_text_file`, confined to a root and
bounded (see its docstring)."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from acp_sdk.handlers._base import ClientHandlers
from acp_sdk.protocol._errors import RequestError
from acp_sdk.schema import (
    ReadTextFileRequest,
    ReadTextFileResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)


def _refuse(reason: str, **data: Any) -> RequestError:
    """-32602, the offending value(s) and the reason in `data` (the message stays the
    generic "Invalid params", which agents show as is)."""
    return RequestError.invalid_params({**data, "reason": reason})


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(mode: int) -> str | None:
    """Why a file of this mode cannot be read or written as a text file (None: it can)."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in _FILE_KINDS:
        if test(mode):
            return f"is {kind}, not a regular file"
    return "is not a regular file"


def _checked_path(value: str, what: str) -> Path:
    """An absolute path without NUL bytes, else -32602."""
    if "\x00" in value:
        raise _refuse("contains a NUL byte", **{what: value})
    if not os.path.isabs(value):
        raise _refuse("must be an absolute path", **{what: value})
    return Path(value)


def _is_symlink_loop(path: Path) -> bool:
    try:
        os.stat(path)
    except OSError as error:
        return error.errno == errno.ELOOP
    return False


def _resolved_inside(root: Path, value: str, what: str) -> Path:
    """`value` with `..` and symlinks resolved, when that lies inside `root`, else -32602."""
    candidate = _checked_path(value, what)
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError, ValueError):  # a symlink loop, an unreadable link
        raise _refuse("cannot be resolved", **{what: value}) from None
    if _is_symlink_loop(resolved):  # Python 3.13+ resolves a loop without raising
        raise _refuse("cannot be resolved", **{what: value})
    if resolved != root and root not in resolved.parents:
        raise _refuse("is outside the client's root", **{what: value})
    return resolved


DEFAULT_MAX_READ_BYTES = 16 << 20
"""`LocalFileSystem` refuses to read a file larger than this (16 MiB)."""

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class LocalFileSystem(ClientHandlers):
    """Serves `fs/read_text_file` and `fs/write_text_file` from one local directory tree.

    Paths must be absolute (the spec requires it), hold no NUL byte, and lie inside `root`
    once `..` and symlinks are resolved. Anything else is refused with -32602 (Invalid
    params), the path and the reason in the error's `data`; a file that does not exist
    is -32002 (Resource not found).

    Reading: only a regular file is read. A directory, FIFO, socket or device is refused
    with -32602 after an `os.stat`, before it is opened (and the open is non-blocking and
    re-checked, so a swap in between cannot block the client either). A file larger than
    `max_read_bytes` is refused with -32602 (`data` holds the size and the limit), even
    when `line`/`limit` select less: the file is read whole, as an editor buffer is. It
    must be UTF-8. `line` (1-based) and `limit` (a number of lines) select a range; lines
    end at LF, CRLF or CR, as editors count them.

    Writing: atomic. The content goes to a temporary file in the same directory, is
    flushed to disk, then renamed over the target (`os.replace`), so a crash leaves the
    old file or the new one, never half of one. An existing file keeps its permission
    bits; a symlink inside the root is written through (the link stays). A new file gets
    the usual mode (0o666 less the umask). The spec requires creating a missing file;
    missing parent directories (inside the root) are created too, as editors do when
    saving to a new path. Writing over a directory, FIFO or device is refused (-32602).

    Args:
        root: The directory agents may read and write (symlinks are resolved first).
        max_read_bytes: The largest file `read_text_file` returns, in bytes.
    """

    max_read_bytes: int = DEFAULT_MAX_READ_BYTES

    def __init__(self, root: str | os.PathLike[str], *, max_read_bytes: int | None = None) -> None:
        self.root = Path(root).resolve()
        if max_read_bytes is not None:
            if max_read_bytes < 0:
                raise ValueError("max_read_bytes must not be negative")
            self.max_read_bytes = max_read_bytes

    def _inside(self, path: str) -> Path:
        return _resolved_inside(self.root, path, "path")

    def read_text_file(self, params: ReadTextFileRequest) -> ReadTextFileResponse:
        path = self._inside(params.path)
        data = self._read_bytes(params.path, path)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _refuse("is not a UTF-8 text file", path=params.path) from None
        if params.line is not None or params.limit is not None:
            lines = io.StringIO(text, newline="").readlines()
            start = max((params.line or 1) - 1, 0)
            end = start + params.limit if params.limit is not None else len(lines)
            text = "".join(lines[start:end])
        return ReadTextFileResponse(content=text)

    def _read_bytes(self, shown: str, path: Path) -> bytes:
        limit = self.max_read_bytes
        try:
            info = os.stat(path)
        except FileNotFoundError:
            raise RequestError.resource_not_found(shown) from None
        except OSError as error:
            raise _refuse(f"cannot be read: {error.strerror}", path=shown) from None
        why = _not_regular(info.st_mode)
        if why is not None:
            raise _refuse(why, path=shown)
        if info.st_size > limit:
            raise _refuse(
                "is larger than the client reads", path=shown, size=info.st_size, limit=limit
            )
        try:
            fd = os.open(path, os.O_RDONLY | _O_NONBLOCK | _O_NOFOLLOW | _O_CLOEXEC)
        except FileNotFoundError:
            raise RequestError.resource_not_found(shown) from None
        except OSError as error:
            raise _refuse(f"cannot be read: {error.strerror}", path=shown) from None
        try:
            why = _not_regular(os.fstat(fd).st_mode)  # swapped since the stat?
            if why is not None:
                raise _refuse(why, path=shown)
            chunks: list[bytes] = []
            size = 0
            while size <= limit:  # the file may have grown since the stat
                chunk = os.read(fd, min(1 << 20, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except OSError as error:
            raise _refuse(f"cannot be read: {error.strerror}", path=shown) from None
        finally:
            os.close(fd)
        if size > limit:
            raise _refuse("is larger than the client reads", path=shown, size=size, limit=limit)
        return b"".join(chunks)

    def write_text_file(self, params: WriteTextFileRequest) -> WriteTextFileResponse:
        path = self._inside(params.path)
        try:
            data = params.content.encode("utf-8")
        except UnicodeEncodeError:
            raise _refuse("content is not valid Unicode text", path=params.path) from None
        try:
            info: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            info = None
        except OSError as error:
            raise _refuse(f"cannot be written: {error.strerror}", path=params.path) from None
        if info is not None:
            why = _not_regular(info.st_mode)
            if why is not None:
                raise _refuse(why, path=params.path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(path, data, None if info is None else stat.S_IMODE(info.st_mode))
        except OSError as error:
            reason = error.strerror or type(error).__name__
            raise _refuse(f"cannot be written: {reason}", path=params.path) from None
        return WriteTextFileResponse()


def _atomic_write(path: Path, data: bytes, mode: int | None) -> None:
    """Write `data` to a new file beside `path`, sync it, then rename it over `path`."""
    directory = path.parent
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
    while True:
        temporary = directory / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(temporary, flags, 0o666)  # the umask applies, as for a new file
            break
        except FileExistsError:
            continue
    try:
        try:
            if mode is not None and hasattr(os, "fchmod"):  # POSIX (Windows: 3.13+)
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable (POSIX)
        dir_fd = os.open(directory, os.O_RDONLY | _O_CLOEXEC)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
