"""``lintaid recover``: a new memory.db from what a damaged one still holds, and a backup.

Runs with the daemon stopped and its lock held by the caller, so nothing else writes. In order:

1. the damaged file (with its WAL) is renamed ``memory.db.damaged-<UTC time>`` and never
   written again: salvage reads a private copy of it;
2. a new database gets the current schema (the named migrations), then every readable row of
   the durable tables (records, links, audit, tombstones), table by table (``store.salvage``);
3. the newest rolling backup that passes its check adds the rows the damage took (a row read
   from the damaged file wins over the backup's older copy of it);
4. a record whose tombstone survived stays forgotten;
5. the new file replaces memory.db; the derived state (claims, relations, statuses) and the
   search index are rebuilt from it.

Spooled events are left in the spool: the daemon replays them when it starts, as always.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

import structlog

from lintaid_client import paths
from lintaid_client import spool as spool_files

from . import logs
from .derivation import ensure_memory
from .store import integrity, salvage
from .store.backup import newest_whole_backup
from .store.memory import MemoryStore
from .store.migrations import migrate

DURABLE_TABLES: Final = ("records", "links", "audit", "tombstones")
log = structlog.get_logger("lintaid.recovery")


class RecoveryError(Exception):
    """Recovery cannot go ahead; the message says why, in one line."""


@dataclass
class TableReport:
    salvaged: int = 0  # rows read from the damaged file and kept
    from_backup: int = 0  # rows only the backup still had
    rejected: int = 0  # rows read but not valid for the current schema
    damaged_stretches: int = 0  # unreadable stretches of the table stepped over
    error: str | None = None  # the table could not be read from the damaged file at all


@dataclass
class RecoveryReport:
    root: str
    needed: bool
    damage: str | None = None
    damaged_copy: str | None = None
    backup: str | None = None
    backup_problems: list[str] = field(default_factory=list)
    tables: dict[str, TableReport] = field(default_factory=dict)
    records: int = 0  # records in the recovered memory.db
    spool: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        if not self.needed:
            return [f"memory.db is whole (its integrity check passed): nothing to recover "
                    f"in {self.root}"]
        out = [f"memory.db was damaged ({self.damage}); recovered in {self.seconds:.1f}s"]
        if self.damaged_copy:
            out.append(f"  kept aside  {self.damaged_copy}")
        out.append(f"  backup      {self.backup or 'none usable'}")
        out.extend(f"              (not used: {p})" for p in self.backup_problems)
        for name, t in self.tables.items():
            parts = [f"{t.salvaged} read from the damaged file",
                     f"{t.from_backup} more from the backup"]
            if t.damaged_stretches:
                parts.append(f"{t.damaged_stretches} damaged stretch(es) skipped")
            if t.rejected:
                parts.append(f"{t.rejected} unusable")
            if t.error:
                parts.append(f"damaged file unreadable: {t.error}")
            out.append(f"  {name:<11} " + ", ".join(parts))
        out.append(f"  now         {self.records} records; claims, relations and the search "
                   "index rebuilt")
        if self.spool:
            out.append(f"  spool       {self.spool} event(s) replay when the daemon starts")
        out.append("next: any lintaid command (or the next agent event) starts the daemon")
        return out


def diagnose(db: Path) -> str | None:
    """None when memory.db opens and passes ``quick_check``; else what is wrong."""
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


def recover_project(root: Path) -> RecoveryReport:
    """Recover ``root``'s memory.db (the caller holds the daemon lock)."""
    os.umask(0o077)  # everything written under .lint-ai is private
    started = time.monotonic()
    state = paths.state_dir(root)
    db = paths.memory_db_path(root)
    report = RecoveryReport(root=str(root), needed=True, damage=diagnose(db))
    if report.damage is None:
        report.needed = False
        return report
    backup, report.backup_problems = newest_whole_backup(root)
    if report.damage == "missing" and backup is None:
        raise RecoveryError(f"there is no memory.db in {state} and no usable backup in "
                            f"{state / 'backups'}: nothing to recover from")
    logs.configure(paths.log_path(root))
    report.tables = {name: TableReport() for name in DURABLE_TABLES}
    work = Path(tempfile.mkdtemp(prefix=".recover-", dir=state))
    try:
        fresh = state / "memory.db.recovering"
        for suffix in ("", "-journal", "-wal", "-shm"):
            fresh.with_name(fresh.name + suffix).unlink(missing_ok=True)
        conn = sqlite3.connect(str(fresh), isolation_level=None)
        try:
            migrate(conn)
            if report.damage != "missing":
                aside = integrity.set_aside(db)
                report.damaged_copy = str(aside)
                _salvage(conn, _working_copy(aside, work), report)
            if backup is not None:
                report.backup = str(backup)
                _merge_backup(conn, backup, report)
            _keep_forgotten(conn)
            report.records = conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()
        os.replace(fresh, db)
        _rebuild_derived(root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    paths.start_error_path(root).unlink(missing_ok=True)  # the damage it told of is gone
    report.spool = len(spool_files.pending(root))
    report.seconds = round(time.monotonic() - started, 3)
    log.info("recovered", **{k: v for k, v in report.to_dict().items() if k != "root"})
    return report


def _working_copy(aside: Path, work: Path) -> Path:
    """A private copy to read from: opening a database may write to it (WAL recovery), and
    the damaged file is kept as it was."""
    copy = work / "damaged.db"
    for suffix in ("", "-wal"):
        source = aside.with_name(aside.name + suffix)
        if source.exists():
            shutil.copyfile(source, copy.with_name(copy.name + suffix))
    return copy


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, object],
            target_cols: set[str]) -> bool:
    """INSERT OR IGNORE the row's columns the current schema has; True when it was new."""
    cols = [c for c in row if c in target_cols]
    sql = (f"INSERT OR IGNORE INTO {table}({', '.join(cols)})"
           f" VALUES ({', '.join('?' * len(cols))})")
    return conn.execute(sql, [row[c] for c in cols]).rowcount > 0


def _salvage(conn: sqlite3.Connection, damaged: Path, report: RecoveryReport) -> None:
    try:
        source = sqlite3.connect(str(damaged))
    except sqlite3.Error as err:
        for t in report.tables.values():
            t.error = str(err)
        return
    try:
        for table in DURABLE_TABLES:
            t = report.tables[table]
            target_cols = set(salvage.columns(conn, table))
            read = salvage.TableSalvage(table)
            conn.execute("BEGIN")
            try:
                for row in salvage.rows(source, table, read):
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


def _merge_backup(conn: sqlite3.Connection, backup: Path, report: RecoveryReport) -> None:
    source = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
    source.row_factory = sqlite3.Row
    try:
        for table in DURABLE_TABLES:
            t = report.tables[table]
            target_cols = set(salvage.columns(conn, table))
            if not salvage.columns(source, table):
                continue
            conn.execute("BEGIN")
            try:
                for row in source.execute(f"SELECT * FROM {table}"):
                    try:
                        t.from_backup += int(_insert(conn, table, dict(row), target_cols))
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


def _rebuild_derived(root: Path) -> None:
    """Claims, relations, statuses and the search index, from the recovered rows."""
    shutil.rmtree(paths.index_dir(root, "memory"), ignore_errors=True)
    store = MemoryStore(root)
    try:
        ensure_memory(store)
    finally:
        store.close()
