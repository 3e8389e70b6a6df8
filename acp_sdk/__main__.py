"""`python -m acp_sdk`: see `acp_sdk.tools._cli` (demo, prompt, chat, serve, agent)."""

from __future__ import annotations

import sys

try:
    from acp_sdk.tools._cli import main
except KeyboardInterrupt:  # Ctrl-C while a slow machine still imports: no traceback
    sys.exit(130)

if __name__ == "__main__":
    sys.exit(main())
