"""Not broken: an agent that needs credentials first (session/new answers -32000)."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class NeedsAuth(RawAgent):
    def do_initialize(self, rid: Any, params: dict[str, Any]) -> None:
        caps = {"loadSession": False}
        info = {"name": "needs-auth", "version": "0.1"}
        methods = [{"id": "api-key", "name": "API key"}, {"id": "login", "name": "Log in"}]
        result = {"protocolVersion": 1, "agentCapabilities": caps, "agentInfo": info}
        self.respond(rid, result | {"authMethods": methods})

    def do_session_new(self, rid: Any, params: dict[str, Any]) -> None:
        self.error(rid, -32000, "Authentication required")


NeedsAuth().run()
