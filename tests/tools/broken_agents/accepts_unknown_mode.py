"""Broken (a fault seen in a real agent): accepts a mode id it never listed."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class AnyMode(RawAgent):
    def do_session_set_mode(self, rid: Any, params: dict[str, Any]) -> None:
        self.respond(rid, {})


AnyMode().run()
