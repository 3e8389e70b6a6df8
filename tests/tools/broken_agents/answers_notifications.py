"""Broken (a fault seen in a real agent): answers an unknown notification with an error."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class Answers(RawAgent):
    def notification(self, method: str, params: dict[str, Any]) -> None:
        if method.startswith("_"):
            self.error(None, -32601, "Method not found")
        super().notification(method, params)


Answers().run()
