"""Every JSON example in the prose spec decodes and re-encodes to equal JSON."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import acp_sdk
from tests.schema_tools import def_name_of, schema_errors
from tests.spec_examples import EXTENSION, Example, abbreviated, examples

ALL = list(examples())

# Examples in the docs that the schema itself rejects, and what the spec's own schema says
# about them. They are checked apart: they must decode exactly as leniently as the schema
# annotations allow (or fail with a DecodeError), never round-trip silently "fixed".
KNOWN_INVALID = {
    # `"modeId"` where CurrentModeUpdate requires `currentModeId`.
    "session-modes.mdx#2": "raises",
    # A bare ContentBlock inside ToolCallUpdate.content (items are ToolCallContent);
    # the list is `x-deserialize-skip-invalid-items`, so the item is dropped.
    "session-modes.mdx#3": "decodes",
}


def _valid(example: Example) -> bool:
    return not schema_errors(example.payload, def_name_of(example.type_))


def test_examples_were_found() -> None:
    # 94 decodable blocks across the docs, plus two shortened with `[...]`.
    assert len(ALL) == 94
    assert len(abbreviated()) == 2
    assert sum(e.type_ is EXTENSION for e in ALL) == 3  # extensibility.mdx: _zed.dev/...


MODEL_EXAMPLES = [e for e in ALL if e.type_ is not EXTENSION and e.payload is not None]


@pytest.mark.parametrize("example", MODEL_EXAMPLES, ids=lambda e: e.where)
def test_example_round_trips(example: Example) -> None:
    if example.where in KNOWN_INVALID:
        assert not _valid(example), "a known-invalid example became valid: update the table"
        if KNOWN_INVALID[example.where] == "raises":
            with pytest.raises(acp_sdk.DecodeError):
                acp_sdk.decode(example.payload, example.type_)
        else:
            decoded = acp_sdk.decode(example.payload, example.type_)
            assert not schema_errors(
                orjson.loads(acp_sdk.encode(decoded)), def_name_of(example.type_)
            )
        return
    errors = schema_errors(example.payload, def_name_of(example.type_))
    assert not errors, f"{example.where} is schema-invalid: {errors}"
    decoded = acp_sdk.decode(example.payload, example.type_)
    again: Any = orjson.loads(acp_sdk.encode(decoded))
    assert again == example.payload


NULL_RESULTS = [e for e in ALL if e.payload is None]


@pytest.mark.parametrize("example", NULL_RESULTS, ids=lambda e: e.where)
def test_null_results_are_for_empty_responses(example: Example) -> None:
    # The docs show `"result": null` for responses whose fields are all optional; the
    # connection reads that as the empty object. Here: such a type decodes from `{}`.
    assert acp_sdk.encode(acp_sdk.decode({}, example.type_)) == b"{}"


def test_null_results_exist() -> None:
    assert [e.where for e in NULL_RESULTS] == ["file-system.mdx#4", "session-setup.mdx#6"]
