"""Every JSON example in the prose spec decodes and re-encodes to equal JSON."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

import acp_sdk
from tests.schema_tools import def_name_of, schema_errors
from tests.spec_examples import (
    EXTENSION,
    REPO_ROOT,
    SCHEMA_FILE,
    SPEC_DOCS,
    SPEC_DOCS_ROOT,
    Example,
    abbreviated,
    examples,
)

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


# ------------------------------------------------------------------ a checkout tests itself


def test_vendored_docs_match_their_pins() -> None:
    pinned = json.loads((SPEC_DOCS_ROOT / "PINNED.json").read_text(encoding="utf-8"))
    on_disk = {
        f"v1/{doc.name}": hashlib.sha256(doc.read_bytes()).hexdigest()
        for doc in sorted(SPEC_DOCS.glob("*.mdx"))
    }
    assert on_disk == pinned["files"]
    # The newest prose published is v1.21.0's; the pinned schema is later (its PINNED.json
    # says which). Every example above is checked against the pinned schema, so a schema
    # change that makes one invalid shows there.
    assert pinned["version"] == "1.21.0"
    schema_pin = json.loads((SCHEMA_FILE.parents[1] / "PINNED.json").read_text(encoding="utf-8"))
    assert "after v1.25.0" in schema_pin["name"]
    for note in ("LICENSE", "NOTICE"):
        assert (SPEC_DOCS_ROOT / note).is_file()


def test_spec_paths_are_inside_the_repository() -> None:
    for path in (SPEC_DOCS, SCHEMA_FILE):
        assert path.resolve().is_relative_to(REPO_ROOT)


# The patterns are spelled so that this file does not match them itself.
_OUTSIDE = re.compile(r"\.\./shared|/wor[k]/|acp[-]spec|[\"']shared[\"']")
_PARENTS = re.compile(r"__file__\)(?:\.resolve\(\))?\.parents\[(\d+)\]")
_PARENT_CHAIN = re.compile(r"__file__\)(?:\.resolve\(\))?((?:\.parent\b)+)")
# Where the source of vendored files is recorded, by design.
VENDORING_NOTES = {
    "acp_sdk/_codegen/schema/NOTICE",
    "acp_sdk/_codegen/schema/PINNED.json",
    "tests/spec_docs/NOTICE",
    "tests/spec_docs/PINNED.json",
}


def _text_files() -> list[Path]:
    out = []
    for top in ("acp_sdk", "tests"):
        for path in sorted((REPO_ROOT / top).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            try:
                path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            out.append(path)
    return out


def _outside_references(path: Path) -> list[str]:
    """What in `path` points outside the repository: the shared spec folder by name, or a
    `Path(__file__)` climbing above the repository root."""
    relative = path.relative_to(REPO_ROOT)
    if relative.as_posix() in VENDORING_NOTES:
        return []
    text = path.read_text(encoding="utf-8")
    found = [m.group(0) for m in _OUTSIDE.finditer(text)]
    depth = len(relative.parts)  # parents[depth - 1] is the repository root
    found += [m.group(0) for m in _PARENTS.finditer(text) if int(m.group(1)) >= depth]
    found += [
        m.group(0) for m in _PARENT_CHAIN.finditer(text) if m.group(1).count(".parent") > depth
    ]
    return found


def test_no_file_reads_outside_the_repository() -> None:
    files = _text_files()
    assert len(files) > 50
    assert any(p.suffix == ".mdx" for p in files)
    offenders = {
        str(p.relative_to(REPO_ROOT)): refs for p in files if (refs := _outside_references(p))
    }
    assert not offenders, f"paths outside the repository: {offenders}"


# Written with upper-case placeholders (SHARED, PARENTS), replaced before use, so that this
# table does not trip the scan of this very file.
@pytest.mark.parametrize(
    ("relative", "text", "flagged"),
    [
        ("tests/x.py", 'D = Path(__file__).resolve().PARENTS[2] / "SHARED"', True),
        ("tests/protocol/x.py", "R = Path(__file__).resolve().PARENTS[2]", False),
        ("tests/protocol/x.py", "R = Path(__file__).resolve().PARENTS[3]", True),
        ("tests/x.py", "R = Path(__file__).parent.parent", False),
        ("tests/x.py", "R = Path(__file__).parent.parent.parent", True),
        ("acp_sdk/x.py", "D = ROOT / '..' / '..' / 'SHARED'", True),
        ("tests/x.py", 'D = "../SHARED/acp-" + "spec/v1"', True),
        ("tests/spec_docs/NOTICE", "copied from acp-" + "spec", False),
    ],
)
def test_outside_reference_detector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, relative: str, text: str, flagged: bool
) -> None:
    import tests.protocol.test_spec_examples as this

    monkeypatch.setattr(this, "REPO_ROOT", tmp_path)
    path = tmp_path / relative
    path.parent.mkdir(parents=True)
    path.write_text(
        text.replace("SHARED", "SHARED".lower()).replace("PARENTS", "PARENTS".lower()), "utf-8"
    )
    assert bool(_outside_references(path)) is flagged
