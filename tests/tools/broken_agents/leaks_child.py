"""Broken: starts a helper process and leaves it running when its input ends."""

import subprocess
import sys

from tests.tools.broken_agents._base import RawAgent


class LeaksChild(RawAgent):
    def startup(self) -> None:
        code = "import time; time.sleep(60)"
        subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)


LeaksChild().run()
