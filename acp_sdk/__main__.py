"""`python -m acp_sdk`: see `acp_sdk.tools._cli` (demo, prompt, chat, serve, agent)."""

from __future__ import annotations

import sys

from acp_sdk.tools._cli import main

if __name__ == "__main__":
    sys.exit(main())
