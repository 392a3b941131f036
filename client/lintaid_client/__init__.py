"""lintaid's light side: the Python client (``Memory``), the hook shim and the MCP shim.

This package is imported by the hook shim on every agent event, so importing it must stay
cheap: names are loaded lazily on first access, and nothing here imports ``mcp``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
"""The package version, defined here once (``pyproject.toml`` and the daemon read it)."""

if TYPE_CHECKING:
    from .memory import Memory
    from .protocol import (
        BadRequest,
        DaemonTimeout,
        DaemonUnavailable,
        Forbidden,
        LintaidError,
        NotFound,
        ProtocolMismatch,
        RemoteError,
        UnknownOp,
    )

__all__ = [
    "BadRequest",
    "DaemonTimeout",
    "DaemonUnavailable",
    "Forbidden",
    "LintaidError",
    "Memory",
    "NotFound",
    "ProtocolMismatch",
    "RemoteError",
    "UnknownOp",
]


def __getattr__(name: str) -> Any:
    if name == "Memory":
        from .memory import Memory

        return Memory
    if name in __all__:
        from . import protocol

        return getattr(protocol, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
