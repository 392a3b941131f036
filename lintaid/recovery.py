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
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lintaid.logs import get_logger
from lintaid_client import paths
from lintaid_client import spool as spool_files

from . import logs
from .derivation import ensure_memory
from .policy.kinds import kind_terms
from .store import integrity, salvage
from .store.backup import newest_whole_backup
from .store.memory import MemoryStore
from .store.salvage import TableReport

log = get_logger("lintaid.recovery")


class RecoveryError(Exception):
    """Recovery cannot go ahead; the message says why, in one line."""


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
        w = max([len("kept aside"), *map(len, self.tables)])
        if self.damaged_copy:
            out.append(f"  {'kept aside':<{w}} {self.damaged_copy}")
        out.append(f"  {'backup':<{w}} {self.backup or 'none usable'}")
        out.extend(f"  {'':<{w}} (not used: {p})" for p in self.backup_problems)
        for name, t in self.tables.items():
            parts = [f"{t.salvaged} read from the damaged file",
                     f"{t.from_backup} more from the backup"]
            if t.damaged_stretches:
                parts.append(f"{t.damaged_stretches} damaged stretch(es) skipped")
            if t.rejected:
                parts.append(f"{t.rejected} unusable")
            if t.error:
                parts.append(f"damaged file unreadable: {t.error}")
            out.append(f"  {name:<{w}} " + ", ".join(parts))
        out.append(f"  {'now':<{w}} {self.records} records; claims, relations and the search "
                   "index rebuilt")
        if self.spool:
            out.append(f"  {'spool':<{w}} {self.spool} event(s) replay when the daemon starts")
        out.append("next: any lintaid command (or the next agent event) starts the daemon")
        return out


def recover_project(root: Path) -> RecoveryReport:
    """Recover ``root``'s memory.db (the caller holds the daemon lock)."""
    os.umask(0o077)  # everything written under .lint-ai is private
    started = time.monotonic()
    state = paths.state_dir(root)
    db = paths.memory_db_path(root)
    report = RecoveryReport(root=str(root), needed=True, damage=salvage.diagnose(db))
    if report.damage is None:
        report.needed = False
        return report
    backup, report.backup_problems = newest_whole_backup(root)
    if report.damage == "missing" and backup is None:
        raise RecoveryError(f"there is no memory.db in {state} and no usable backup in "
                            f"{state / 'backups'}: nothing to recover from")
    logs.configure(paths.log_path(root))
    work = Path(tempfile.mkdtemp(prefix=".recover-", dir=state))
    aside: Path | None = None
    try:
        copy = None
        if report.damage != "missing":
            aside = integrity.set_aside(db)
            report.damaged_copy = str(aside)
            copy = _working_copy(aside, work)
        report.backup = str(backup) if backup is not None else None
        fresh = state / "memory.db.recovering"
        report.tables, report.records = salvage.build(fresh, copy, backup)
        os.replace(fresh, db)
    except BaseException as err:
        if aside is not None and not db.exists():  # never leave a daemon to start empty
            _put_back(aside, db)
        if isinstance(err, Exception):
            raise RecoveryError(f"recovery stopped, memory.db is as it was: {err}") from err
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _rebuild_derived(root)
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


def _put_back(aside: Path, db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        moved = aside.with_name(aside.name + suffix)
        if moved.exists():
            moved.rename(db.with_name(db.name + suffix))


def _rebuild_derived(root: Path) -> None:
    """Claims, relations, statuses and the search index, from the recovered rows."""
    shutil.rmtree(paths.index_dir(root, "memory"), ignore_errors=True)
    store = MemoryStore(root, describe=kind_terms)
    try:
        ensure_memory(store)
    finally:
        store.close()
