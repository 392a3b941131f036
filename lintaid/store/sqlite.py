"""SQLite connections and transactions, the same for memory.db and workspace.db."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


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
    # An INSERT OR REPLACE fires the DELETE triggers of the row it replaces (memory.db's
    # record_watch is kept by triggers, ``watch.py``); no trigger writes a table with one.
    conn.execute("PRAGMA recursive_triggers=ON")
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


def script(conn: sqlite3.Connection, sql: str) -> None:
    """Run the statements of ``sql`` inside the caller's transaction.

    ``executescript`` commits first and then runs each statement in autocommit: on a new
    database every ``CREATE`` is a commit of its own, each an fsync of memory.db. Run inside one
    transaction, a schema costs one.
    """
    statement = ""
    for line in sql.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""
    if statement.strip():
        conn.execute(statement)


VARIABLE_BUDGET = 900
"""Bound parameters per statement an ``IN`` list may use: under the 999 of older SQLite builds."""


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def in_batches(conn: sqlite3.Connection, sql: str, ids: Iterable[Any],
               params: Sequence[Any] = (), *, after: Sequence[Any] = ()) -> list[sqlite3.Row]:
    """Run ``sql`` once per batch of ``ids``, each ``{ids}`` in it standing for ``(?, ?, ...)``.

    Every ``IN`` list in the stores goes through here, so no statement ever binds more
    variables than SQLite allows (32,766 by default, 999 on some builds). ``params`` are bound
    before the list(s), ``after`` after them; the rows of all batches are returned in batch
    order.
    """
    items = list(dict.fromkeys(ids))
    if not items:
        return []
    lists = sql.count("{ids}")
    if lists < 1:
        raise ValueError("sql must hold an {ids} placeholder")
    size = max(1, (VARIABLE_BUDGET - len(params) - len(after)) // lists)
    out: list[sqlite3.Row] = []
    for part in batches(items, size):
        marks = ",".join("?" * len(part))
        out.extend(conn.execute(sql.replace("{ids}", marks),
                                [*params, *(list(part) * lists), *after]))
    return out
