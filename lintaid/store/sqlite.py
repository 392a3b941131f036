"""SQLite connections and transactions, the same for memory.db and workspace.db."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def connect(path: Path, *, durable: bool) -> sqlite3.Connection:
    """Open ``path`` in WAL mode with autocommit off-by-hand (explicit BEGIN/COMMIT).

    ``durable``: fsync every commit (memory.db, the source of truth); otherwise only at
    checkpoints (workspace.db, rebuildable from the files).
    """
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any error, a failed COMMIT included.

    A COMMIT that fails (disk full, I/O error) can leave the transaction open; ending it here
    keeps every later transaction possible once the cause is gone.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        rollback(conn)
        raise
    try:
        conn.execute("COMMIT")
    except sqlite3.Error:
        rollback(conn)
        raise
