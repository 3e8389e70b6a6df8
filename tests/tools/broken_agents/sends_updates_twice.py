"""Broken (a fault seen in a real agent): every update is sent twice."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class Stutters(RawAgent):
    def update(self, sid: str, update: dict[str, Any]) -> None:
        super().update(sid, update)
        super().update(sid, update)


Stutters().run()
