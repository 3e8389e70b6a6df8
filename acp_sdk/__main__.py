"""`python -m acp_sdk`: command-line entry points.

python -m acp_sdk agent     # the scenario agent over stdio (for testing clients)
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m acp_sdk", description="acp_sdk command line")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("agent", help="run the deterministic scenario agent over stdio")
    args = parser.parse_args(argv)
    if args.command == "agent":
        from acp_sdk.scenario_agent import main as agent_main

        agent_main()
        return 0
    parser.error(f"unknown command {args.command}")  # pragma: no cover - argparse exits first
    return 2


if __name__ == "__main__":
    sys.exit(main())
