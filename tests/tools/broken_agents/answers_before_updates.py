"""Broken: answers the prompt, then sends the turn's updates."""

from typing import Any

from tests.tools.broken_agents._base import RawAgent


class AnswersFirst(RawAgent):
    def answer(self, rid: Any, sid: str) -> None:
        self.respond(rid, {"stopReason": "end_turn"})
        self.chunk(sid, "hello")
        self.chunk(sid, "!")


AnswersFirst().run()
