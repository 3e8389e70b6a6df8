"""Doubtful, not broken (the spec is silent): a usage_update after the prompt's answer."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class LateUsage(RawAgent):
    def answer(self, rid: Any, sid: str) -> None:
        super().answer(rid, sid)
        self.update(sid, {"sessionUpdate": "usage_update", "used": 1200, "size": 200000})


LateUsage().run()
