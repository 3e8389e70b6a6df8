"""A wrong-typed send raises `EncodeError` before anything changes (issue 28).

On both sides of the sans-IO connection: the error reaches the caller with the field's
path, no bytes are produced, no id is used up, the lifecycle stays where it was, and the
next valid send goes through as if the bad one had never been tried.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from acp_sdk import EncodeError
from acp_sdk import methods as m
from acp_sdk import schema as s
from acp_sdk.protocol import RequestReceived, ResponseReceived, State
from acp_sdk.testing import ConnectionPair

BAD_PROMPT = s.PromptRequest(session_id="s1", prompt=[s.TextContent(text=7)])  # type: ignore[arg-type]
GOOD_PROMPT = s.PromptRequest(session_id="s1", prompt=[s.TextContent(text="hi")])


def ready() -> ConnectionPair:
    pair = ConnectionPair()
    pair.initialize()
    return pair


def test_a_wrong_typed_request_changes_nothing() -> None:
    pair = ready()
    with pytest.raises(EncodeError) as caught:
        pair.client.send_request(m.SESSION_PROMPT, BAD_PROMPT)
    assert str(caught.value) == "prompt[0].text: expected a string, got an integer"
    assert pair.client.data_to_send() == b""
    request_id, data = pair.client.send_request(m.SESSION_PROMPT, GOOD_PROMPT)
    assert request_id == 1  # the id the refused request would have had
    [received] = pair.deliver_to_agent(data)
    assert isinstance(received, RequestReceived)
    assert received.params == GOOD_PROMPT
    answer = pair.agent.send_response(request_id, s.PromptResponse(stop_reason="end_turn"))
    [response] = pair.deliver_to_client(answer)
    assert isinstance(response, ResponseReceived)
    assert response.result == s.PromptResponse(stop_reason="end_turn")


def test_a_wrong_typed_initialize_leaves_the_connection_new() -> None:
    pair = ConnectionPair()
    bad = s.InitializeRequest(protocol_version="1")  # type: ignore[arg-type]
    with pytest.raises(EncodeError) as caught:
        pair.client.send_request(m.INITIALIZE, bad)
    assert caught.value.path == ("protocolVersion",)
    assert pair.client.state is State.NEW
    pair.initialize()
    state: State = pair.client.state  # changed by initialize (mypy narrowed it to NEW)
    assert state is State.READY


def test_a_wrong_typed_notification_is_not_sent() -> None:
    pair = ready()
    bad = s.SessionNotification(
        session_id="s1",
        update=s.AgentMessageChunk(content=s.TextContent(text="x", annotations=[1])),  # type: ignore[arg-type]
    )
    with pytest.raises(EncodeError) as caught:
        pair.agent.send_notification(m.SESSION_UPDATE, bad)
    assert caught.value.path == ("update", "content", "annotations")
    good = s.SessionNotification(
        session_id="s1", update=s.AgentMessageChunk(content=s.TextContent(text="x"))
    )
    [event] = pair.deliver_to_client(pair.agent.send_notification(m.SESSION_UPDATE, good))
    assert getattr(event, "params", None) == good


def _prompt_received(pair: ConnectionPair) -> Any:
    request_id, data = pair.client.send_request(m.SESSION_PROMPT, GOOD_PROMPT)
    [received] = pair.deliver_to_agent(data)
    assert isinstance(received, RequestReceived)
    return request_id


def test_a_wrong_typed_result_leaves_the_request_unanswered() -> None:
    pair = ready()
    request_id = _prompt_received(pair)
    with pytest.raises(EncodeError) as caught:
        pair.agent.send_response(request_id, s.PromptResponse(stop_reason="done"))  # type: ignore[arg-type]
    assert caught.value.path == ("stopReason",)
    frame = pair.agent.send_response(request_id, s.PromptResponse(stop_reason="end_turn"))
    [response] = pair.deliver_to_client(frame)
    assert isinstance(response, ResponseReceived)


def test_a_handler_that_returns_a_wrong_typed_result_is_answered_with_an_internal_error() -> None:
    pair = ready()
    request_id = _prompt_received(pair)
    frame = pair.agent.answer(request_id, s.PromptResponse(stop_reason=None))  # type: ignore[arg-type]
    assert orjson.loads(frame)["error"]["code"] == -32603
    pair.deliver_to_client(frame)
    second = _prompt_received(pair)  # the connection goes on
    assert second == request_id + 1
