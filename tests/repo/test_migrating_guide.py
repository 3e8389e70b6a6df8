"""docs/migrating.md accounts for every public name of agent-client-protocol 0.12.1: each
name of its `__all__` lists is in the guide, and each model class of `acp.schema` keeps its
name in `acp_sdk.schema` or `acp_sdk.unstable`, or the guide says what it became."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pydantic
import pytest

import acp_sdk.schema
import acp_sdk.unstable

GUIDE = (Path(__file__).resolve().parents[2] / "docs" / "migrating.md").read_text("utf-8")
MENTIONED = set(re.findall(r"`([A-Za-z_]\w*)", GUIDE))
MODULES = ["acp", "acp.helpers", "acp.contrib", "acp.agent", "acp.client", "acp.http", "acp.ws"]


def test_the_incumbent_is_the_version_the_guide_maps() -> None:
    from importlib.metadata import version

    assert version("agent-client-protocol") == "0.12.1"


@pytest.mark.parametrize("module", MODULES)
def test_every_exported_name_is_mapped(module: str) -> None:
    names = list(importlib.import_module(module).__all__)
    if module == "acp":
        names += ["AgentSideConnection", "ClientSideConnection"]  # deprecated, still public
    assert [name for name in names if not _mapped(name)] == []


def _mapped(name: str) -> bool:
    """Named in the guide, or a model that keeps its name (the guide's stated rule)."""
    kept = hasattr(acp_sdk.schema, name) or hasattr(acp_sdk.unstable, name)
    return name in MENTIONED or (name[:1].isupper() and kept)


def test_every_schema_model_keeps_its_name_or_is_mapped() -> None:
    import acp.schema

    models = [
        name
        for name, value in vars(acp.schema).items()
        if inspect.isclass(value)
        and issubclass(value, pydantic.BaseModel)
        and value.__module__ == "acp.schema"
        and not name.startswith(("_", "RootModel"))
        and name != "BaseModel"
    ]
    assert len(models) > 200
    assert [name for name in models if not _mapped(name)] == []
