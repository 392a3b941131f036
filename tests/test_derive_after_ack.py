"""A write is acknowledged once its record is durable; its derivation follows (issue 26).

The writer commits a batch's jobs in one transaction and resolves their futures with a
read-your-writes token; the derivation of what they changed (claims, relations, statuses,
staleness) runs next on the writer thread in a transaction of its own. A read that passes the
token waits for that derivation (and the index), so it never sees a superseded record as
current. The records awaiting derivation are held in memory.db (``pending_derivation``): a
daemon closed between the two transactions derives them at its next start, and a derivation
that fails leaves them pending without failing the acknowledged write.

Real SQLite and Tantivy stores, the real writer and the real in-process daemon; derivation is
held back or made to fail by wrapping the real ``derive_memory`` the writer calls. No timing
is asserted: the tests wait on events.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lintaid import writer as writer_module
from lintaid.capture.record import NewRecord
from lintaid.derivation import derive_memory
from lintaid.search import Reader, SearchRequest
from lintaid.store.memory import MemoryStore
from lintaid.writer import Writer
from tests.conftest import Served

OLD = "We use Kaniko for image builds."
NEW = "Image builds now use BuildKit instead of Kaniko."


def note(text: str) -> NewRecord:
    return NewRecord(content=text, kind="note", source="test")


class Gate:
    """Wraps the real ``derive_memory`` the writer calls: while ``closed``, a derivation pass
    signals ``entered`` and waits for ``open()``; ``fail`` makes the next passes raise (in the
    derivation's transaction, after the real derivation ran, so it is rolled back)."""

    def __init__(self) -> None:
        self.closed = False
        self.fail = False
        self.entered = threading.Event()
        self.failed = threading.Event()
        self.passes: list[set[str]] = []  # what each derivation pass found pending
        self._release = threading.Event()

    def close(self) -> None:
        self.entered.clear()
        self._release.clear()
        self.closed = True

    def open(self) -> None:
        self.closed = False
        self._release.set()

    def __call__(self, store: MemoryStore, documents: Any = None) -> int:
        if self.closed:
            self.entered.set()
            assert self._release.wait(60)
        self.passes.append(store.changed_ids())
        done = derive_memory(store, documents)
        if self.fail:
            self.failed.set()
            raise RuntimeError("derivation failed (test)")
        return done


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    g = Gate()
    monkeypatch.setattr(writer_module, "derive_memory", g)
    yield g
    g.open()  # a test that failed with the gate closed must not leave the writer waiting


@pytest.fixture
def store_writer(tmp_path: Path) -> Iterator[tuple[MemoryStore, Writer]]:
    store = MemoryStore(tmp_path / "proj")
    writer = Writer(store)
    writer.start()
    try:
        yield store, writer
    finally:
        writer.stop()
        store.close()


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()
    return thread, out


def test_the_acknowledgement_comes_before_derivation_and_the_token_waits_for_it(
        store_writer: tuple[MemoryStore, Writer], gate: Gate) -> None:
    store, writer = store_writer
    reader = Reader(memory=store, wait_visible=writer.wait_visible,
                    wait_derived=writer.wait_derived)
    old, _ = writer.run(lambda: store.put(note(OLD), "test"))
    assert reader.get(old, None).status == "current"
    gate.closed = True
    future = writer.submit(lambda: store.put(note(NEW), "test"))
    new, event = future.result(30)  # acknowledged while its derivation is held back
    token = future.token  # type: ignore[attr-defined]
    assert event == "ADD" and gate.entered.wait(30)
    # Durable and acknowledged, not derived yet: it waits in pending_derivation.
    assert new in store.changed_ids()
    assert not writer.wait_visible(token, timeout=0)
    assert not writer.wait_derived(token, timeout=0)
    # Injection (UserPromptSubmit, SessionStart) settles on every write it may recall: it
    # waits for this one's derivation too, so it never recalls the older one as current.
    assert not reader.settle(None, 0, recall_only=True)
    # Reads that pass the token wait for the derivation; they see the older one retired.
    got, got_out = in_thread(lambda: (reader.settle_derived(token, 60), reader.get(old, None)))
    searched, search_out = in_thread(lambda: (reader.settle(token, 60), reader.search(
        SearchRequest(query="image builds Kaniko BuildKit", top_k=5, history=True))))
    gate.open()
    got.join(60)
    searched.join(60)
    settled, hit = got_out[0]
    assert settled and hit.status == "superseded" and hit.superseded_by == new
    settled, result = search_out[0]
    statuses = {h.id: h.status for h in result.results}
    assert settled and statuses[old] == "superseded" and statuses[new] == "current"
    assert reader.get(new, None).claims  # the new record's claims are there with it
    assert reader.settle(None, 60, recall_only=True)
    assert store.changed_ids() == set()


def test_jobs_waiting_after_a_commit_are_acknowledged_first_and_derived_in_one_pass(
        store_writer: tuple[MemoryStore, Writer], gate: Gate) -> None:
    store, writer = store_writer
    hold, running = threading.Event(), threading.Event()
    first = writer.submit(lambda: (running.set(), hold.wait(30),
                                   store.put(note(OLD), "test"))[2])
    assert running.wait(30)  # the writer is in the first batch: the next ones queue up
    queued = [writer.submit(lambda text=text: store.put(note(text), "test"))
              for text in (NEW, "We deploy with Helm.", "Deploys go out on Tuesdays.")]
    hold.set()
    ids = [first.result(30)[0], *(f.result(30)[0] for f in queued)]
    writer.run(lambda: None)  # and its derivation
    # Two batches (the first job, then the three queued behind it), one derivation pass for
    # both; the older record is retired by the newer one all the same.
    assert set(ids) in gate.passes
    reader = Reader(memory=store, wait_visible=writer.wait_visible)
    hit = reader.get(ids[0], None)
    assert hit.status == "superseded" and hit.superseded_by == ids[1]


def test_a_token_from_an_acknowledged_add_sees_the_derived_state_through_the_daemon(
        served: Served, gate: Gate) -> None:
    with served.memory() as mem:
        old = mem.add(OLD)["results"][0]["id"]
        assert mem.get(old).status == "current"  # waits for its derivation (the token)
        gate.closed = True
        new = mem.add(NEW)["results"][0]["id"]  # answered while its derivation is held
        assert gate.entered.wait(30)
        # The client passes the add's token: its get waits for the derivation.
        got, out = in_thread(lambda: mem.get(old))
        gate.open()
        got.join(60)
        assert out[0].status == "superseded" and out[0].superseded_by == new
        hits = mem.search("image builds", history=True)["results"]
        assert {h["id"]: h["status"] for h in hits}[old] == "superseded"
        gate.close()
        third = mem.add("We deploy with Helm.")["results"][0]["id"]
        assert gate.entered.wait(30)
    # A request without a token (a separate `lintaid get`) waits for what is pending too:
    # the record comes with its claims.
    got, out = in_thread(lambda: served.call("get", {"id": third}))
    gate.open()
    got.join(60)
    assert out[0]["claims"]
    assert served.json("get", old)["status"] == "superseded"


def test_records_pending_derivation_survive_a_store_closed_between_the_two_transactions(
        tmp_path: Path) -> None:
    root = tmp_path / "proj"
    store = MemoryStore(root)
    writer = Writer(store)
    writer.start()
    old, _ = writer.run(lambda: store.put(note(OLD), "test"))
    writer.stop()
    # The jobs' transaction commits; the daemon is killed before the derivation's.
    with store.transaction():
        new, _ = store.put(note(NEW), "test")
    store.close()

    store = MemoryStore(root)
    try:
        assert store.changed_ids() == {new}
        writer = Writer(store)
        writer.start()  # derives what was left pending before it serves
        try:
            assert store.changed_ids() == set()
            reader = Reader(memory=store, wait_visible=writer.wait_visible)
            hit = reader.get(old, None)
            assert hit.status == "superseded" and hit.superseded_by == new
            assert reader.get(new, None).claims
            assert reader.settle(None, 60)
            hits = reader.search(SearchRequest(query="image builds", top_k=5, history=True))
            assert {h.id: h.status for h in hits.results}[old] == "superseded"
        finally:
            writer.stop()
    finally:
        store.close()


def test_a_failed_derivation_keeps_the_write_acknowledged_and_its_records_pending(
        tmp_path: Path, gate: Gate) -> None:
    root = tmp_path / "proj"
    store = MemoryStore(root)
    writer = Writer(store)
    writer.start()
    try:
        old, _ = writer.run(lambda: store.put(note(OLD), "test"))
        gate.fail = True
        future = writer.submit(lambda: store.put(note(NEW), "test"))
        new, event = future.result(30)
        assert event == "ADD" and future.exception() is None
        assert gate.failed.wait(30)
        # The next job runs after the failed pass: the records are still pending.
        failing = writer.submit(lambda: store.changed_ids())
        assert new in failing.result(30)
        reader = Reader(memory=store, wait_visible=writer.wait_visible)
        assert reader.get(new, None).content == NEW  # durable, acknowledged
        assert reader.get(old, None).status == "current"  # not derived: rolled back
        assert not writer.wait_derived(future.token, timeout=0)  # type: ignore[attr-defined]
        gate.fail = False
        # The next batch's derivation takes them again.
        writer.run(lambda: None)
        assert store.changed_ids() == set()
        assert writer.wait_derived(future.token, timeout=0)  # type: ignore[attr-defined]
        hit = reader.get(old, None)
        assert hit.status == "superseded" and hit.superseded_by == new
    finally:
        writer.stop()
        store.close()

    # A derivation that fails on the last batch before a stop: the next start derives it.
    store = MemoryStore(root)
    writer = Writer(store)
    writer.start()
    gate.fail = True
    try:
        third, _ = writer.submit(lambda: store.put(note("Image builds now use Podman."),
                                                   "test")).result(30)
    finally:
        writer.stop()
        store.close()
    gate.fail = False
    store = MemoryStore(root)
    try:
        assert third in store.changed_ids()
        writer = Writer(store)
        writer.start()
        writer.stop()
        assert store.changed_ids() == set()
    finally:
        store.close()
