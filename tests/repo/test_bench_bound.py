"""The codec benchmark's typed bound builds exactly the objects `decode` returns.

The bound is only a lower bound for `decode` if it constructs the same objects (same
classes, same slots, same values); this guards the benchmark's claim, not a timing.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import acp_sdk  # noqa: E402

# bench/ is scripts, not a package checked by mypy: load it as untyped modules.
MESSAGES: dict[str, Any] = importlib.import_module("messages").MESSAGES
_bound: Any = importlib.import_module("typed_bound")
decode_bound, encode_bound = _bound.decode_bound, _bound.encode_bound


def _objects(value: Any) -> list[tuple[type, str, Any]]:
    """Every (class, slot, value) of a model tree, in a stable order."""
    found: list[tuple[type, str, Any]] = []
    if attrs.has(type(value)):
        slots = [field.name for field in attrs.fields(type(value))]
        if hasattr(value, "_explicit"):  # a plain slot beneath the attrs fields
            slots.append("_explicit")
        for slot in slots:
            child = getattr(value, slot)
            found.append((type(value), slot, child))
            found.extend(_objects(child))
    elif isinstance(value, (list, tuple)):
        for item in value:
            found.extend(_objects(item))
    return found


@pytest.mark.parametrize("label", list(MESSAGES))
def test_decode_bound_builds_the_decoded_objects(label: str) -> None:
    wire, type_, _ = MESSAGES[label]
    model = acp_sdk.decode(wire, type_)
    rebuilt = decode_bound(wire, model)()
    assert rebuilt is not model
    assert _objects(rebuilt) == _objects(model)  # every class, slot and value, _explicit too


@pytest.mark.parametrize("label", list(MESSAGES))
def test_encode_bound_reads_every_slot(label: str) -> None:
    wire, type_, _ = MESSAGES[label]
    model = acp_sdk.decode(wire, type_)
    produced = encode_bound(model)()
    assert isinstance(produced, bytes)
    for _, slot, _ in _objects(model):
        if slot not in ("extra", "_explicit"):
            assert f'"{slot}"'.encode() in produced
