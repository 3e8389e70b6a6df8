"""The per-frame shortcuts build exactly what the attrs constructors build."""

from __future__ import annotations

import pickle
from typing import Any

import attrs

from acp_sdk.methods import SESSION_UPDATE
from acp_sdk.protocol import _events as events
from acp_sdk.protocol import _jsonrpc as rpc
from acp_sdk.protocol._events import NotificationReceived, ResponseReceived
from acp_sdk.protocol._rows import Kind, Side


def _same(built: object, expected: Any) -> None:
    assert type(built) is type(expected)
    assert built == expected
    assert repr(built) == repr(expected)
    cls: Any = type(expected)
    for field in attrs.fields(cls):
        assert getattr(built, field.name) is getattr(expected, field.name)


def test_classify_results() -> None:
    params = {"a": 1}
    _same(rpc._notification("m", params), rpc.Notification(method="m", params=params))
    _same(rpc._request(7, "m", None), rpc.Request(id=7, method="m", params=None))


def test_connection_events() -> None:
    params = object()
    _same(
        events.notification_received(SESSION_UPDATE, params),
        NotificationReceived(row=SESSION_UPDATE, params=params),
    )
    _same(
        events.response_received("x", SESSION_UPDATE, params),
        ResponseReceived(request_id="x", row=SESSION_UPDATE, result=params),
    )


def test_enum_members_hash_by_identity_and_still_pickle() -> None:
    for member in (*Side, *Kind):
        assert hash(member) == object.__hash__(member)
        assert pickle.loads(pickle.dumps(member)) is member
    assert {Side.AGENT: 1}[Side.AGENT] == 1


def test_params_gated_lists_every_method_whose_params_can_need_a_capability() -> None:
    from types import SimpleNamespace

    from acp_sdk.protocol._capabilities import PARAMS_GATED, required_by_params
    from acp_sdk.protocol._generated.methods import TABLE
    from acp_sdk.schema import ImageContent, McpServerHttp

    everything = SimpleNamespace(
        prompt=[ImageContent(data="", mime_type="image/png")],
        mcp_servers=[McpServerHttp(name="n", url="u", headers=[])],
        additional_directories=["/x"],
        TAG="form",
    )
    wires = {row.wire for row in TABLE}
    needing = {wire for wire in wires if required_by_params(wire, everything)}
    assert needing
    assert needing <= PARAMS_GATED
