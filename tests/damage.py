"""Ways to damage a real SQLite file, as a bad disk or a stray write would."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path


def page_layout(db: Path) -> tuple[int, int]:
    """(page size, page count) of a database at rest."""
    conn = sqlite3.connect(db)
    try:
        return (conn.execute("PRAGMA page_size").fetchone()[0],
                conn.execute("PRAGMA page_count").fetchone()[0])
    finally:
        conn.close()


def table_pages(db: Path, table: str) -> list[int]:
    """The pages holding ``table``'s rows (leaf pages), when SQLite was built with dbstat;
    else [] (the caller picks pages by position)."""
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno",
            (table,))]
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def overwrite_pages(db: Path, pages: list[int], seed: int = 7) -> None:
    """Overwrite whole pages (1-based) with noise; the file keeps its size."""
    size, _count = page_layout(db)
    noise = __import__("random").Random(seed)
    with open(db, "r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * size)
            fh.write(bytes(noise.getrandbits(8) for _ in range(size)))
        fh.flush()
        os.fsync(fh.fileno())


def three_pages(db: Path, table: str = "records") -> list[int]:
    """Three pages in the middle of ``table`` (or of the file), never page 1."""
    leaves = table_pages(db, table)
    if len(leaves) >= 6:
        n = len(leaves)
        return [leaves[n // 4], leaves[n // 2], leaves[(3 * n) // 4]]
    _size, count = page_layout(db)
    return [max(2, count // 4), max(3, count // 2), max(4, (3 * count) // 4)]
