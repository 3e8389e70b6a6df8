"""Stateful fuzzing: garbage between real traffic never breaks the connection."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from acp_sdk import methods as m
from acp_sdk import schema as s
from acp_sdk.protocol import RequestReceived, ResponseReceived
from acp_sdk.protocol._state import State
from acp_sdk.testing import ConnectionPair

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
ENVELOPE_KEYS = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"])
ENVELOPE_LIKE = st.dictionaries(
    ENVELOPE_KEYS, JSON | st.sampled_from(["2.0", "session/new", "session/prompt"])
)
GARBAGE = (
    st.binary(max_size=40).filter(lambda b: b"\n" not in b)
    | JSON.map(orjson.dumps)
    | ENVELOPE_LIKE.map(orjson.dumps)
)


class Traffic(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.pair = ConnectionPair()
        self.pair.initialize()
        self.open_requests: list[Any] = []  # received by the agent, not yet answered
        self.calls = 0

    @rule(data=GARBAGE)
    def garbage_to_agent(self, data: bytes) -> None:
        for event in self.pair.deliver_to_agent(data + b"\n"):
            if isinstance(event, RequestReceived):
                self.open_requests.append(event.request_id)

    @rule(data=GARBAGE)
    def garbage_to_client(self, data: bytes) -> None:
        self.pair.deliver_to_client(data + b"\n")

    @rule()
    def real_call(self) -> None:
        _, data = self.pair.client.send_request(
            m.SESSION_NEW, s.NewSessionRequest(cwd="/", mcp_servers=[])
        )
        [event] = [e for e in self.pair.deliver_to_agent(data) if isinstance(e, RequestReceived)]
        self.open_requests.append(event.request_id)
        self.calls += 1

    @precondition(lambda self: self.open_requests)
    @rule()
    def answer(self) -> None:
        rid = self.open_requests.pop(0)
        events = self.pair.deliver_to_client(
            self.pair.agent.send_response(rid, s.NewSessionResponse(session_id="x"))
        )
        assert all(not isinstance(e, ResponseReceived) or e.request_id == rid for e in events)

    @invariant()
    def alive_and_consistent(self) -> None:
        assert self.pair.agent.state is State.READY
        assert self.pair.client.state is State.READY
        assert set(self.pair.agent.inbound_ids) == set(self.open_requests)

    def teardown(self) -> None:
        for rid in list(self.open_requests):
            self.pair.deliver_to_client(
                self.pair.agent.send_response(rid, s.NewSessionResponse(session_id="x"))
            )
        assert self.pair.agent.inbound_ids == ()
        assert self.pair.client.pending_ids == ()


Traffic.TestCase.settings = settings(max_examples=60, stateful_step_count=60, deadline=None)
TestTraffic = Traffic.TestCase
