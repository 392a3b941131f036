"""Staleness over the real store (SQLite + Tantivy in tmp_path, the real writer and reader),
judged with a fixed clock: the lint report, the level every hit carries, confirmations by later
captures and by hand, and expired records kept out of the injection reader's searches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lintaid import derivation
from lintaid.capture.record import NewRecord
from lintaid.policy import staleness as policy
from lintaid.search import Reader, SearchRequest
from lintaid.store.memory import MemoryStore
from lintaid.store_lint import StoreJudge
from lintaid.writer import Writer
from lintaid_client import models

DAY = policy.DAY
T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z: "now" for every judgement here


class Memory:
    def __init__(self, root: Path) -> None:
        self.store = MemoryStore(root)
        self.writer = Writer(self.store)
        self.writer.start()
        self.reader = Reader(memory=self.store, wait_visible=self.writer.wait_visible)
        self.n = 0

    def add(self, text: str, days_before: float, *, kind: str = "note",
            user: str = "local") -> str:
        self.n += 1
        rec = NewRecord(content=text, kind=kind, source=f"test/{self.n}", user_id=user,
                        created_at=T0 - days_before * DAY)
        rid, event = self.writer.run(lambda: self.store.put(rec, "test"))
        assert event == "ADD"
        self.reader.settle(None)
        return rid

    def lint(self, at: float = T0, user: str | None = None) -> dict[str, dict]:
        return {r["id"]: r for r in self.reader.lint(user, at)["results"]}

    def close(self) -> None:
        self.writer.stop()
        self.store.close()


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(tmp_path)
    try:
        yield m
    finally:
        m.close()


def test_the_acceptance_cases_over_the_store(mem: Memory) -> None:
    works = mem.add("User works at Acme", 40)
    left = mem.add("User left Acme", 3)
    delhi = mem.add("User lives in Delhi", 60)
    mumbai = mem.add("User moved from Delhi to Mumbai", 2)
    name = mem.add("User's name is Priya", 730)
    turn = mem.add("Request: fix the flaky test\nResult: Fixed the race in test_backoff.", 30,
                   kind="capture")
    pin = mem.add("We pin Django 4.2", 200)
    rows = mem.lint()
    assert (rows[works]["level"], rows[works]["contradicted_by"]) == ("stale", left)
    assert rows[left]["level"] == "fresh" and rows[left]["contradicted_by"] is None
    assert (rows[delhi]["level"], rows[delhi]["contradicted_by"]) == ("stale", mumbai)
    assert rows[mumbai]["level"] == "fresh"
    assert (rows[name]["category"], rows[name]["level"]) == ("permanent", "fresh")
    assert (rows[turn]["category"], rows[turn]["level"]) == ("episodic", "expired")
    assert rows[pin]["category"] == "system_fact" and rows[pin]["level"] in policy.FLAGGED
    assert rows[pin]["confirmations"] == 0
    # ... and SessionStart is told to verify it (the turn record just goes).
    brief = StoreJudge(mem.store, policy.StalenessConfig()).needs_verifying(at=T0)
    named = [item["id"] for item in brief]
    assert pin in named and works in named and turn not in named and left not in named
    text = policy.verify_brief(brief)
    assert text is not None and pin in text and "We pin Django 4.2" in text


def test_a_later_capture_stating_the_same_claim_resets_the_clock(mem: Memory) -> None:
    pin = mem.add("We pin Django to 4.2.", 200)
    assert mem.lint()[pin]["level"] == "expired"
    capture = mem.add("Request: check the dependencies\nResult: Django is pinned to 4.2; "
                      "nothing to change.", 20, kind="capture")
    row = mem.lint()[pin]
    assert (row["confirmations"], row["age_days"]) == (1, 20)
    assert row["last_confirmed_at"] == T0 - 20 * DAY
    assert row["level"] == "fresh"  # 20 days * 0.01 - 0.08
    assert any(r.kind == "confirms" and r.other_id == capture
               for r in mem.reader.get(pin, None).relations)
    # judged as of before the capture, it was still expired
    assert mem.lint(T0 - 30 * DAY)[pin]["level"] == "expired"


def test_confirmations_pass_along_a_chain_of_records(mem: Memory) -> None:
    first = mem.add("The payments service uses Postgres.", 300)
    mem.add("Reminder: the payments service uses Postgres.", 200)
    mem.add("As agreed, the payments service uses Postgres.", 10)
    row = mem.lint()[first]
    assert (row["confirmations"], row["age_days"]) == (2, 10)


def test_confirm_by_hand_is_held_audited_and_counted(mem: Memory) -> None:
    pin = mem.add("We pin Django 4.2", 200)
    at = mem.writer.run(lambda: mem.store.confirm(pin, "local", "test", at=T0 - 5 * DAY))
    row = mem.lint()[pin]
    assert (row["confirmations"], row["age_days"], row["last_confirmed_at"]) == (1, 5, at)
    assert row["level"] == "fresh"
    assert [e["event"] for e in mem.reader.history(pin, None)] == ["ADD", "CONFIRM"]
    with pytest.raises(Exception, match="no memory"):
        mem.writer.run(lambda: mem.store.confirm(pin, "alice", "test"))


def test_forgetting_the_contradiction_restores_the_older_fact(mem: Memory) -> None:
    works = mem.add("User works at Acme", 40)
    left = mem.add("User left Acme", 3)
    assert mem.lint()[works]["level"] == "stale"
    mem.writer.run(lambda: mem.store.forget(left, "local", None, "test"))
    row = mem.lint()[works]
    assert row["contradicted_by"] is None and row["level"] == "fresh"


def test_other_users_neither_contradict_nor_appear(mem: Memory) -> None:
    works = mem.add("User works at Acme", 40)
    theirs = mem.add("User left Acme", 3, user="alice")
    assert mem.lint()[works]["contradicted_by"] is None
    assert theirs not in mem.lint()
    assert set(mem.lint(user="alice")) == {theirs}


def test_every_memory_hit_carries_its_staleness(mem: Memory) -> None:
    works = mem.add("User works at Acme", 40)
    mem.add("User left Acme", 3)
    hits = {h.id: h for h in mem.reader.search(SearchRequest("Acme", now=T0)).results}
    assert hits[works].staleness is not None
    assert (hits[works].staleness.level, hits[works].staleness.checked_at) == ("stale", T0)
    as_of = mem.reader.hydrate([works], as_of=T0)[works].staleness
    assert as_of is not None and as_of.level == "stale" and as_of.checked_at == T0
    again = models.Hit.from_dict(mem.reader.get(works, None).to_dict())
    assert isinstance(again.staleness, models.Staleness)


def test_the_injection_reader_leaves_expired_records_out(mem: Memory) -> None:
    old = [mem.add(f"Debugged the gateway retry bug number {i} today", 60) for i in range(8)]
    # no setting stated: a claim's fields would rank it above the debugging notes, and this
    # test needs them first (an expired record taking the top slot unless paged past)
    current = mem.add("The gateway retry runbook holds the rest of the gateway configuration "
                      "notes for operators.", 1)
    inject = Reader(memory=mem.store, wait_visible=mem.writer.wait_visible, hide_expired=True)
    query = "debugged gateway retry bug today"
    plain = mem.reader.search(SearchRequest(query, top_k=1, now=T0))
    assert plain.results[0].id in old
    got = inject.search(SearchRequest(query, top_k=1, now=T0))
    assert [h.id for h in got.results] == [current]
    assert got.hidden == len(old)
    history = inject.search(SearchRequest(query, top_k=1, history=True, now=T0))
    assert history.results[0].id in old
    # reconfirmed, one comes back
    mem.writer.run(lambda: mem.store.confirm(old[0], "local", "test", at=T0 - DAY))
    got = inject.search(SearchRequest(query, top_k=3, now=T0))
    assert old[0] in [h.id for h in got.results]


def test_staleness_inputs_follow_edits_and_equal_a_rebuild(mem: Memory) -> None:
    a = mem.add("Debugged the flaky test today", 10)
    b = mem.add("User works at Acme", 10)
    mem.add("We use Redis for session storage.", 5)
    assert mem.lint()[a]["category"] == "episodic"
    mem.writer.run(lambda: mem.store.update(a, "local", "Python version is 3.11.", "test"))
    mem.writer.run(lambda: mem.store.forget(b, "local", None, "test"))
    assert mem.lint()[a]["category"] == "system_fact"

    def snapshot() -> dict[str, set[tuple]]:
        conn = mem.store.db
        return {t: {tuple(r) for r in conn.execute(f"SELECT * FROM {t}")}
                for t in ("record_category", "assertions")}

    incremental = snapshot()
    assert not any(row[0] == b for row in incremental["assertions"])
    mem.writer.stop()
    derivation.rebuild_memory(mem.store)
    assert snapshot() == incremental
