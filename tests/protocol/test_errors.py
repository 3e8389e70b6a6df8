"""The error hierarchy: builtin bases, messages, pickling."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from acp_sdk import (
    ACPError,
    CapabilityNotNegotiated,
    ConnectionClosed,
    DecodeError,
    RequestError,
    RequestTimeout,
    UnsupportedProtocolVersion,
)

BASES = [
    (ConnectionClosed(), (ACPError, ConnectionError, OSError)),
    (ConnectionClosed.agent_exited(exit_code=1, signal=None, stderr_tail=""), (ConnectionError,)),
    (RequestTimeout("request 3 timed out"), (ACPError, TimeoutError, OSError)),
    (RequestError(-32603, "Internal error"), (ACPError,)),
]


@pytest.mark.parametrize(("error", "bases"), BASES, ids=[type(b[0]).__name__ for b in BASES])
def test_builtin_bases(error: Exception, bases: tuple[type[Exception], ...]) -> None:
    for base in bases:
        assert isinstance(error, base)
    with pytest.raises(bases[-1]):
        raise error


def test_single_argument_is_never_read_as_errno() -> None:
    for error in (ConnectionClosed("two words"), RequestTimeout("two words")):
        assert isinstance(error, OSError)
        assert error.errno is None
        assert error.strerror is None
        assert str(error) == "two words"
        assert error.args == ("two words",)


def test_connection_closed_defaults() -> None:
    error = ConnectionClosed()
    assert str(error) == "the connection is closed"
    assert (error.exit_code, error.signal, error.stderr_tail) == (None, None, "")
    error = ConnectionClosed("gone", exit_code=3, signal=None, stderr_tail="boom\n")
    assert str(error) == "gone"
    assert (error.exit_code, error.signal, error.stderr_tail) == (3, None, "boom\n")


def test_request_timeout_default_message() -> None:
    assert str(RequestTimeout()) == "the request timed out"


ELEVEN_LINES = "".join(f"line {n}\n" for n in range(1, 12))

AGENT_EXITED = [
    (
        "exit 1 with stderr",
        1,
        None,
        "Traceback\n  boom\n",
        "agent exited with code 1: Traceback\n  boom",
    ),
    ("exit 0, no stderr", 0, None, "", "agent exited with code 0"),
    ("exit 2, blank stderr", 2, None, "\n  \n\n", "agent exited with code 2"),
    ("blank lines dropped", 1, None, "a\n\n\nb\n", "agent exited with code 1: a\nb"),
    ("crlf", 1, None, "a\r\nb\r\n", "agent exited with code 1: a\nb"),
    (
        "last ten lines",
        1,
        None,
        ELEVEN_LINES,
        "agent exited with code 1: " + "\n".join(f"line {n}" for n in range(2, 12)),
    ),
    ("sigkill", None, 9, "", "agent was killed by signal 9 (SIGKILL)"),
    ("sigterm with stderr", None, 15, "bye\n", "agent was killed by signal 15 (SIGTERM): bye"),
    ("unknown signal", None, 250, "", "agent was killed by signal 250"),
    ("no status", None, None, "", "the agent closed its output"),
    ("no status, stderr", None, None, "oops\n", "the agent closed its output: oops"),
]


@pytest.mark.parametrize(
    ("exit_code", "signal", "tail", "message"),
    [a[1:] for a in AGENT_EXITED],
    ids=[a[0] for a in AGENT_EXITED],
)
def test_agent_exited_messages(
    exit_code: int | None, signal: int | None, tail: str, message: str
) -> None:
    error = ConnectionClosed.agent_exited(exit_code=exit_code, signal=signal, stderr_tail=tail)
    assert str(error) == message
    assert (error.exit_code, error.signal, error.stderr_tail) == (exit_code, signal, tail)
    assert isinstance(error, ConnectionClosed)


def test_agent_exited_max_lines() -> None:
    error = ConnectionClosed.agent_exited(
        exit_code=1, signal=None, stderr_tail="a\nb\nc\n", max_lines=2
    )
    assert str(error) == "agent exited with code 1: b\nc"


LONG = "x" * 500
REQUEST_ERRORS = [
    ("no data", RequestError(-32603, "Internal error"), "Internal error (-32603)"),
    (
        "method not found",
        RequestError.method_not_found("foo"),
        'Method not found (-32601): {"method":"foo"}',
    ),
    ("string data", RequestError(-32000, "auth", "token"), 'auth (-32000): "token"'),
    ("falsy data", RequestError(1, "m", 0), "m (1): 0"),
    ("list data", RequestError(1, "m", [1, {"a": None}]), 'm (1): [1,{"a":null}]'),
    ("long data", RequestError(1, "m", LONG), 'm (1): "' + "x" * 198 + "\u2026"),
    ("not json", RequestError(1, "m", {1, 2}), "m (1): {1, 2}"),
    ("huge int", RequestError(1, "m", 2**70), f"m (1): {2**70}"),
    ("long repr", RequestError(1, "m", {LONG}), "m (1): {'" + "x" * 197 + "\u2026"),
]


@pytest.mark.parametrize(
    ("error", "text"), [r[1:] for r in REQUEST_ERRORS], ids=[r[0] for r in REQUEST_ERRORS]
)
def test_request_error_str(error: RequestError, text: str) -> None:
    assert str(error) == text
    rendered = str(error).partition(": ")[2]
    assert len(rendered) <= 200


PICKLED: list[tuple[str, Exception, dict[str, Any]]] = [
    ("closed", ConnectionClosed(), {}),
    (
        "closed with status",
        ConnectionClosed("gone", exit_code=1, signal=None, stderr_tail="t"),
        {"exit_code": 1, "signal": None, "stderr_tail": "t"},
    ),
    (
        "agent killed",
        ConnectionClosed.agent_exited(exit_code=None, signal=9, stderr_tail="x\n"),
        {"exit_code": None, "signal": 9, "stderr_tail": "x\n"},
    ),
    ("timeout", RequestTimeout("request 1 timed out"), {}),
    ("request error", RequestError(-32601, "Method not found", {"method": "x"}), {"code": -32601}),
    ("decode error", DecodeError("bad", ("a", 1)), {"path": ("a", 1)}),
    ("capability", CapabilityNotNegotiated("session/list", "a.b"), {"capability": "a.b"}),
    ("version", UnsupportedProtocolVersion(7, (1,)), {"version": 7, "supported": (1,)}),
]


@pytest.mark.parametrize(
    ("error", "attributes"), [p[1:] for p in PICKLED], ids=[p[0] for p in PICKLED]
)
def test_pickling_keeps_message_and_attributes(
    error: Exception, attributes: dict[str, Any]
) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.args == error.args
    for name, value in attributes.items():
        assert getattr(copy, name) == value
