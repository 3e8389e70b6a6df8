"""Reading a recording made by `record` (the format is in `acp_sdk.tools._record`)."""

from __future__ import annotations

import base64
import binascii
from typing import Any, cast

import attrs
import orjson

from acp_sdk.tools._record import FORMAT_VERSION, frame_bytes


class RecordingError(Exception):
    """The file is not a recording this version can read."""


@attrs.frozen(kw_only=True, order=False)
class Frame:
    """One recorded frame: who wrote it, when, its bytes and (when it is a JSON object)
    its parsed message."""

    t: float
    origin: str  # "client" | "agent" | "stderr"
    data: bytes
    message: dict[str, Any] | None
    partial: bool = False

    @property
    def method(self) -> str | None:
        method = self.message.get("method") if self.message is not None else None
        return method if isinstance(method, str) else None

    @property
    def is_request(self) -> bool:
        return self.message is not None and self.method is not None and "id" in self.message

    @property
    def is_notification(self) -> bool:
        return self.message is not None and self.method is not None and "id" not in self.message

    @property
    def is_response(self) -> bool:
        return (
            self.message is not None
            and self.method is None
            and ("result" in self.message or "error" in self.message)
        )

    @property
    def id(self) -> Any:
        return self.message.get("id") if self.message is not None else None


@attrs.frozen(kw_only=True, order=False)
class Recording:
    header: dict[str, Any]
    frames: tuple[Frame, ...]
    exit_code: int | None
    signal: int | None
    ended_at: float | None


def obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (for reading untrusted JSON
    one field at a time)."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def items(value: Any) -> list[Any]:
    """`value` when it is a JSON array, else an empty one."""
    if isinstance(value, list):
        found: list[Any] = value  # pyright: ignore[reportUnknownVariableType] - JSON: Any
        return found
    return []


def _parse(data: bytes) -> dict[str, Any] | None:
    try:
        value: Any = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return obj(value) if isinstance(value, dict) else None


def load(path: str) -> Recording:
    """Read a recording; raises `RecordingError` (with the line) when it cannot."""
    frames: list[Frame] = []
    header: dict[str, Any] | None = None
    exit_code: int | None = None
    signal_number: int | None = None
    ended_at: float | None = None
    try:
        with open(path, "rb") as file:
            for number, line in enumerate(file, 1):
                if not line.strip():
                    continue
                try:
                    parsed: Any = orjson.loads(line)
                except orjson.JSONDecodeError:
                    raise RecordingError(f"{path}:{number}: not a JSON line") from None
                if not isinstance(parsed, dict):
                    raise RecordingError(f"{path}:{number}: not a JSON object")
                entry = obj(parsed)
                if header is None:
                    if entry.get("acp_sdk_recording") != FORMAT_VERSION:
                        raise RecordingError(
                            f"{path}: not an acp_sdk recording (version {FORMAT_VERSION})"
                        )
                    header = entry
                    continue
                where = f"{path}:{number}"
                if "from" in entry:
                    data = _frame_bytes(entry, where)
                    origin = str(entry["from"])
                    frames.append(
                        Frame(
                            t=_time(entry, where),
                            origin=origin,
                            data=data,
                            message=_parse(data) if origin != "stderr" else None,
                            partial=bool(entry.get("partial", False)),
                        )
                    )
                elif "exit" in entry or "signal" in entry:
                    exit_code = _int(entry.get("exit"))
                    signal_number = _int(entry.get("signal"))
                    ended_at = _time(entry, where)
    except OSError as error:
        raise RecordingError(f"cannot read {path}: {error.strerror}") from None
    if header is None:
        raise RecordingError(f"{path}: empty, not a recording")
    return Recording(
        header=header,
        frames=tuple(frames),
        exit_code=exit_code,
        signal=signal_number,
        ended_at=ended_at,
    )


def _time(entry: dict[str, Any], where: str) -> float:
    """The entry's `t` (seconds since the start; 0 when absent)."""
    value = entry.get("t", 0.0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise RecordingError(f"{where}: the time `t` is not a number")


def _frame_bytes(entry: dict[str, Any], where: str) -> bytes:
    """`frame_bytes`, for a file nobody vouches for: a malformed frame is a
    `RecordingError` naming its line, not a traceback."""
    text, b64 = entry.get("text", ""), entry.get("b64")
    if b64 is not None:
        if isinstance(b64, str):
            try:
                return base64.b64decode(b64, validate=True)
            except (ValueError, binascii.Error):
                pass
        raise RecordingError(f"{where}: the frame's `b64` is not base64 text")
    if not isinstance(text, str):
        raise RecordingError(f"{where}: the frame's `text` is not a string")
    return frame_bytes(entry)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def id_key(value: Any) -> Any:
    """A recorded request id as a dict key: 1 and "1" are different ids, and True is not
    1; an id JSON-RPC does not allow (an array, an object) still gets one."""
    if type(value) in (list, dict):
        return (type(value).__name__, orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    return (type(value).__name__, value)


def session_of(frame: Frame) -> str | None:
    """The frame's `params.sessionId`, when it names one."""
    session = obj(obj(frame.message).get("params")).get("sessionId")
    return session if isinstance(session, str) else None
