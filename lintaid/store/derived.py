"""Derived policy state in memory.db (claims, relations, statuses), updated incrementally."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable


def refresh(db: sqlite3.Connection, changed: set[str],
            mark_dirty: Callable[[Iterable[str]], None]) -> None:
    """Placeholder until the policy engine is wired in: every record is current."""
    return None
