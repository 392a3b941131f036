"""Writes memory.db lost with its WAL, written back from the index at the next open (in
process: the WAL is lost by putting back a copy of memory.db taken at a checkpoint)."""

from __future__ import annotations

import gc
import shutil
import sqlite3
from pathlib import Path

from lintaid.capture.record import NewRecord
from lintaid.store.memory import MemoryStore
from lintaid.store.outbox import RECORD
from lintaid_client import paths


def put(store: MemoryStore, text: str) -> str:
    with store.transaction():
        rid, _event = store.put(NewRecord(content=text, kind="note", source="cli"), "cli")
    store.index_now()
    return rid


def lose_the_wal(root: Path, copy: Path) -> None:
    db = paths.memory_db_path(root)
    shutil.copyfile(copy, db)
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)


def checkpoint_copy(root: Path, to: Path) -> Path:
    db = paths.memory_db_path(root)
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    shutil.copyfile(db, to)
    return to


def test_an_expiry_and_a_shared_record_come_back_and_the_record_is_queued_again(
        tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    store = MemoryStore(root)
    try:
        kept = put(store, "The build cache is on bc-1.")
        copy = checkpoint_copy(root, tmp_path / "checkpoint.db")
        lost = put(store, "The nightly job runs at 02:00.")
        with store.transaction():
            store.expire(kept, "local", 1_900_000_000.0, "cli")
        store.index_now()
    finally:
        store.close()
    del store
    gc.collect()  # the thread's read connection too: nothing holds the WAL open
    lose_the_wal(root, copy)
    probe = sqlite3.connect(paths.memory_db_path(root))
    try:
        assert probe.execute("SELECT COUNT(*), MAX(expires_at) FROM records").fetchone() == (
            1, None)
    finally:
        probe.close()

    again = MemoryStore(root)
    try:
        assert again.missing["recovered"] == {"added": 1, "changed": 1, "links": 0,
                                              "forgotten_again": 0}
        rows = again.get_rows([kept, lost])
        assert rows[lost]["content"] == "The nightly job runs at 02:00."
        assert rows[kept]["expires_at"] == 1_900_000_000.0
        again.outbox.enabled = True  # a team joined: the writer's first batch queues it
        with again.transaction():
            again.settle_recovered()
        queued = again.db.execute("SELECT kind, target FROM team_outbox").fetchall()
        assert [tuple(r) for r in queued] == [(RECORD, lost)]
    finally:
        again.close()
    # Opened again, nothing more is found: the report stands, nothing is written twice.
    third = MemoryStore(root)
    try:
        assert third.recovered == []
        count = third.db.execute("SELECT COUNT(*) FROM audit WHERE op = 'recover'").fetchone()
        assert count[0] == 2
    finally:
        third.close()


def test_nothing_is_found_when_nothing_was_lost(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    store = MemoryStore(root)
    try:
        first = put(store, "The deploy key rotates monthly.")
        with store.transaction():
            store.forget(first, "local", "done", "cli")
        store.index_now()
        put(store, "The staging box is st-4.")
    finally:
        store.close()
    again = MemoryStore(root)
    try:
        assert again.missing == {} and again.recovered == []
        assert again.get_rows([first])[first]["forgotten_at"] is not None
    finally:
        again.close()
