"""The per-frame shortcuts of issue 13 give the answers the full paths give.

- `_check_outbound` remembers the last row that passed; any change of lifecycle or of
  the peer's capabilities object, another row, or params-dependent checks re-run it all.
- `LineFramer.feed` splits whole lines in C; partial, CRLF, blank and oversized lines
  still go through the careful path (the Hypothesis chunking tests in test_framing.py
  check any split of any stream; these are the hand-picked edges).
- `classify` recognises a well-formed notification first; everything else falls through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from acp_sdk import CapabilityNotNegotiated, Connection, ConnectionClosed, decode
from acp_sdk import methods as m
from acp_sdk import schema as s
from acp_sdk.protocol import _jsonrpc as rpc
from acp_sdk.protocol._framing import FRAME_TOO_LARGE, LineFramer
from acp_sdk.testing import ConnectionPair

URL_ELICITATION = decode({"elicitation": {"url": {}}}, s.ClientCapabilities)
COMPLETE = s.CompleteElicitationNotification(elicitation_id="e1")
UPDATE = s.SessionNotification(
    session_id="s1", update=s.AgentMessageChunk(content=s.TextContent(text="hi"))
)


def ready_agent() -> Connection:
    pair = ConnectionPair()
    pair.initialize(client_capabilities=URL_ELICITATION)
    return pair.agent


def close_locally(agent: Connection) -> None:
    agent.close()


def end_input(agent: Connection) -> None:
    agent.receive_data(b"")


def drop_capabilities(agent: Connection) -> None:
    agent.their_capabilities = s.ClientCapabilities()


CHANGES: list[tuple[str, Callable[[Connection], None], type[Exception]]] = [
    ("closed locally", close_locally, ConnectionClosed),
    ("end of input", end_input, ConnectionClosed),
    ("capabilities replaced", drop_capabilities, CapabilityNotNegotiated),
]


@pytest.mark.parametrize(("name", "change", "error"), CHANGES, ids=[c[0] for c in CHANGES])
def test_a_remembered_outbound_check_runs_again_after_a_change(
    name: str, change: Callable[[Connection], None], error: type[Exception]
) -> None:
    agent = ready_agent()
    for _ in range(3):  # passes, and is remembered
        assert orjson.loads(agent.send_notification(m.ELICITATION_COMPLETE, COMPLETE))
    change(agent)
    with pytest.raises(error):
        agent.send_notification(m.ELICITATION_COMPLETE, COMPLETE)


def test_a_remembered_row_does_not_clear_another_row() -> None:
    pair = ConnectionPair()
    pair.initialize()  # the client advertised no elicitation
    agent = pair.agent
    agent.send_notification(m.SESSION_UPDATE, UPDATE)
    agent.send_notification(m.SESSION_UPDATE, UPDATE)
    with pytest.raises(CapabilityNotNegotiated):
        agent.send_notification(m.ELICITATION_COMPLETE, COMPLETE)
    agent.send_notification(m.SESSION_UPDATE, UPDATE)


def test_a_check_skipped_on_request_is_not_remembered_as_passed() -> None:
    pair = ConnectionPair()
    pair.initialize()
    agent = pair.agent
    agent.send_notification(m.ELICITATION_COMPLETE, COMPLETE, check_capability=False)
    with pytest.raises(CapabilityNotNegotiated):
        agent.send_notification(m.ELICITATION_COMPLETE, COMPLETE)


def test_params_dependent_checks_are_never_remembered() -> None:
    pair = ConnectionPair()
    pair.initialize()
    text = s.PromptRequest(session_id="s", prompt=[s.TextContent(text="hi")])
    image = s.PromptRequest(session_id="s", prompt=[s.ImageContent(data="AA", mime_type="x/y")])
    pair.client.send_request(m.SESSION_PROMPT, text)
    pair.client.send_request(m.SESSION_PROMPT, text)
    with pytest.raises(CapabilityNotNegotiated):
        pair.client.send_request(m.SESSION_PROMPT, image)


LIMIT = 40
FRAMING: list[tuple[str, list[bytes], list[Any]]] = [
    ("whole lines", [b'{"a":1}\n{"b":2}\n{"c":3}\n'], [b'{"a":1}', b'{"b":2}', b'{"c":3}']),
    ("crlf", [b'{"a":1}\r\n{"b":2}\r\n'], [b'{"a":1}', b'{"b":2}']),
    ("blank and spaces", [b'\n  \n{"a":1}\n\t\r\n{"b":2}\n'], [b'{"a":1}', b'{"b":2}']),
    ("not an object", [b'[1]\n  {"a":1}  \n'], [b"[1]", b'  {"a":1}  ']),
    ("partial across chunks", [b'{"a":', b'1}\n{"b"', b":2}\n"], [b'{"a":1}', b'{"b":2}']),
    (
        "oversized in the middle",
        [b'{"a":1}\n{"x":"' + b"x" * LIMIT + b'"}\n{"b":2}\n'],
        [b'{"a":1}', FRAME_TOO_LARGE, b'{"b":2}'],
    ),
    (
        "oversized across chunks",
        [b'{"a":1}\n{"x":"' + b"x" * LIMIT, b"x" * LIMIT, b'"}\n{"b":2}\n'],
        [b'{"a":1}', FRAME_TOO_LARGE, b'{"b":2}'],
    ),
    ("exactly the limit", [b"{" + b"x" * (LIMIT - 2) + b"}\n"], [b"{" + b"x" * (LIMIT - 2) + b"}"]),
    ("one over the limit", [b"{" + b"x" * (LIMIT - 1) + b"}\n"], [FRAME_TOO_LARGE]),
    ("bom then lines", [b'\xef\xbb\xbf{"a":1}\n{"b":2}\n'], [b'{"a":1}', b'{"b":2}']),
    ("final line without newline", [b'{"a":1}\n{"b":2}', b""], [b'{"a":1}', b'{"b":2}']),
]


@pytest.mark.parametrize(("name", "chunks", "frames"), FRAMING, ids=[f[0] for f in FRAMING])
def test_framing_edges(name: str, chunks: list[bytes], frames: list[Any]) -> None:
    framer = LineFramer(max_frame_size=LIMIT)
    out: list[Any] = []
    for chunk in chunks:
        out += framer.feed(chunk)
    assert out == frames
    # byte by byte: the careful path only, the same frames
    framer = LineFramer(max_frame_size=LIMIT)
    out = []
    for byte in b"".join(chunks):
        out += framer.feed(bytes([byte]))
    if chunks[-1] == b"":
        out += framer.feed(b"")
    assert out == frames


CLASSIFY: list[tuple[str, dict[str, Any], type]] = [
    ("notification", {"jsonrpc": "2.0", "method": "m", "params": {}}, rpc.Notification),
    ("no params", {"jsonrpc": "2.0", "method": "m"}, rpc.Notification),
    ("null params", {"jsonrpc": "2.0", "method": "m", "params": None}, rpc.Notification),
    ("list params", {"jsonrpc": "2.0", "method": "m", "params": [1]}, rpc.Invalid),
    ("bad version", {"jsonrpc": "1.0", "method": "m"}, rpc.Invalid),
    ("method not a string", {"jsonrpc": "2.0", "method": 1}, rpc.Invalid),
    ("null id", {"jsonrpc": "2.0", "id": None, "method": "m"}, rpc.Invalid),
    ("request", {"jsonrpc": "2.0", "id": 1, "method": "m"}, rpc.Request),
    ("response", {"jsonrpc": "2.0", "id": 1, "result": {}}, rpc.Response),
]


@pytest.mark.parametrize(("name", "message", "kind"), CLASSIFY, ids=[c[0] for c in CLASSIFY])
def test_classify_shortcut_agrees(name: str, message: dict[str, Any], kind: type) -> None:
    result = rpc.classify(orjson.dumps(message))
    assert type(result) is kind
    if kind is rpc.Notification:
        assert result == rpc.Notification(method="m", params=message.get("params"))
