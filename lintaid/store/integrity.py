"""Integrity at start: is a database whole, and what to do with one that is not.

``check`` runs SQLite's ``PRAGMA quick_check`` (the b-trees and page formats, not the index
contents), bounded in time: a database up to ``CHECK_ALWAYS_BYTES`` is checked at every start
(about 80 ms for 136 MiB on the development machine, warm); a larger one only when its last
clean check is older than ``RECHECK_AFTER_S``. memory.db found damaged stops the daemon (only
``lintaid recover`` may touch it); workspace.db is derived, so its owner sets it aside and
starts empty.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

CHECK_ALWAYS_BYTES: Final = 256 * 1024 * 1024
RECHECK_AFTER_S: Final = 86_400.0
CHECKED_KEY: Final = "integrity_checked_at"
MISSING_KEY: Final = "acknowledged_writes_missing"  # the last report of lost WAL writes
MISSING_SHOWN_S: Final = 7 * 86400
DAMAGED_SUFFIX: Final = ".damaged-"
_SQLITE_CORRUPT: Final = 11
_SQLITE_NOTADB: Final = 26


class Damaged(Exception):
    """SQLite reports the database as damaged: corrupt pages, or not a database at all."""

    def __init__(self, path: Path, detail: str) -> None:
        self.path = path
        self.detail = " ".join(detail.split())[:300]
        super().__init__(f"{path.name} is damaged ({self.detail})")


def is_damage(err: BaseException) -> bool:
    """True for SQLite's corrupt and not-a-database errors (not for locks, I/O or space)."""
    if not isinstance(err, sqlite3.DatabaseError):
        return False
    code = getattr(err, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    text = str(err).lower()
    return "malformed" in text or "not a database" in text


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
                    ).fetchone() is None:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _size(path: Path) -> int:
    total = 0
    for name in (path.name, path.name + "-wal"):
        try:
            total += (path.parent / name).stat().st_size
        except OSError:
            pass
    return total


def check(conn: sqlite3.Connection, path: Path, *,
          wall: Callable[[], float] = time.time, always: bool = False) -> str:
    """``"ok"`` or ``"skipped"`` (large, and checked cleanly of late); raise Damaged.

    Reads only, except that a large database records when its clean check ran. ``always``:
    never skip (a backup about to replace an older one).
    """
    now = wall()
    large = _size(path) > CHECK_ALWAYS_BYTES
    try:
        if large and not always:
            last = _meta(conn, CHECKED_KEY)
            try:
                if last is not None and 0 <= now - float(last) < RECHECK_AFTER_S:
                    return "skipped"
            except ValueError:
                pass
        rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check(5)").fetchall()]
        if rows != ["ok"]:
            raise Damaged(path, "; ".join(rows))
        if large:
            try:
                conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                             (CHECKED_KEY, repr(now)))
            except sqlite3.OperationalError:  # no meta table yet, or a read-only disk
                pass
    except sqlite3.DatabaseError as err:
        if is_damage(err):
            raise Damaged(path, str(err)) from err
        raise
    return "ok"


def set_aside(path: Path, *, wall: Callable[[], float] = time.time) -> Path:
    """Rename a damaged database (and its WAL and shared-memory files) to
    ``<name>.damaged-<UTC time>``, beside it; return the new path of the database."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(wall()))
    target = path.with_name(f"{path.name}{DAMAGED_SUFFIX}{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}{DAMAGED_SUFFIX}{stamp}.{n}")
    for suffix in ("-wal", "-shm", ""):
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.rename(target.with_name(target.name + suffix))
    return target


def damaged_copies(path: Path) -> list[Path]:
    """Databases set aside from ``path``, oldest first (their WAL files not included)."""
    return sorted(p for p in path.parent.glob(f"{path.name}{DAMAGED_SUFFIX}*")
                  if not p.name.endswith(("-wal", "-shm")))


def _open_closed(path: Path) -> sqlite3.Connection:
    """``path`` opened read only (its WAL never checkpointed), whatever its name holds."""
    return sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=5)


def missing_closed(path: Path, *, now: float | None = None) -> dict[str, Any] | None:
    """While no daemon runs: the report of acknowledged writes a start found missing (its
    WAL damaged or deleted), as the store keeps it in ``meta`` and shows it for
    ``MISSING_SHOWN_S``; None when there is none (or it cannot be read). Reads only."""
    if not path.exists():
        return None
    try:
        conn = _open_closed(path)
    except sqlite3.Error:
        return None
    try:
        report = json.loads(_meta(conn, MISSING_KEY) or "{}")
    except (sqlite3.Error, ValueError):
        return None
    finally:
        conn.close()
    try:
        found_at = float(report.get("found_at", 0)) if isinstance(report, dict) else 0.0
        fresh = (time.time() if now is None else now) - found_at < MISSING_SHOWN_S
        return report if fresh and int(report.get("count", 0)) > 0 else None
    except (TypeError, ValueError):
        return None


def check_closed(path: Path) -> str | None:
    """While no daemon runs: why ``path`` (with its WAL) would be refused at start, or None
    when it is whole (or absent). Reads only: the file is opened read-only and its WAL is
    never checkpointed."""
    if not path.exists():
        return None
    try:
        conn = _open_closed(path)
    except sqlite3.Error as err:
        return str(err)
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check(5)").fetchall()]
        return None if rows == ["ok"] else "; ".join(rows)[:300]
    except sqlite3.DatabaseError as err:  # a lock or a missing -shm says nothing of damage
        return " ".join(str(err).split())[:300] if is_damage(err) else None
    finally:
        conn.close()
