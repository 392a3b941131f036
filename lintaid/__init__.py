"""lintaid: a per-project memory daemon for coding agents (the daemon and the operator CLI)."""

__version__ = "0.1.0"
