"""Tools built on the public API: the command line (`python -m acp_sdk`), the turn
renderer, the scenario agent and the test helpers. Every module here is private; the
public names live in `acp_sdk.testing`.
"""

__all__: list[str] = []
