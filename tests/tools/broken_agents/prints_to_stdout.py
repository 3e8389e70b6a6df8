"""Broken: writes a banner to stdout (transports.mdx § stdio: only ACP messages there)."""

import sys

from tests.tools.broken_agents._base import RawAgent


class PrintsToStdout(RawAgent):
    def startup(self) -> None:
        print("Starting agent v0.1 ...")
        sys.stdout.flush()


PrintsToStdout().run()
