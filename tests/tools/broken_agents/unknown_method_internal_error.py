"""Broken: answers an unknown method -32603 (internal error) instead of -32601."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class InternalError(RawAgent):
    def on_unknown(self, rid: Any, method: str) -> None:
        self.error(rid, -32603, "Internal error")


InternalError().run()
