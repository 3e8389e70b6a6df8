"""Property tests: schema-valid messages round-trip exactly; junk only raises DecodeError."""

from __future__ import annotations

import contextlib
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
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


# --------------------------------------------------------------- x-deserialize-default-on-error

# One value of every JSON type, and integers out of the narrower formats' ranges (2**64 - 1
# is the largest integer JSON parsing yields; beyond it orjson reads a float): for any field
# at least one is wrong-typed, so the field falls back to its default.
WRONG_VALUES: list[Any] = [None, True, 7, -1, 2**64 - 1, 1.5, "x", [1], {"k": 1}]


def _default_on_error_classes(unstable_schema: bool) -> list[tuple[str, str, tuple[str, ...]]]:
    """(class name, `$defs` name to draw from, wire names of its default-on-error fields),
    read from the generator's own parse of the pinned schema, so no field is missed."""
    from acp_sdk._codegen import ir
    from acp_sdk._codegen.common import all_fields
    from tests.schema_tools import raw_schema

    model = ir.parse(raw_schema(unstable_schema))
    out = []
    for definition in model.defs.values():
        if not isinstance(definition, ir.ClassDef):
            continue
        wires = tuple(f.wire for f in all_fields(model, definition) if f.default_on_error)
        if wires:
            source = model.source.get(definition.name, definition.name)
            out.append((definition.name, source, wires))
    return sorted(out)


DEFAULT_ON_ERROR_CASES = [
    (flag, name, source, wires)
    for flag in (False, True)
    for name, source, wires in _default_on_error_classes(flag)
]
DEFAULT_ON_ERROR = [
    pytest.param(*case, id=f"{'unstable.' if case[0] else ''}{case[1]}")
    for case in DEFAULT_ON_ERROR_CASES
]


def test_default_on_error_fields_were_found() -> None:
    # Both schemas mark hundreds of fields; a parse that found none would pass vacuously.
    assert sum(len(wires) for *_, wires in DEFAULT_ON_ERROR_CASES) > 600
    assert any(
        name == "AuthMethodTerminal" and "description" in wires
        for _, name, _, wires in DEFAULT_ON_ERROR_CASES
    )
    # Its `env` is default-on-null now (tests/protocol/test_decoder_annotations.py).
    assert not any(
        name == "AuthMethodTerminal" and "env" in wires
        for _, name, _, wires in DEFAULT_ON_ERROR_CASES
    )


@pytest.mark.parametrize(("unstable_schema", "name", "source", "wires"), DEFAULT_ON_ERROR)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_default_on_error_fields_always_re_encode(
    unstable_schema: bool, name: str, source: str, wires: tuple[str, ...], data: st.DataObject
) -> None:
    from acp_sdk.protocol._generated import models, unstable_models

    cls = getattr(unstable_models if unstable_schema else models, name)
    base = data.draw(valid(source, unstable=unstable_schema))
    try:  # a union's draw may be another arm: only this class's own shape is of use
        acp_sdk.decode(base, cls)
    except acp_sdk.DecodeError:
        assume(False)
    for wire in wires:
        for wrong in WRONG_VALUES:
            decoded = acp_sdk.decode({**base, wire: wrong}, cls)  # default-on-error: no raise
            encoded = acp_sdk.encode(decoded)  # a decoded value always re-encodes
            again = acp_sdk.decode(encoded, cls)
            assert again == decoded, (wire, wrong)
            assert acp_sdk.encode(again) == encoded, (wire, wrong)
