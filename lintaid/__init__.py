"""lintaid: a per-project memory daemon for coding agents (the daemon and the operator CLI)."""

from lintaid_client import __version__

__all__ = ["__version__"]
