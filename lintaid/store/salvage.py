"""A new memory.db from what a damaged one still holds, and from a backup.

Reading: pure Python over the ``sqlite3`` module, so it works wherever lintaid does (the
``sqlite3`` shell's ``.recover`` is not needed). A table is read in rowid order, a batch at a
time; when a batch hits a damaged page, the rows are read one at a time up to it, and the
damaged stretch is stepped over by probing ever further rowids, then narrowing down to the
first one readable again. Rows on damaged leaf pages are lost; so are all rows below a damaged
interior page of the table's b-tree (a rowid search cannot pass it).

Writing (``build``): the current schema (the named migrations), then every readable row of
the durable tables, then the rows only the backup still has (a row read from the damaged file
wins over the backup's older copy of it), and a record whose tombstone survived stays
forgotten. The derived tables are not copied: their owner derives them again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from . import integrity
from .migrations import migrate
from .schema import DERIVED_TABLES
from .watch import WATCH_TABLE

MAX_ROWID = 2**63 - 1
BATCH = 256
NOT_SALVAGED: Final = frozenset({"_migrations", "meta", "pending_index"})
"""Tables the migrations create that a new database fills itself: its own migration record,
its derived-state markers, and the index queue (the index is rebuilt)."""
FILLED_BY_TRIGGERS: Final = "board_posts_fts"
"""The board's full-text tables (FTS5 and its shadow tables): the posts' triggers fill them
again as the posts are salvaged."""
FIRST: Final = ("records", "links", "audit", "tombstones")  # reported first, in this order


@dataclass
class TableReport:
    """What became of one durable table."""

    salvaged: int = 0  # rows read from the damaged file and kept
    from_backup: int = 0  # rows only the backup still had
    rejected: int = 0  # rows read but not valid for the current schema
    damaged_stretches: int = 0  # unreadable stretches of the table stepped over
    error: str | None = None  # the table could not be read from the damaged file at all


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


# -- building the new database ----------------------------------------------------------------
def diagnose(db: Path) -> str | None:
    """None when the database opens and passes ``quick_check``; else what is wrong."""
    if not db.exists():
        return "missing"
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error as err:
        return str(err)
    try:
        integrity.check(conn, db, always=True)
    except integrity.Damaged as err:
        return err.detail
    except sqlite3.Error as err:
        return str(err)
    finally:
        conn.close()
    return None


def build(fresh: Path, damaged: Path | None, backup: Path | None) -> tuple[
        dict[str, TableReport], int]:
    """Write a new database at ``fresh`` from ``damaged`` (a private copy: opening may write
    to it) and ``backup``; return what became of each durable table and the records held."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        fresh.with_name(fresh.name + suffix).unlink(missing_ok=True)
    conn = sqlite3.connect(str(fresh), isolation_level=None)
    try:
        migrate(conn)
        tables = {name: TableReport() for name in durable_tables(conn)}
        if damaged is not None:
            _salvage(conn, damaged, tables)
        if backup is not None:
            _merge_backup(conn, backup, tables)
        _keep_forgotten(conn)
        records = int(conn.execute("SELECT COUNT(*) FROM records").fetchone()[0])
        conn.execute("PRAGMA journal_mode=WAL")
    finally:
        conn.close()
    return tables, records


def durable_tables(conn: sqlite3.Connection) -> list[str]:
    """Every table the migrations made that holds what only this database knows: records,
    links, the audit log, tombstones, confirmations, and whatever a later migration adds."""
    names = [str(r[0]) for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    durable = [n for n in names if n not in NOT_SALVAGED and n not in DERIVED_TABLES
               and not n.startswith(FILLED_BY_TRIGGERS) and n != WATCH_TABLE]
    return sorted(durable, key=lambda n: (FIRST.index(n) if n in FIRST else len(FIRST), n))


def has_key(conn: sqlite3.Connection, table: str) -> bool:
    """Whether the table has a primary key or a unique index (so INSERT OR IGNORE dedupes)."""
    if any(r[5] for r in conn.execute(f"PRAGMA table_info({table})")):
        return True
    return any(r[2] for r in conn.execute(f"PRAGMA index_list({table})"))


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, object],
            target_cols: set[str], *, keyed: bool = True) -> bool:
    """INSERT OR IGNORE the row's columns the current schema has; True when it was new. A
    table with no key (confirmations) skips a row equal to one it holds already."""
    cols = [c for c in row if c in target_cols]
    values = [row[c] for c in cols]
    if not keyed and conn.execute(
            f"SELECT 1 FROM {table} WHERE " + " AND ".join(f"{c} IS ?" for c in cols)
            + " LIMIT 1", values).fetchone() is not None:
        return False
    sql = (f"INSERT OR IGNORE INTO {table}({', '.join(cols)})"
           f" VALUES ({', '.join('?' * len(cols))})")
    return conn.execute(sql, values).rowcount > 0


def _salvage(conn: sqlite3.Connection, damaged: Path, tables: dict[str, TableReport]) -> None:
    try:
        source = sqlite3.connect(str(damaged))
    except sqlite3.Error as err:
        for t in tables.values():
            t.error = str(err)
        return
    try:
        for table, t in tables.items():
            target_cols = set(columns(conn, table))
            read = TableSalvage(table)
            conn.execute("BEGIN")
            try:
                for row in rows(source, table, read):
                    try:
                        t.salvaged += int(_insert(conn, table, row, target_cols))
                    except (sqlite3.IntegrityError, sqlite3.InterfaceError,
                            sqlite3.OperationalError):
                        t.rejected += 1
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            t.damaged_stretches = read.skipped_stretches
            t.error = read.error
    finally:
        source.close()


def _merge_backup(conn: sqlite3.Connection, backup: Path,
                  tables: dict[str, TableReport]) -> None:
    source = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
    source.row_factory = sqlite3.Row
    try:
        for table, t in tables.items():
            target_cols = set(columns(conn, table))
            if not columns(source, table):
                continue
            keyed = has_key(conn, table)
            conn.execute("BEGIN")
            try:
                for row in source.execute(f"SELECT * FROM {table}"):
                    try:
                        t.from_backup += int(_insert(conn, table, dict(row), target_cols,
                                                     keyed=keyed))
                    except (sqlite3.IntegrityError, sqlite3.InterfaceError):
                        t.rejected += 1
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
    finally:
        source.close()


def _keep_forgotten(conn: sqlite3.Connection) -> None:
    """A record the backup had before it was forgotten stays forgotten (its tombstone says)."""
    conn.execute(
        "UPDATE records SET forgotten_at = (SELECT t.at FROM tombstones t"
        " WHERE t.record_id = records.id ORDER BY t.at DESC LIMIT 1),"
        " forgotten_reason = (SELECT t.reason FROM tombstones t"
        " WHERE t.record_id = records.id ORDER BY t.at DESC LIMIT 1)"
        " WHERE forgotten_at IS NULL AND id IN (SELECT record_id FROM tombstones)")
