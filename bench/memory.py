"""Bytes held per decoded notification: acp_sdk vs plain orjson dicts vs the incumbent.

    python bench/memory.py

`COUNT` distinct `session/update` params (the streamed text chunk, `chunk {i} `, and the
tool-call update with a 2 KB diff) are decoded and kept in a list; `tracemalloc` reports
the memory still allocated afterwards (the list's own slots included, the input bytes
not), divided by `COUNT`. Deterministic to a few bytes, so one round is enough.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from messages import MESSAGES

import acp_sdk
from acp_sdk.schema import SessionNotification

incumbent: Any
try:
    import acp.schema as incumbent
except ImportError:  # pragma: no cover - the bench extra is optional
    incumbent = None

COUNT = 5_000


def wires(label: str) -> list[bytes]:
    """COUNT distinct wire forms of MESSAGES[label] (text fields numbered)."""
    base = orjson.loads(MESSAGES[label][0])
    out = []
    for index in range(COUNT):
        update = base["update"]
        if "content" in update and isinstance(update["content"], dict):
            update["content"]["text"] = f"chunk {index} "
        else:
            update["toolCallId"] = f"call_{index:06d}"
            update["content"][0]["newText"] = f"{index}\n" + update["content"][0]["newText"][8:]
        out.append(orjson.dumps(base))
    return out


def held(decode: Callable[[bytes], Any], inputs: list[bytes]) -> float:
    """Bytes still allocated per decoded message while the results are alive."""
    decode(inputs[0])  # first-use caches are not part of a message
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [decode(wire) for wire in inputs]
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(kept) == len(inputs)
    del kept
    return (after - before) / len(inputs)


def decoders() -> dict[str, Callable[[bytes], Any]]:
    cases: dict[str, Callable[[bytes], Any]] = {
        "orjson": orjson.loads,
        "acp_sdk": lambda wire: acp_sdk.decode(wire, SessionNotification),
    }
    if incumbent is not None:
        cases["incumbent"] = incumbent.SessionNotification.model_validate_json
    return cases


MEASURED = ("text chunk", "tool_call_update 2KB diff")


def run() -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    for label in MEASURED:
        inputs = wires(label)
        results[label] = {name: held(decode, inputs) for name, decode in decoders().items()}
    return results


def main() -> None:
    print(f"bytes held per decoded session/update notification ({COUNT:,} kept alive)")
    for label, row in run().items():
        floor = row["orjson"]
        cells = "  ".join(
            f"{name} {value:7,.0f} B ({value / floor:.1f}x)" for name, value in row.items()
        )
        print(f"  {label:28} {cells}")


if __name__ == "__main__":
    main()
