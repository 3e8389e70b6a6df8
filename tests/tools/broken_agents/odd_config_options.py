"""Broken: `session/new` lists config options that are not objects. The checker fails
`set-config-option` saying so (before: a traceback ended the run)."""

import uuid
from typing import Any

from tests.tools.broken_agents._base import MODES, RawAgent


class OddConfigOptions(RawAgent):
    def do_session_new(self, rid: Any, params: dict[str, Any]) -> None:
        sid = "s-" + uuid.uuid4().hex[:12]
        self.sessions[sid] = params.get("cwd", "")
        modes = {"currentModeId": "ask", "availableModes": MODES}
        self.respond(rid, {"sessionId": sid, "modes": modes, "configOptions": [5]})


OddConfigOptions().run()
