"""The team tier's parts that need no server: the repository key, the password's places,
what the outbox notes and what leaves it. (``test_team.py`` runs the whole tier against a
real PostgreSQL server.)"""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lintaid import review
from lintaid.capture.record import NewRecord
from lintaid.derivation import derive_memory, rebuild_memory
from lintaid.policy.relations import pair_id
from lintaid.store.memory import MemoryStore
from lintaid.store.outbox import FORGET, LINK, RECORD, REJECT, RESTORE
from lintaid.team import secret
from lintaid.team.apply import apply, outgoing
from lintaid.team.config import TeamError, normalize_remote, repository_key
from lintaid.team.pg import Event, Row
from tests.redaction_corpus import GHP


@pytest.mark.parametrize("url", [
    "git@github.com:Acme/Widgets.git", "https://github.com/acme/widgets",
    "ssh://git@github.com/acme/widgets.git", "https://bob@GitHub.com/acme/widgets.git/",
    "ssh://git@github.com:22/acme/widgets.git",
])
def test_one_repository_however_its_remote_is_spelled(url: str) -> None:
    assert normalize_remote(url) == "github.com/acme/widgets"


def test_the_repository_key_is_the_root_commit_in_every_clone(tmp_path: Path) -> None:
    def git(cwd: Path, *args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@e", "-c", "user.name=T", *args], cwd=cwd,
                       check=True, capture_output=True)

    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q")
    with pytest.raises(TeamError, match="--repo-key"):
        repository_key(origin)  # no commit, no remote
    git(origin, "commit", "-q", "--allow-empty", "-m", "first")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "clone"))
    git(tmp_path / "clone", "commit", "-q", "--allow-empty", "-m", "more")
    key = repository_key(origin)
    assert key.startswith("git:") and repository_key(tmp_path / "clone") == key
    assert repository_key(tmp_path / "clone", "remote") == f"remote:{normalize_remote(str(origin))}"
    assert repository_key(origin, "acme/widgets") == "key:acme/widgets"
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "commit", "-q", "--allow-empty", "-m", "another project")
    assert repository_key(other) != key


def test_a_password_goes_to_the_pgpass_file_and_is_found_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    passfile = tmp_path / "pgpass"
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    for name in ("PGPASSWORD", "LINTAID_TEAM_PASSWORD", "PGUSER", "PGHOST", "PGPORT"):
        monkeypatch.delenv(name, raising=False)
    passfile.write_text("otherhost:5432:db:alice:keep-me\n")
    params = {"host": "db.example.com", "port": "5433", "dbname": "team", "user": "alice"}
    assert secret.source(params)[0].startswith("none")
    where = secret.keep(params, "s3:cr\\et")
    assert str(passfile) in where and passfile.stat().st_mode & 0o077 == 0
    assert secret.source(params) == (f"the pgpass file {passfile}", None)
    secret.keep(params, "new")  # the entry for the same server is replaced, others kept
    lines = passfile.read_text().splitlines()
    assert lines == ["otherhost:5432:db:alice:keep-me", "db.example.com:5433:team:alice:new"]
    monkeypatch.setenv("PGPASSWORD", "x")
    assert secret.source(params) == ("the environment (PGPASSWORD)", None)
    monkeypatch.setenv("LINTAID_TEAM_PASSWORD", "y")
    assert secret.source(params) == ("the environment (LINTAID_TEAM_PASSWORD)", "y")


