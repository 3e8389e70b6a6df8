"""Broken: a long turn runs its course (2 s) and ends end_turn, whatever the cancel."""

import time
from typing import Any

from tests.tools.broken_agents._base import RawAgent


class IgnoresCancel(RawAgent):
    def wait(self, rid: Any, sid: str) -> str:
        time.sleep(2.0)
        self.chunk(sid, "done counting")
        return "end_turn"


IgnoresCancel().run()
