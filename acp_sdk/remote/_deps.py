"""The remote transports' optional dependencies, imported only when used."""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, extra: str) -> ModuleType:
    """Import `module`, or explain which extra of acp-typed installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"{module} is needed for this remote transport: pip install 'acp-typed[{extra}]'"
        ) from error