def test_the_outbox_notes_what_is_shared_and_only_that(tmp_path: Path) -> None:
    (tmp_path / ".lint-ai").mkdir()
    store = MemoryStore(tmp_path)
    try:
        with store.transaction():
            before, _ = store.put(NewRecord("Noted before joining.", "note", "cli"), "cli")
        store.outbox.enabled = True
        store.outbox.private_clients = frozenset({"cursor"})
        with store.transaction():
            shared, _ = store.put(NewRecord("The queue uses RabbitMQ.", "note", "cli"), "cli")
            newer, _ = store.put(NewRecord("The queue uses Kafka.", "note", "cli"), "cli")
            store.put(NewRecord("User prompt: hi", "prompt", "cc://s/prompt",
                                provider="claude-code"), "hook")
            store.put(NewRecord("Mine alone.", "note", "cli", private=True), "cli")
            store.put(NewRecord("Carol's row.", "note", "api", user_id="carol"), "api")
            store.put(NewRecord("Cursor saw this.", "capture", "cursor://s/outcome",
                                provider="cursor"), "hook")
            with store.outbox.quiet():
                pulled, _ = store.put(NewRecord("Bob said so.", "note", "team", member="bob",
                                                explicit_id="mbob1"), "team:bob")
            store.set_supersedes(newer, shared, "local", "cli")
            store.forget(pulled, "local", "wrong", "cli")  # a decision on Bob's record: shared
        rows = store.outbox.pending(100)
        assert [(r["kind"], r["target"]) for r in rows] == [
            (RECORD, shared), (RECORD, newer), (LINK, shared), (FORGET, pulled)]
        assert rows[2]["other"] == newer
        # Joining queues what the store held before; forgotten and pulled records stay out.
        with store.transaction():
            assert store.outbox.backfill() == 4  # before, shared, newer, and the link
            store.forget(newer, "local", None, "cli")
        out = outgoing(store.outbox.pending(100), origin="o1")
        sent = [(e.kind, e.record_id) for e in out.events]
        assert (RECORD, before) in sent and (RECORD, newer) not in sent
        assert out.withheld == 2  # newer was forgotten before it left, twice queued
        assert all(e.body.get("content") != "Bob said so." for e in out.events)
        with store.transaction():
            store.outbox.delivered(out.through)
        assert store.outbox.depth() == (0, None)
    finally:
        store.close()


def as_rows(events: list[Event]) -> list[Row]:
    """The rows the server hands over for ``events``."""
    return [Row.of(e) for e in events]


def _store(root: Path, *, joined: bool) -> MemoryStore:
    (root / ".lint-ai").mkdir(parents=True)
    store = MemoryStore(root)
    store.outbox.enabled = joined
    return store


def _statuses(store: MemoryStore) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in store.db.execute(
        "SELECT claim_id, status FROM claim_state ORDER BY claim_id")]


def test_a_rejection_and_a_restore_are_sent_and_held_alike_on_a_teammates_store(
        tmp_path: Path) -> None:
    """Alice rejects a conflict and restores a record she forgot; the events her outbox
    sends are applied to Bob's store as ``apply`` applies what is pulled."""
    alice, bob = _store(tmp_path / "a", joined=True), _store(tmp_path / "b", joined=True)
    try:
        with alice.transaction():
            dan, _ = alice.put(NewRecord("Dan owns the payments service.", "note", "cli",
                                         created_at=1_700_000_000.0), "cli")
            eve, _ = alice.put(NewRecord("Eve owns the payments service.", "note", "cli",
                                         created_at=1_700_000_000.0), "cli")
            derive_memory(alice)
        (item,) = review.queue(alice.reviews, None, 10)
        with alice.transaction():
            review.decide(alice, item.id, "reject", None, "cli", f"shared; token {GHP}")
            alice.forget(eve, "local", None, "cli")
            alice.restore(eve, "local", "it was right", "cli")
            derive_memory(alice)
        rows = alice.outbox.pending(100)
        assert [(r["kind"], r["target"]) for r in rows] == [
            (RECORD, dan), (RECORD, eve), (REJECT, item.older.record_id), (FORGET, eve),
            (RECORD, eve), (RESTORE, eve)]
        out = outgoing(rows, origin="o-alice")
        rejection = out.events[2]
        assert rejection.other_id == item.newer.record_id
        assert rejection.body["item_id"] == item.id and GHP not in rejection.body["reason"]
        assert out.events[5].body == {"reason": "it was right"}
        events = [dataclasses.replace(e, member="alice", seq=n)
                  for n, e in enumerate(out.events, 1)]
        assert out.events[1].event_id == out.events[4].event_id  # one record on the server

        with bob.transaction():
            done = apply(bob, as_rows(events), "cursor", len(events))
            derive_memory(bob)
        assert (done.applied, done.skipped, done.refused) == (5, 1, 0)  # eve again: skipped
        assert review.queue(bob.reviews, None, 10) == []
        held = bob.reviews.decisions([item.id])[item.id]
        assert held["decision"] == "reject" and held["actor"] == "team:alice"
        assert GHP not in held["reason"]
        statuses = _statuses(bob)
        assert {s for _, s in statuses} == {"current"} and len(statuses) == 2
        assert bob.get_rows([eve])[eve]["forgotten_at"] is None
        assert bob.outbox.depth()[0] == 0  # nothing pulled is sent again
        with bob.transaction():  # the same rejection again changes nothing
            again = apply(bob, as_rows([events[2], events[5]]), "cursor", len(events))
        assert (again.applied, again.skipped, again.refused) == (0, 2, 0)
        rebuild_memory(bob)
        assert _statuses(bob) == statuses  # incremental == rebuild
        assert review.queue(bob.reviews, None, 10) == []
        # Joining again queues the rejection once more, as the same event (the server keeps
        # one copy).
        with alice.transaction():
            alice.outbox.delivered(out.through)
            alice.outbox.backfill()
        again_out = outgoing(alice.outbox.pending(100), origin="o-alice")
        (requeued,) = [e for e in again_out.events if e.kind == REJECT]
        assert requeued.event_id == rejection.event_id and requeued.body == rejection.body
    finally:
        alice.close()
        bob.close()


