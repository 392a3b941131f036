"""Online backups of memory.db through SQLite's backup API.

A backup is a consistent snapshot taken from a read connection while the writer goes on (WAL):
copied into a private temporary file beside the target, switched out of WAL so it is one
self-contained file, checked with ``quick_check`` (a damaged source never replaces a good
backup), synced, then renamed into place. Rolling backups live in ``.lint-ai/backups/`` as
``memory-<UTC time>.db``. Retention (``Retention``): the newest ``keep``, and of those only as
many as fit in ``max_bytes`` together, the newest always (a database larger than the cap still
has one backup).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from lintaid_client import paths
from lintaid_client.ops import BACKUPS_KEPT, BACKUPS_MAX_MB

from .integrity import Damaged, check

KEEP: Final = BACKUPS_KEPT
MAX_BYTES: Final = BACKUPS_MAX_MB * 2**20
PREFIX: Final = "memory-"
SUFFIX: Final = ".db"
_rotate_lock = threading.Lock()


@dataclass(frozen=True)
class Retention:
    """Which rolling backups stay: the newest ``keep``, at most ``max_bytes`` together (the
    newest one always, whatever its size)."""

    keep: int = KEEP
    max_bytes: int = MAX_BYTES

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BackupInfo:
    path: str
    bytes: int
    seconds: float
    at: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def backup_dir(root: Path) -> Path:
    return paths.state_dir(root) / "backups"


def leftovers(root: Path) -> list[Path]:
    """Temporary files of backups that never finished (the daemon was killed during one):
    ``.memory-<time>.db.<pid>.<thread>.tmp`` in ``backups/``."""
    folder = backup_dir(root)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if p.name.startswith("." + PREFIX) and p.name.endswith(".tmp"))


def remove_leftovers(root: Path) -> list[tuple[str, int]]:
    """At start (the project's lock held, so no backup of this store runs): remove what
    killed backups left; (name, bytes) of each."""
    removed = []
    for path in leftovers(root):
        try:
            size = path.stat().st_size
            path.unlink()
        except OSError:
            continue
        removed.append((path.name, size))
    return removed


def rolling_backups(root: Path) -> list[Path]:
    """The rolling backups of ``root``'s memory.db, oldest first."""
    folder = backup_dir(root)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if p.name.startswith(PREFIX) and p.name.endswith(SUFFIX))


def copy_database(source: Path, target: Path) -> BackupInfo:
    """Write a consistent, checked copy of the database at ``source`` to ``target`` (0600).

    Raise ``Damaged`` (and leave ``target`` as it was) when the copy fails its check.
    """
    started = time.monotonic()
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.close(fd)
    try:
        src = sqlite3.connect(str(source), timeout=30)
        try:
            dst = sqlite3.connect(str(tmp))
            try:
                src.backup(dst)  # one step: one read snapshot, the writer carries on
                dst.execute("PRAGMA journal_mode=DELETE")
                check(dst, tmp, always=True)
            finally:
                dst.close()
        finally:
            src.close()
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        _sync_dir(target.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return BackupInfo(path=str(target), bytes=target.stat().st_size,
                      seconds=round(time.monotonic() - started, 3), at=time.time())


def rolling_backup(root: Path, source: Path, retention: Retention | None = None) -> BackupInfo:
    """A new rolling backup of ``source``; then the older ones ``retention`` leaves out are
    removed (only once the new one is whole, so a failed backup never costs an old one)."""
    folder = backup_dir(root)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{now % 1:.3f}"[1:] + "Z"
    target = folder / f"{PREFIX}{stamp}{SUFFIX}"
    n = 1
    while target.exists():  # two in one millisecond: the later sorts after
        n += 1
        target = folder / f"{PREFIX}{stamp}-{n}{SUFFIX}"
    info = copy_database(source, target)
    with _rotate_lock:
        for old in expired(rolling_backups(root), retention or Retention()):
            old.unlink(missing_ok=True)
    return info


def expired(backups: list[Path], retention: Retention) -> list[Path]:
    """Of ``backups`` (oldest first), the ones ``retention`` does not keep."""
    kept, total = 0, 0
    out: list[Path] = []
    for path in reversed(backups):
        try:
            size = path.stat().st_size
        except OSError:  # gone already
            continue
        if kept and (kept >= retention.keep or total + size > retention.max_bytes):
            out.append(path)
            continue
        kept += 1
        total += size
    return out


def total_bytes(backups: list[Path]) -> int:
    """What ``backups`` take on disk together."""
    total = 0
    for path in backups:
        try:
            total += path.stat().st_size
        except OSError:
            continue
    return total


def newest_whole_backup(root: Path) -> tuple[Path | None, list[str]]:
    """The newest rolling backup that passes ``quick_check``, and why newer ones did not."""
    problems: list[str] = []
    for candidate in reversed(rolling_backups(root)):
        try:
            conn = sqlite3.connect(f"file:{candidate}?mode=ro", uri=True)
            try:
                check(conn, candidate, always=True)
            finally:
                conn.close()
            return candidate, problems
        except (Damaged, sqlite3.Error) as err:
            problems.append(f"{candidate.name}: {err}")
    return None, problems


def _sync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
