"""A client process for the memory-bound test: `Client` or `AsyncClient` (argv[1]) on the
agent command in argv[2:], answering permission requests, until its stdin closes."""

from __future__ import annotations

import asyncio
import sys

from acp_sdk import AsyncClient, Client
from acp_sdk.handlers import AllowOnce


async def run_async(argv: list[str]) -> None:
    async with AsyncClient.spawn(argv, handlers=AllowOnce()):
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.read)


def main() -> None:
    facade, argv = sys.argv[1], sys.argv[2:]
    if facade == "async":
        asyncio.run(run_async(argv))
        return
    with Client.spawn(argv, handlers=AllowOnce()):
        print("ready", flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
