"""Agents that break one ACP rule each, for the checker's tests (run with python -m)."""
