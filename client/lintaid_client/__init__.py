"""lintaid's light side: the Python client (``Memory``), the hook shim and the MCP shim.

The hook shim imports this package on every agent event, started without site, so importing
it must cost nothing: no imports at all here (not even ``typing``); names load on first use.
"""

__version__ = "0.1.0"
"""The package version, defined here once (``pyproject.toml`` and the daemon read it)."""

TYPE_CHECKING = False  # mypy reads the block below; at run time it never executes
if TYPE_CHECKING:
    from .memory import Memory
    from .models import Hit, SearchResult, json_default
    from .protocol import (
        BadRequest,
        DaemonTimeout,
        DaemonUnavailable,
        Forbidden,
        LintaidError,
        NotFound,
        ProtocolMismatch,
        RemoteError,
        Unavailable,
        UnknownOp,
    )

__all__ = [
    "BadRequest",
    "DaemonTimeout",
    "DaemonUnavailable",
    "Forbidden",
    "Hit",
    "LintaidError",
    "Memory",
    "NotFound",
    "ProtocolMismatch",
    "RemoteError",
    "SearchResult",
    "Unavailable",
    "UnknownOp",
    "json_default",
]


def __getattr__(name: str) -> object:
    if name == "Memory":
        from .memory import Memory

        return Memory
    if name in ("Hit", "SearchResult", "json_default"):
        from . import models

        return getattr(models, name)
    if name in __all__:
        from . import protocol

        return getattr(protocol, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
