"""Every model follows the house rules for attrs; the error hierarchy is whole.

The public surface itself is pinned by tests/repo/test_public_surface.py."""

from __future__ import annotations

import inspect
from typing import Any

import attrs
import pytest

import acp_sdk
from acp_sdk import schema

MODEL_CLASSES = [
    getattr(schema, name)
    for name in schema.__all__
    if inspect.isclass(getattr(schema, name)) and attrs.has(getattr(schema, name))
]


def test_models_are_counted() -> None:
    assert len(MODEL_CLASSES) > 130


@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda c: c.__name__)
def test_model_classes_are_frozen_slotted_keyword_only_unordered(cls: type) -> None:
    assert "__slots__" in cls.__dict__
    params = cls.__attrs_attrs__  # type: ignore[attr-defined]
    assert all(a.kw_only for a in params)
    instance_fields = [a for a in params if a.init]
    assert all(a.name == "raw" or "wire" in a.metadata for a in instance_fields)
    assert "__lt__" not in cls.__dict__  # order=False
    any_cls: Any = cls
    assert any_cls.__setattr__ is not object.__setattr__  # frozen


def test_fields_are_snake_case_with_wire_names() -> None:
    fields = {f.name: f.metadata["wire"] for f in attrs.fields(schema.PromptRequest)}
    assert fields["session_id"] == "sessionId"
    assert fields["meta"] == "_meta"


def test_error_hierarchy() -> None:
    assert issubclass(acp_sdk.CapabilityNotNegotiated, acp_sdk.LocalProtocolError)
    assert issubclass(acp_sdk.LocalProtocolError, acp_sdk.ProtocolError)
    assert issubclass(acp_sdk.RemoteProtocolError, acp_sdk.ProtocolError)
    assert issubclass(acp_sdk.UnsupportedProtocolVersion, acp_sdk.RemoteProtocolError)
    for name in acp_sdk.__all__:
        value = getattr(acp_sdk, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, acp_sdk.ACPError), name


def test_unknown_attributes_still_fail() -> None:
    with pytest.raises(AttributeError):
        acp_sdk.Clinet  # type: ignore[attr-defined]  # noqa: B018
