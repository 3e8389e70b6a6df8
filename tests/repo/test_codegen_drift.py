"""The generated code is exactly what the generator makes from the pinned schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from acp_sdk._codegen import __main__ as codegen
from acp_sdk._codegen import ir

GENERATED = Path(codegen.GENERATED_DIR)


def test_generated_files_match_regeneration(tmp_path: Path) -> None:
    assert codegen.main(["--out", str(tmp_path)]) == 0
    for produced in sorted(tmp_path.iterdir()):
        committed = GENERATED / produced.name
        assert committed.read_text(encoding="utf-8") == produced.read_text(encoding="utf-8"), (
            f"{produced.name} is stale: run `python -m acp_sdk._codegen`"
        )
    assert {p.name for p in GENERATED.glob("*.py")} == {p.name for p in tmp_path.iterdir()}


def test_check_mode_detects_a_hand_edit(tmp_path: Path) -> None:
    for path in GENERATED.glob("*.py"):
        shutil.copy(path, tmp_path / path.name)
    assert codegen.main(["--check", "--out", str(tmp_path)]) == 0
    with (tmp_path / "models.py").open("a", encoding="utf-8") as handle:
        handle.write("# edited by hand\n")
    assert codegen.main(["--check", "--out", str(tmp_path)]) == 1


def test_pins_are_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(codegen.SCHEMA_DIR, tmp_path / "schema")
    schema_file = tmp_path / "schema" / "v1" / "schema.json"
    schema_file.write_bytes(schema_file.read_bytes() + b"\n")
    monkeypatch.setattr(codegen, "SCHEMA_DIR", tmp_path / "schema")
    with pytest.raises(codegen.PinError, match=r"schema\.json"):
        codegen.load_pinned()


def test_every_stable_def_is_accounted_for() -> None:
    schema = json.loads((codegen.SCHEMA_DIR / "v1" / "schema.json").read_text(encoding="utf-8"))
    model = ir.parse(schema)
    defs = set(schema["$defs"])
    assert len(defs) == 178
    generated_from = set(model.source.values())
    assert generated_from | set(model.envelopes) == defs
    # The stable schema has the six Agent/Client envelopes; the proxy ones are unstable.
    assert set(model.envelopes) == {n for n in ir.ENVELOPE_DEFS if not n.startswith("Proxy")}


def test_every_unstable_def_is_accounted_for() -> None:
    schema = json.loads(
        (codegen.SCHEMA_DIR / "v1" / "schema.unstable.json").read_text(encoding="utf-8")
    )
    model = ir.parse(schema)
    assert set(model.source.values()) | set(model.envelopes) == set(schema["$defs"])
    assert set(model.envelopes) == set(ir.ENVELOPE_DEFS)


def test_unknown_constructs_fail_loudly() -> None:
    schema = {"$defs": {"Odd": {"type": "object", "properties": {"x": {"type": "tuple"}}}}}
    with pytest.raises(ir.SchemaError, match=r"Odd\.x"):
        ir.parse(schema)


def test_unstable_types_stay_out_of_the_stable_models() -> None:
    from acp_sdk import schema, unstable

    assert not hasattr(schema, "ForkSessionRequest")
    assert hasattr(unstable, "ForkSessionRequest")
    stable_cls: object = schema.NewSessionRequest
    assert unstable.NewSessionRequest is not stable_cls
