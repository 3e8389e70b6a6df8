"""Broken (a fault seen in a real agent): ends a long turn `cancelled` at once, before any
cancel; its plain turns are honest, so only the long turn shows the fault."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class LongTurnSaysCancelled(RawAgent):
    def wait(self, rid: Any, sid: str) -> str:
        return "cancelled"


LongTurnSaysCancelled().run()
