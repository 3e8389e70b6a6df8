"""Broken (a fault seen in a real agent): ends a turn nobody cancelled as `cancelled`."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class SaysCancelled(RawAgent):
    def answer(self, rid: Any, sid: str) -> None:
        self.chunk(sid, "hello")
        self.respond(rid, {"stopReason": "cancelled"})


SaysCancelled().run()
