"""Broken: dies on a line that is not JSON."""

import sys

from tests.tools.broken_agents._base import RawAgent


class Fragile(RawAgent):
    def on_malformed(self, line: str) -> None:
        print("fatal: cannot parse input", file=sys.stderr)
        sys.exit(1)


Fragile().run()
