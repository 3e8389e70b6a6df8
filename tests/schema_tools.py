"""Validate JSON against a `$def` of the pinned schema (the oracle for our output)."""

from __future__ import annotations

import functools
import json
from typing import Any

import jsonschema

from acp_sdk import schema
from tests.spec_examples import SCHEMA_FILE


@functools.cache
def raw_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@functools.cache
def validator(def_name: str) -> Any:
    root = raw_schema()
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{def_name}", "$defs": root["$defs"]})


def def_name_of(type_: Any) -> str:
    """The `$defs` name a model class or union alias was generated from."""
    for name in schema.__all__:
        if getattr(schema, name) is type_:
            return name
    raise LookupError(f"{type_!r} is not a schema model")


def schema_errors(value: Any, def_name: str) -> list[str]:
    return [error.message for error in validator(def_name).iter_errors(value)]
