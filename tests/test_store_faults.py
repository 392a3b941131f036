"""The store against bad rows and a wall clock that steps back (real SQLite and Tantivy).

A row planted behind the daemon's back (an old release, a hand edit, a bug) must never wedge
the index; "newer" is the store's clock, not the wall clock.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from lintaid.capture.record import NewRecord
from lintaid.logs import capture_logs
from lintaid.search import Reader, SearchRequest
from lintaid.store.memory import MemoryStore
from lintaid.writer import Writer
from lintaid_client import paths


class Running:
    """A store with its writer, as the daemon runs them."""

    def __init__(self, root: Path, **store_args) -> None:
        self.store = MemoryStore(root, **store_args)
        self.writer = Writer(self.store)
        self.writer.start()
        self.reader = Reader(memory=self.store, wait_visible=self.writer.wait_visible)

    def add(self, text: str, **fields) -> str:
        rec = NewRecord(content=text, kind="note", source="test", **fields)
        rid, _event = self.writer.run(lambda: self.store.put(rec, actor="test"))
        return rid

    def search(self, query: str, **args) -> list[str]:
        self.reader.settle(None)
        return [h.id for h in self.reader.search(SearchRequest(query=query, **args)).results]

    def status(self, rid: str) -> str:
        return self.reader.get(rid, None).status

    def close(self) -> None:
        self.writer.stop()
        self.store.close()


def _plant(root: Path, rid: str, content: str, *, created_at: object,
           expires_at: object = None) -> None:
    """Write a record row and its pending index row straight into memory.db."""
    db = sqlite3.connect(paths.memory_db_path(root))
    with db:
        db.execute(
            "INSERT INTO records(id, kind, source, user_id, content, content_hash, created_at,"
            " updated_at, expires_at) VALUES (?, 'note', 'planted', 'local', ?, ?, ?, 0, ?)",
            (rid, content, rid, created_at, expires_at))
        db.execute("INSERT OR REPLACE INTO pending_index(record_id, seq) VALUES (?, 1)", (rid,))
    db.close()


def test_a_row_the_index_cannot_hold_is_logged_and_skipped_never_wedging_start(
        project: Path) -> None:
    first = Running(project)
    kept = first.add("The nightly export writes to the cold bucket.")
    first.close()
    _plant(project, "mfar", "The far-future export note.", created_at=1_800_000_000.0,
           expires_at=1e300)
    _plant(project, "mbad", "A garbled export row.", created_at="not a time")

    with capture_logs() as logged:
        again = Running(project)  # start-up replays the pending rows: it must not fail
    try:
        skipped = [e for e in logged if e["event"] == "index_row_skipped"]
        assert [e["record"] for e in skipped] == ["mbad"]
        # The out-of-range expiry is held at the end of the index's range: never expires.
        assert {kept, "mfar"} <= set(again.search("export"))
        # Later writes are searchable: nothing is stuck behind the bad row.
        later = again.add("The export job also writes a manifest.")
        assert later in again.search("export manifest")
        # The skipped row is not retried forever: its pending row is gone (the last write's
        # own row is cleared with the next batch).
        pending = {r[0] for r in again.store.db.execute("SELECT record_id FROM pending_index")}
        assert pending <= {later}
    finally:
        again.close()


class SteppedWall:
    """A wall clock the test moves: five minutes fast, then corrected."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


T0 = 1_800_000_000.0


def test_newer_means_written_later_when_the_wall_clock_steps_back(project: Path) -> None:
    wall = SteppedWall(T0 + 300)  # five minutes fast
    run = Running(project, wall=wall)
    try:
        first = run.add("Connection pool size: 10.")
        wall.now = T0  # corrected: the wall clock steps back
        second = run.add("Connection pool size: now 20.")  # a change: it supersedes
        assert run.status(first) == "superseded"
        assert run.status(second) == "current"
        rows = run.store.get_rows([first, second])
        assert rows[second]["created_at"] > rows[first]["created_at"]
    finally:
        run.close()
    # After a restart the clock starts past the newest stored stamp, the wall still behind.
    run = Running(project, wall=SteppedWall(T0 + 1))
    try:
        third = run.add("Connection pool size: now 30.")
        assert run.status(second) == "superseded"
        assert run.status(third) == "current"
    finally:
        run.close()


def test_an_explicit_time_is_kept_and_observed_but_not_one_far_ahead(project: Path) -> None:
    from lintaid.store.memory import StoreError

    run = Running(project, wall=SteppedWall(T0))
    try:
        imported = run.add("Cache TTL seconds: 60.", created_at=T0 + 120)
        assert run.store.get_rows([imported])[imported]["created_at"] == T0 + 120
        later = run.add("Cache TTL seconds: now 90.")  # stamped after the import it observed
        assert run.status(imported) == "superseded" and run.status(later) == "current"
        try:
            run.add("Cache TTL seconds: 5.", created_at=T0 + 10 * 86_400)
        except StoreError as err:
            assert err.code == "bad_request" and "ahead" in err.message
        else:
            raise AssertionError("a time ten days ahead was accepted")
    finally:
        run.close()


def test_a_stored_stamp_far_ahead_does_not_drag_the_clock(project: Path) -> None:
    run = Running(project, wall=SteppedWall(T0))
    run.add("The gateway listens on port 8080.")
    run.close()
    _plant(project, "mfuture", "A row from a broken clock.", created_at=T0 + 10**9)
    with capture_logs() as logged:
        run = Running(project, wall=SteppedWall(T0))
    try:
        assert any(e["event"] == "clock_rows_ahead" for e in logged)
        rid = run.add("The gateway listens on port 9090.")
        assert run.store.get_rows([rid])[rid]["created_at"] < T0 + 1
    finally:
        run.close()
