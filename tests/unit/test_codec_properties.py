"""Property tests: schema-valid messages round-trip exactly; junk only raises DecodeError."""

from __future__ import annotations

import contextlib
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acp_sdk
import acp_sdk.schema
from acp_sdk import unstable
from acp_sdk.methods import TABLE, Stability
from tests.schema_strategies import valid
from tests.schema_tools import def_name_of

MESSAGE_TYPES = sorted(
    {row.params_type for row in TABLE} | {row.result_type for row in TABLE if row.result_type},
    key=def_name_of,
)


@pytest.mark.parametrize("type_", MESSAGE_TYPES, ids=def_name_of)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_schema_valid_messages_round_trip(type_: Any, data: st.DataObject) -> None:
    value = data.draw(valid(def_name_of(type_)))
    decoded = acp_sdk.decode(value, type_)
    assert orjson.loads(acp_sdk.encode(decoded)) == value


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)

# Keys of real messages, so junk reaches the field decoders and not only the first check.
KEYS = st.sampled_from(
    ["sessionId", "prompt", "type", "text", "update", "sessionUpdate", "content", "_meta", "cwd"]
)
MESSAGE_LIKE = st.dictionaries(KEYS, JSON, max_size=6)


@pytest.mark.parametrize("type_", MESSAGE_TYPES, ids=def_name_of)
@settings(max_examples=60, deadline=None)
@given(value=JSON | MESSAGE_LIKE)
def test_junk_never_raises_anything_but_decode_error(type_: Any, value: Any) -> None:
    with contextlib.suppress(acp_sdk.DecodeError):
        acp_sdk.decode(value, type_)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=64))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(acp_sdk.DecodeError):
        acp_sdk.decode(data, acp_sdk.schema.SessionNotification)


UNSTABLE_TYPES = sorted(
    {row.params_type for row in unstable.TABLE if row.stability is Stability.UNSTABLE}
    | {
        row.result_type
        for row in unstable.TABLE
        if row.stability is Stability.UNSTABLE
        and row.result_type is not None
        and row.result_type is not Any
    }
    | {unstable.SessionNotification, unstable.InitializeRequest, unstable.InitializeResponse},
    key=def_name_of,
)


@pytest.mark.parametrize("type_", UNSTABLE_TYPES, ids=def_name_of)
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_unstable_messages_round_trip(type_: Any, data: st.DataObject) -> None:
    value = data.draw(valid(def_name_of(type_), unstable=True))
    decoded = acp_sdk.decode(value, type_)
    assert orjson.loads(acp_sdk.encode(decoded)) == value
