"""``record_watch`` (what a SessionStart brief may ask about, kept by triggers) stays equal to
what the tables say through every kind of write, and ``verify_candidates`` read from it gives
the same records, in the same order, as the query that read every record did."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lintaid import derivation
from lintaid.capture.record import NewRecord
from lintaid.policy import staleness as policy
from lintaid.store.memory import MemoryStore
from lintaid.store.watch import ensure_watch, expected_rows
from lintaid.store_lint import AGING_AT, VERIFY_CATEGORIES
from lintaid.writer import Writer

DAY = policy.DAY
T0 = 1_767_225_600.0


def scanned(conn: sqlite3.Connection, user_id: str, at: float, aged_before: dict[str, float],
            limit: int) -> list[str]:
    """The query verify_candidates ran before record_watch: every record, oldest first."""
    aged = " ".join("WHEN ? THEN r.created_at <= ?" for _ in aged_before)
    params: list[Any] = [user_id, at, at]
    params += [x for item in aged_before.items() for x in item]
    params += list(aged_before)
    params.append(limit)
    return [r[0] for r in conn.execute(
        "SELECT r.id FROM records r JOIN record_category c ON c.record_id = r.id"
        " LEFT JOIN record_state s ON s.record_id = r.id"
        " WHERE r.user_id = ? AND r.forgotten_at IS NULL AND r.kind != 'prompt'"
        " AND COALESCE(s.status, 'current') != 'superseded' AND r.created_at <= ?"
        " AND (r.expires_at IS NULL OR r.expires_at > ?)"
        f" AND ((CASE c.category {aged} ELSE 0 END)"
        f" OR (c.category IN ({', '.join('?' * len(aged_before))}) AND ("
        " EXISTS (SELECT 1 FROM relations x WHERE x.target_record = r.id"
        " AND x.kind IN ('supersedes', 'conflicts_with'))"
        " OR EXISTS (SELECT 1 FROM assertions a WHERE a.record_id = r.id"
        " AND a.attribute != 'text'))))"
        " ORDER BY r.created_at, r.id LIMIT ?", params)]


class Store:
    def __init__(self, root: Path) -> None:
        self.store = MemoryStore(root)
        self.writer = Writer(self.store)
        self.writer.start()
        self.n = 0

    def add(self, text: str, days_before: float, *, kind: str = "note", user: str = "local",
            expires_in_days: float | None = None) -> str:
        self.n += 1
        rec = NewRecord(content=text, kind=kind, source=f"test/{self.n}", user_id=user,
                        created_at=T0 - days_before * DAY,
                        expires_at=None if expires_in_days is None
                        else T0 + expires_in_days * DAY)
        rid, _event = self.writer.run(lambda: self.store.put(rec, "test"))
        return str(rid)

    def watched(self) -> set[tuple[object, ...]]:
        return {tuple(r) for r in self.store.db.execute("SELECT * FROM record_watch")}

    def in_step(self) -> None:
        assert self.watched() == expected_rows(self.store.db)

    def close(self) -> None:
        self.writer.stop()
        self.store.close()


@pytest.fixture
def st(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path)
    try:
        yield s
    finally:
        s.close()


def aged(at: float) -> dict[str, float]:
    config = policy.StalenessConfig()
    return {c: at - AGING_AT / (config.rate(c) * policy.INFERRED_FACTOR) * DAY
            for c in VERIFY_CATEGORIES if config.rate(c) > 0}


def fill(st: Store) -> dict[str, str]:
    ids = {
        "old_fact": st.add("We use Redis for session storage.", 300),
        "young_fact": st.add("We use Postgres for billing.", 2),
        "person": st.add("Alice works at Acme.", 1),
        "prompt": st.add("User prompt: how is billing stored?", 200, kind="prompt"),
        "turn": st.add("Debugged the flaky test today", 250),
        "expired": st.add("The staging host is stg-1.", 200, expires_in_days=-1),
        "expiring": st.add("The deploy window is Friday.", 200, expires_in_days=10),
        "other_user": st.add("We use Kafka for events.", 300, user="bob"),
        "decided": st.add("The upload limit is 25 MB.", 100),
    }
    ids["redecided"] = st.add("The upload limit is now 50 MB instead of 25 MB.", 1)
    ids["conflicting"] = st.add("We use Memcached for session storage.", 3)
    for i in range(12):
        ids[f"many{i}"] = st.add(f"The service{i} timeout is {i + 5} seconds.", 90 + i)
    return ids


def test_the_watch_follows_every_kind_of_write_and_a_rebuild(st: Store) -> None:
    ids = fill(st)
    st.in_step()
    watched = {row[0] for row in st.watched()}
    assert ids["young_fact"] in watched and ids["prompt"] not in watched
    # "We use Memcached for session storage.", newer, retired it: no candidate any more
    assert ids["old_fact"] not in watched and ids["conflicting"] in watched
    assert ids["decided"] not in watched  # superseded by the later limit
    flagged = {row[0] for row in st.watched() if row[4]}
    assert ids["person"] in flagged
    store = st.store
    st.writer.run(lambda: store.forget(ids["redecided"], "local", None, "test"))
    st.in_step()
    assert ids["decided"] in {row[0] for row in st.watched()}  # current again
    st.writer.run(lambda: store.restore(ids["redecided"], "local", None, "test"))
    st.in_step()
    st.writer.run(lambda: store.update(ids["turn"], "local", "Python version is 3.11.", "test"))
    st.in_step()
    st.writer.run(lambda: store.set_supersedes(ids["young_fact"], ids["old_fact"], "local",
                                               "test"))
    st.in_step()
    st.writer.run(lambda: store.expire(ids["expiring"], "local", T0 - DAY, "test"))
    st.in_step()
    before = st.watched()
    st.writer.stop()
    derivation.rebuild_memory(store)
    assert st.watched() == before == expected_rows(store.db)


def test_verify_candidates_are_those_the_full_scan_found(st: Store) -> None:
    fill(st)
    conn = st.store.db
    for at in (T0, T0 - 150 * DAY, T0 + 400 * DAY):
        for user in ("local", "bob"):
            for limit in (1, 3, 5, 500):
                assert st.store.verify_candidates(user, at, aged(at), limit) == \
                    scanned(conn, user, at, aged(at), limit)
    assert st.store.verify_candidates("local", T0, aged(T0), 500)  # the case is not empty


def test_a_watch_lost_or_of_another_shape_is_made_again(st: Store) -> None:
    fill(st)
    conn = st.store.db
    with st.store.transaction():
        conn.execute("DELETE FROM record_watch")
        conn.execute("DROP TRIGGER record_watch_assertion_insert")
    assert ensure_watch(conn)
    st.in_step()
    assert not ensure_watch(conn)  # in shape: nothing written
