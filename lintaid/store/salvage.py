"""Read every row that can still be read from a damaged SQLite database, table by table.

Pure Python over the ``sqlite3`` module, so it works wherever lintaid does (the ``sqlite3``
shell's ``.recover`` is not needed). A table is read in rowid order, a batch at a time; when
a batch hits a damaged page, the rows are read one at a time up to it, and the damaged stretch
is stepped over by probing ever further rowids, then narrowing down to the first one readable
again. Rows on damaged leaf pages are lost; so are all rows below a damaged interior page of
the table's b-tree (a rowid search cannot pass it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field

MAX_ROWID = 2**63 - 1
BATCH = 256


@dataclass
class TableSalvage:
    """What was read of one table."""

    table: str
    rows: int = 0
    skipped_stretches: int = 0  # damaged stretches stepped over
    error: str | None = None  # why the table could not be read at all
    columns: list[str] = field(default_factory=list)


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """The table's columns, from its schema; [] when the schema cannot be read."""
    try:
        return [str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")]
    except sqlite3.DatabaseError:
        return []


def _read(conn: sqlite3.Connection, table: str, after: int, limit: int,
          cols: str) -> list[tuple[object, ...]] | None:
    """Rows with rowid > ``after`` (rowid first); None when a damaged page is in the way."""
    try:
        return list(conn.execute(
            f"SELECT rowid, {cols} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT ?",
            (after, limit)))
    except sqlite3.DatabaseError:
        return None


def _step_over(conn: sqlite3.Connection, table: str, after: int, cols: str) -> int | None:
    """The smallest rowid ``s`` > ``after`` from which reading works again (rows in
    (after, s] are lost); None when nothing after ``after`` can be read."""
    failed, step = after, 1
    while True:
        probe = min(after + step, MAX_ROWID - 1)
        if _read(conn, table, probe, 1, cols) is not None:
            break
        if probe >= MAX_ROWID - 1:
            return None
        failed, step = probe, step * 2
    while probe - failed > 1:  # narrow down: (failed, probe] holds the first readable start
        mid = (failed + probe) // 2
        if _read(conn, table, mid, 1, cols) is None:
            failed = mid
        else:
            probe = mid
    return probe


def rows(conn: sqlite3.Connection, table: str, report: TableSalvage) -> Iterator[
        dict[str, object]]:
    """Every readable row of ``table`` as a column -> value map, in rowid order."""
    names = columns(conn, table)
    report.columns = names
    if not names:
        report.error = "its schema cannot be read"
        return
    cols = ", ".join(f'"{n}"' for n in names)
    after = 0
    while True:
        batch = _read(conn, table, after, BATCH, cols)
        if batch is None:
            batch = _read(conn, table, after, 1, cols)
        if batch is None:
            resume = _step_over(conn, table, after, cols)
            if resume is None:
                report.skipped_stretches += 1
                return
            report.skipped_stretches += 1
            after = resume
            continue
        if not batch:
            return
        for row in batch:
            report.rows += 1
            yield dict(zip(names, row[1:], strict=True))
        last = batch[-1][0]
        after = last if isinstance(last, int) else after + len(batch)
