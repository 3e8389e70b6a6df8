"""The floor's agent: raw asyncio pipes and orjson, no SDK, no typing, no checks.

Answers `initialize`, `session/new` and `authenticate` at once; a `session/prompt` whose
first block is `stream N` writes N `session/update` frames (each its own `orjson.dumps`
of a plain dict, the same bytes our agent sends) as fast as it can, joined into batches
of `BATCH` frames per write, then the response. What a Python agent pays at least.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import orjson

BATCH = 256
NEWLINE = orjson.OPT_APPEND_NEWLINE


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout.buffer
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    dumps = orjson.dumps
    while line := await reader.readline():
        message = orjson.loads(line)
        method = message.get("method")
        result: Any = {}
        if method == "initialize":
            result = {
                "protocolVersion": 1,
                "agentCapabilities": {},
                "authMethods": [{"id": "bench-login", "name": "Bench login"}],
            }
        elif method == "session/new":
            result = {"sessionId": "bench-1"}
        elif method == "session/prompt":
            params = message["params"]
            text = params["prompt"][0].get("text", "")
            if text.startswith("stream "):
                session_id = params["sessionId"]
                frames: list[bytes] = []
                for index in range(int(text.split()[1])):
                    frames.append(
                        dumps(
                            {
                                "jsonrpc": "2.0",
                                "method": "session/update",
                                "params": {
                                    "sessionId": session_id,
                                    "update": {
                                        "sessionUpdate": "agent_message_chunk",
                                        "content": {"type": "text", "text": f"chunk {index} "},
                                    },
                                },
                            },
                            option=NEWLINE,
                        )
                    )
                    if len(frames) == BATCH:
                        writer.write(b"".join(frames))
                        frames.clear()
                        await writer.drain()
                writer.write(b"".join(frames))
            result = {"stopReason": "end_turn"}
        if "id" not in message:
            continue
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        writer.write(dumps(reply, option=NEWLINE))
        await writer.drain()
    transport.close()


if __name__ == "__main__":
    asyncio.run(main())
