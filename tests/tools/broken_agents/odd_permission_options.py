"""Odd: each plain turn asks a permission question whose options are not all objects
(the checker answers with the one reject option it can read, and keeps reading: before,
its reader died and it blamed the agent for closing the connection)."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class OddPermissionOptions(RawAgent):
    def answer(self, rid: Any, sid: str) -> None:
        options = ["allow", 5, {"optionId": "no", "name": "No", "kind": "reject_once"}]
        params = {"sessionId": sid, "toolCall": {"toolCallId": "t1"}, "options": options}
        ask = {"jsonrpc": "2.0", "id": f"ask-{rid}", "method": "session/request_permission"}
        self.send(ask | {"params": params})
        super().answer(rid, sid)


OddPermissionOptions().run()
