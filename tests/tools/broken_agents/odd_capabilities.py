"""Broken: `agentCapabilities` is a string and `authMethods` a number. The checker fails
`initialize` saying so, and goes on as if nothing was advertised (no traceback)."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class OddCapabilities(RawAgent):
    def do_initialize(self, rid: Any, params: dict[str, Any]) -> None:
        info = {"name": type(self).__name__, "version": "0.1"}
        result = {"protocolVersion": 1, "agentCapabilities": "all of them", "agentInfo": info}
        self.respond(rid, result | {"authMethods": 5})


OddCapabilities().run()
