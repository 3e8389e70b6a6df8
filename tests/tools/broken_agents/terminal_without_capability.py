"""Broken: runs a command through the client, which never advertised terminal."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class RunsAnyway(RawAgent):
    def answer(self, rid: Any, sid: str) -> None:
        params = {"sessionId": sid, "command": "ls"}
        self.send({"jsonrpc": "2.0", "id": "t-1", "method": "terminal/create", "params": params})
        super().answer(rid, sid)


RunsAnyway().run()
