"""Broken (a fault seen in a real agent): session/list leaves out the live sessions."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class ForgetsSessions(RawAgent):
    def do_session_list(self, rid: Any, params: dict[str, Any]) -> None:
        self.respond(rid, {"sessions": []})


ForgetsSessions().run()
