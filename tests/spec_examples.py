"""The JSON examples of the prose spec (vendored: `tests/spec_docs/v1/*.mdx`), typed.

Each example becomes (where, parsed JSON, the model type its payload decodes as). A
response is typed by the request with the same id in the same document; a fragment
(a bare content block, tool call content, MCP server, ...) by the shape the document
shows it as. Anything this module cannot place raises, so no example is dropped quietly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_sdk import schema
from acp_sdk.methods import TABLE, Kind

REPO_ROOT = Path(__file__).resolve().parents[1]
# Every path the tests read lies inside the repository (a fresh checkout tests itself):
# the prose docs are vendored next to this module, with their licence and digests.
SPEC_DOCS_ROOT = REPO_ROOT / "tests" / "spec_docs"
SPEC_DOCS = SPEC_DOCS_ROOT / "v1"
SCHEMA_FILE = REPO_ROOT / "acp_sdk/_codegen/schema/v1/schema.json"
_BLOCK = re.compile(r"```json[^\n]*\n(.*?)```", re.S)
_JSONC_COMMENT = re.compile(r"^\s*//.*$", re.M)


@dataclass(frozen=True)
class Example:
    where: str
    payload: Any  # the params/result/fragment that decodes as `type_`
    type_: Any


def _row_for(method: str, kind: Kind) -> Any:
    rows = [r for r in TABLE.by_wire(method) if r.kind is kind]
    if not rows:
        raise LookupError(f"no row for {method}")
    return rows[0]


def _fragment_type(obj: dict[str, Any]) -> tuple[Any, Any]:
    if "clientCapabilities" in obj:
        return obj["clientCapabilities"], schema.ClientCapabilities
    kind = obj.get("type")
    if kind in {"text", "image", "audio", "resource", "resource_link"}:
        return obj, schema.ContentBlock
    if kind in {"content", "diff", "terminal"} and "id" not in obj:
        return obj, schema.ToolCallContent
    if "path" in obj and "line" in obj:
        return obj, schema.ToolCallLocation
    if kind in {"http", "sse"} or "command" in obj:
        return obj, schema.McpServer
    if "currentValue" in obj:
        return obj, schema.SessionConfigOption
    if "id" in obj and "name" in obj:
        return obj, schema.AuthMethod
    raise LookupError(f"cannot place fragment with keys {sorted(obj)}")


EXTENSION = object()
"""The type of an extension method's payload: vendor JSON, not an ACP model."""


def _response_method(blocks: list[Any], index: int) -> str:
    """The method of the request this response answers: the nearest earlier request
    with the same id, else the nearest later one (some documents show the answer first),
    else what the result's shape says (initialize and session/new shown alone)."""
    response = blocks[index]
    earlier = [b for b in blocks[:index] if _is_request(b) and b["id"] == response["id"]]
    later = [b for b in blocks[index:] if _is_request(b) and b["id"] == response["id"]]
    if earlier or later:
        return str((earlier[-1] if earlier else later[0])["method"])
    result = response["result"]
    if isinstance(result, dict) and "protocolVersion" in result:
        return "initialize"
    if isinstance(result, dict) and "sessionId" in result:
        return "session/new"
    raise LookupError(f"no request for response id {response['id']!r}")


def _is_request(block: Any) -> bool:
    return isinstance(block, dict) and "method" in block and "id" in block


def abbreviated() -> list[str]:
    """Examples the docs shorten with `[...]`: not JSON, so not decodable as shown."""
    return [
        f"{doc.name}: {m.group(1)[:40]!r}"
        for doc in sorted(SPEC_DOCS.glob("*.mdx"))
        for m in _BLOCK.finditer(doc.read_text(encoding="utf-8"))
        if "[...]" in m.group(1)
    ]


def examples() -> Iterator[Example]:
    for doc in sorted(SPEC_DOCS.glob("*.mdx")):
        blocks = [
            json.loads(_JSONC_COMMENT.sub("", m.group(1)))
            for m in _BLOCK.finditer(doc.read_text(encoding="utf-8"))
            if "[...]" not in m.group(1)
        ]
        for number, obj in enumerate(blocks):
            where = f"{doc.name}#{number}"
            if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
                payload, type_ = _fragment_type(obj)
                yield Example(where, payload, type_)
                continue
            if "error" in obj:
                yield Example(where, obj["error"], schema.Error)
                continue
            method = obj["method"] if "method" in obj else _response_method(blocks, number)
            if method.startswith("_"):
                yield Example(where, obj.get("params", obj.get("result")), EXTENSION)
            elif "method" in obj:
                kind = Kind.REQUEST if "id" in obj else Kind.NOTIFICATION
                yield Example(where, obj.get("params", {}), _row_for(method, kind).params_type)
            else:
                yield Example(where, obj["result"], _row_for(method, Kind.REQUEST).result_type)
