"""Broken: reads a file through the client, which never advertised fs."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class ReadsAnyway(RawAgent):
    def answer(self, rid: Any, sid: str) -> None:
        params = {"sessionId": sid, "path": "/etc/hostname"}
        self.send({"jsonrpc": "2.0", "id": "fs-1", "method": "fs/read_text_file", "params": params})
        super().answer(rid, sid)


ReadsAnyway().run()
