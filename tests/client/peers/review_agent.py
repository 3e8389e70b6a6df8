"""Peers for test_backpressure_callbacks_and_dying_peers.py.

python review_agent.py sdk-big        an acp_sdk agent: `_review/big` answers a Blob of
                                      `length` bytes; `_review/forever` never answers
python review_agent.py raw-close-stdin   raw: closes its stdin before answering
                                      initialize, then keeps running (stdout open)
python review_agent.py raw-close-stdout  raw: answers initialize, closes its stdout,
                                      keeps running and ignores stdin EOF
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any

import attrs


@attrs.frozen(kw_only=True, order=False)
class Blob:
    text: str
    length: int = 0


def sdk_big() -> None:
    from acp_sdk import Agent, AgentContext, Side, run_agent
    from acp_sdk.methods import TABLE, Method

    big = Method.extension(
        "_review/big",
        handled_by=Side.AGENT,
        params_type=Blob,
        result_type=Blob,
        handler_name="review_big",
    )
    forever = Method.extension(
        "_review/forever",
        handled_by=Side.AGENT,
        params_type=Blob,
        result_type=Blob,
        handler_name="review_forever",
    )

    async def answer_big(params: Blob, ctx: AgentContext) -> Blob:
        return Blob(text="x" * params.length, length=params.length)

    async def never(params: Blob, ctx: AgentContext) -> Blob:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    run_agent(
        Agent(),
        table=TABLE.extend([big, forever]),
        extensions={"review_big": answer_big, "review_forever": never},
    )


def frame(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


def raw(mode: str) -> None:
    stdin = sys.stdin.buffer
    line = stdin.readline()
    request = json.loads(line)
    if mode == "raw-close-stdin":
        stdin.close()
        os.close(0)
    os.write(1, frame({"id": request["id"], "result": {"protocolVersion": 1}}))
    if mode == "raw-close-stdout":
        os.close(1)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    if sys.argv[1] == "sdk-big":
        sdk_big()
    else:
        raw(sys.argv[1])