def test_malformed_rejections_and_restores_are_refused_unknown_records_skipped(
        tmp_path: Path) -> None:
    store = _store(tmp_path, joined=False)
    try:
        with store.transaction():
            a, _ = store.put(NewRecord("Dan owns the payments service.", "note", "cli"), "cli")
            b, _ = store.put(NewRecord("Eve owns the payments service.", "note", "cli"), "cli")
        def pair(older: str, newer: str) -> dict[str, Any]:
            return {"item_id": pair_id("project", "payments service", "owner",
                                       (newer, "eve"), (older, "dan")),
                    "kind": "conflicts_with", "confidence": 0.75, "scope": "project",
                    "subject": "payments service", "predicate": "owner",
                    "newer_value": "eve", "older_value": "dan"}

        good = pair(a, b)

        def event(kind: str, target: str, other: str | None = None,
                  body: dict[str, Any] | None = None) -> Event:
            body = body or {}
            key = f"{target}{other}{sorted(body.items())}".encode()
            return Event(event_id="e" + hashlib.sha256(key).hexdigest()[:31], kind=kind,
                         record_id=target, other_id=other, stamp=1.0, body=body,
                         member="alice")

        refused = [
            event(REJECT, a, None, good),  # no second record
            event(REJECT, a, b, {**good, "item_id": "rv" + "0" * 22}),  # not this pair
            event(REJECT, b, a, good),  # the sides swapped: the values no longer match
            event(REJECT, a, b, {**good, "confidence": "high"}),
            event(REJECT, a, b, {k: v for k, v in good.items() if k != "subject"}),
            event(REJECT, a, b, {**good, "reason": ["not", "text"]}),
            event(RESTORE, a, None, {"reason": 7}),
        ]
        skipped = [event(REJECT, "nothere", b, pair("nothere", b)), event(RESTORE, "nothere"),
                   event(RESTORE, a)]  # not forgotten: nothing to lift
        with store.transaction():
            done = apply(store, as_rows([*refused, *skipped]), "cursor", 1)
        assert (done.applied, done.skipped, done.refused) == (0, len(skipped), len(refused))
        assert store.reviews.decisions([good["item_id"]]) == {}
        with store.transaction():
            assert apply(store, as_rows([event(REJECT, a, b, good)]), "cursor", 2).applied == 1
        assert store.reviews.decisions([good["item_id"]])[good["item_id"]]["at"] == 1.0
    finally:
        store.close()
