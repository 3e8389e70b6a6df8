"""Validate JSON against a `$def` of the pinned schema (the oracle for our output)."""

from __future__ import annotations

import functools
import json
from typing import Any

import jsonschema

from acp_sdk import schema
from tests.spec_examples import SCHEMA_FILE


@functools.cache
def raw_schema(unstable: bool = False) -> dict[str, Any]:
    path = SCHEMA_FILE.with_name("schema.unstable.json") if unstable else SCHEMA_FILE
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@functools.cache
def validator(def_name: str, unstable: bool = False) -> Any:
    root = raw_schema(unstable)
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{def_name}", "$defs": root["$defs"]})


def def_name_of(type_: Any) -> str:
    """The `$defs` name a model class or union alias was generated from."""
    from acp_sdk import unstable

    for module in (schema, unstable):
        names: list[str] = list(module.__all__)
        for name in names:
            if getattr(module, name) is type_:
                return name
    raise LookupError(f"{type_!r} is not a schema model")


def schema_errors(value: Any, def_name: str, unstable: bool = False) -> list[str]:
    return [error.message for error in validator(def_name, unstable).iter_errors(value)]
