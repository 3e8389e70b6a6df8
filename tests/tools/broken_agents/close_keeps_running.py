"""Broken: session/close answers at once and leaves the session's running turn running."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class KeepsRunning(RawAgent):
    def do_session_close(self, rid: Any, params: dict[str, Any]) -> None:
        self.respond(rid, {})


KeepsRunning().run()
