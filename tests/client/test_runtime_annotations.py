"""Runtime annotation introspection of the public facades, with the documented namespace.

The facades import the models they name only for type checkers (importing a client builds
no model class), so `typing.get_type_hints` and `inspect.signature(..., eval_str=True)`
need the models as `localns` (docs/typing.md): `vars(acp_sdk.schema)`. This pins that the
recipe resolves every public method listed, as tools such as beartype or documentation
generators would call it.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest

import acp_sdk.schema
from acp_sdk import AgentContext, AsyncClient, Client
from acp_sdk.client._aio import AsyncSession, AsyncTurn
from acp_sdk.client._sync import Session, Turn

pytestmark = pytest.mark.timeout(60)

PUBLIC: list[tuple[Any, str]] = [
    (Client, "new_session"),
    (Client, "prompt"),
    (Client, "authenticate"),
    (AsyncClient, "new_session"),
    (AsyncClient, "prompt"),
    (Session, "prompt"),
    (AsyncSession, "prompt"),
    (Turn, "wait"),
    (Turn, "__iter__"),
    (AsyncTurn, "__anext__"),
    (AgentContext, "session_update"),
    (AgentContext, "request_permission"),
]


@pytest.mark.parametrize(("cls", "name"), PUBLIC, ids=[f"{c.__name__}.{n}" for c, n in PUBLIC])
def test_public_method_annotations_resolve(cls: Any, name: str) -> None:
    method = getattr(cls, name)
    models = vars(acp_sdk.schema)
    hints = typing.get_type_hints(method, localns=models)
    assert "return" in hints
    signature = inspect.signature(method, eval_str=True, locals=models)
    assert all(not isinstance(p.annotation, str) for p in signature.parameters.values())
