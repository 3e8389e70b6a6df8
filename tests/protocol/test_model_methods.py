"""The generated models' own dunder methods behave exactly as attrs' generated ones would.

`_codegen/emit_model_methods.py` writes `__init__`, `__eq__`, `__ne__`, `__hash__` and
`__repr__` into each class body (so they are compiled into the `.pyc`, not at import).
These tests hold every generated class to the attrs semantics, read from `attrs.fields`.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import attrs
import pytest

from acp_sdk.protocol._generated import models, unstable_models

CLASSES = sorted(
    {
        obj
        for module in (models, unstable_models)
        for obj in vars(module).values()
        if isinstance(obj, type) and attrs.has(obj) and obj.__module__ == module.__name__
    },
    key=lambda c: (c.__module__, c.__name__),
)


class Marker:
    """A distinct, hashable stand-in value for a field."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _init_fields(cls: type) -> list[attrs.Attribute[Any]]:
    return [a for a in attrs.fields(cls) if a.init]


def _alias(field: attrs.Attribute[Any]) -> str:
    assert field.alias is not None
    return field.alias


def _build(cls: type, **values: Any) -> Any:
    return cls(**values)


def test_there_are_classes() -> None:
    assert len(CLASSES) > 200


@pytest.mark.parametrize(
    "cls", CLASSES, ids=lambda c: f"{c.__module__.rsplit('.', 1)[1]}.{c.__name__}"
)
def test_methods_match_attrs(cls: type) -> None:
    # The methods are the generated module's own, compiled into its .pyc.
    for name in ("__init__", "__eq__", "__ne__", "__hash__"):
        code = getattr(cls, name).__code__
        assert code.co_filename == inspect.getsourcefile(cls), name
    fields = attrs.fields(cls)

    # __init__: keyword-only, attrs order, attrs defaults (NOTHING for a factory).
    params = list(inspect.signature(vars(cls)["__init__"]).parameters.values())[1:]
    assert [p.name for p in params] == [_alias(a) for a in _init_fields(cls)]
    for param, field in zip(params, _init_fields(cls), strict=True):
        assert param.kind is inspect.Parameter.KEYWORD_ONLY
        if field.default is attrs.NOTHING:
            assert param.default is inspect.Parameter.empty
        elif isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            assert param.default is attrs.NOTHING
        else:
            assert param.default is field.default

    required = {_alias(a): Marker(a.name) for a in _init_fields(cls) if a.default is attrs.NOTHING}
    plain = _build(cls, **required)
    for field in fields:
        value = getattr(plain, field.name)
        if _alias(field) in required:
            assert value is required[_alias(field)]
        elif isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            assert value == field.default.factory()
            assert type(value) is type(field.default.factory())
        else:
            assert value is field.default

    given = {_alias(a): Marker(a.name) for a in _init_fields(cls)}
    full = _build(cls, **given)
    for field in _init_fields(cls):
        assert getattr(full, field.name) is given[_alias(field)]
    with pytest.raises(TypeError):
        _build(cls, **required, not_a_field=1)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        full.extra = {}

    # __eq__ / __ne__: same class and every eq field; other classes are NotImplemented.
    twin = _build(cls, **given)
    assert full == twin
    assert not full.__ne__(twin)
    assert full.__eq__(object()) is NotImplemented
    assert full.__ne__(object()) is NotImplemented
    for field in _init_fields(cls):
        other = _build(cls, **{**given, _alias(field): Marker("other")})
        assert (full == other) is (not field.eq)
        assert (full != other) is field.eq
        if field.eq and field.hash is not False:
            assert hash(full) != hash(other) or full != other
        if field.hash is False or not field.eq:
            assert hash(full) == hash(other)
    assert hash(full) == hash(twin)

    # __repr__: attrs' format, repr=True fields in order.
    shown = ", ".join(f"{a.name}={getattr(full, a.name)!r}" for a in fields if a.repr)
    assert repr(full) == f"{cls.__name__}({shown})"

    # attrs' helpers keep working.
    assert attrs.evolve(full) == full
    assert attrs.asdict(plain, recurse=False).keys() == {a.name for a in fields}


def test_explicit_takes_no_part_in_equality_and_hash() -> None:
    a = models.TextContent(text="x")
    b = models.TextContent(text="x")
    object.__setattr__(b, "_explicit", frozenset({"_meta"}))
    assert a == b
    assert hash(a) == hash(b)


def test_recursive_repr_is_guarded() -> None:
    entries: list[Any] = []
    plan = models.Plan(entries=entries)
    entries.append(plan)
    assert repr(plan) == "Plan(entries=[...], meta=None)"


def test_copy() -> None:
    value = models.AgentMessageChunk(content=models.TextContent(text="hi"), extra={"x": 1})
    assert copy.copy(value) == value
