"""Salvage and recovery in-process, on real SQLite files damaged on purpose."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from lintaid.recovery import RecoveryError, recover_project
from lintaid.store import salvage
from lintaid_client import paths
from tests.damage import overwrite_pages, table_pages
from tests.test_store_faults import Running


def numbers_db(path: Path, n: int) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?)",
                         [(i, f"row {i} " + "x" * 300) for i in range(1, n + 1)])
    conn.close()


def checkpoint(db: Path) -> None:
    """Move the WAL into the file, as a clean stop of the daemon does."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def test_rows_beyond_a_damaged_page_are_still_read(tmp_path: Path) -> None:
    db = tmp_path / "n.db"
    numbers_db(db, 2000)
    leaves = table_pages(db, "t")
    if not leaves:
        pytest.skip("this SQLite has no dbstat table to find the leaf pages with")
    overwrite_pages(db, [leaves[len(leaves) // 3], leaves[(2 * len(leaves)) // 3]])
    report = salvage.TableSalvage("t")
    got = [row["id"] for row in salvage.rows(sqlite3.connect(db), "t", report)]
    assert report.skipped_stretches == 2 and report.error is None
    assert got == sorted(got) and got[0] == 1 and got[-1] == 2000  # both ends survive
    lost = 2000 - len(got)
    assert 0 < lost <= 2 * 20  # about a dozen 300-byte rows per 4 KiB leaf


def test_a_destroyed_header_recovers_everything_from_the_backup(project: Path) -> None:
    run = Running(project)
    ids = [run.add(f"The murre feed {i} refreshes every {i} minutes.") for i in range(50)]
    run.store.backup()
    run.close()
    checkpoint(paths.memory_db_path(project))
    overwrite_pages(paths.memory_db_path(project), [1])  # not even a database any more
    report = recover_project(project)
    assert report.needed and report.damage and "not a database" in report.damage
    assert report.tables["records"].salvaged == 0
    assert report.tables["records"].from_backup == 50 and report.records == 50
    run = Running(project)
    try:
        assert set(run.search("murre feed refreshes", top_k=100)) == set(ids)
    finally:
        run.close()


def test_nothing_to_recover_from_is_one_clear_error(project: Path) -> None:
    with pytest.raises(RecoveryError, match="no memory.db .* and no usable backup"):
        recover_project(project)
    assert not paths.memory_db_path(project).exists()


def test_a_whole_database_is_left_alone(project: Path) -> None:
    run = Running(project)
    run.add("The guillemot queue is FIFO.")
    run.close()
    before = paths.memory_db_path(project).read_bytes()
    report = recover_project(project)
    assert not report.needed and "nothing to recover" in report.lines()[0]
    assert paths.memory_db_path(project).read_bytes() == before


def test_every_durable_table_is_salvaged_and_keyless_rows_are_not_doubled(
        project: Path) -> None:
    run = Running(project)
    rid = run.add("The petrel batch runs at 03:00.")
    run.writer.run(lambda: run.store.confirm(rid, "", actor="test"))
    run.store.backup()  # holds the same confirmation as the damaged file will
    run.close()
    checkpoint(paths.memory_db_path(project))
    overwrite_pages(paths.memory_db_path(project), [2])  # a page, but not the header
    report = recover_project(project)
    conn = sqlite3.connect(paths.memory_db_path(project))
    try:
        made = set(salvage.durable_tables(conn))
        assert made >= {"records", "links", "audit", "tombstones", "confirmations",
                        "board_posts", "boards"}
        assert not {n for n in made if n.startswith("board_posts_fts")}  # filled by triggers
        assert set(report.tables) == made  # a table a later migration adds is not forgotten
        assert conn.execute("SELECT COUNT(*) FROM confirmations").fetchone()[0] == 1
        assert conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 1
    finally:
        conn.close()
