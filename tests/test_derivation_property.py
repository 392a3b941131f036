"""Incremental derivation equals a full rebuild, for memory records and workspace files alike.

Memory steps include review decisions: rejecting an inferred relation (the pair is never
related again) and accepting one (an explicit link), both held state a rebuild must honour.

Random steps drive the real stores on real SQLite (memory records through ``MemoryStore``,
files through ``WorkspaceStore``) and derive after each one as the writer does. After every
step the derived tables are compared with a full rebuild (the engine over every record from
empty tables, in a random batch size) taken inside a transaction that is then rolled back, so
the next step goes on from the incremental state. Each record whose derived state changed
must also have been queued for re-indexing. Each example runs in a fresh temporary folder
(RAM-backed where the machine has one: see ``_ram_folder``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from lintaid import review
from lintaid.capture.record import NewRecord
from lintaid.derivation import MemoryPolicy, WorkspacePolicy, apply_files, derive_memory
from lintaid.policy import pair_id, rebuild
from lintaid.store.memory import MemoryStore, StoreError
from lintaid.store.workspace import WorkspaceStore
from lintaid.workspace.service import file_update
from lintaid_client import protocol

# 30 random histories per property and run (not derandomized: each CI run draws new ones,
# so the properties meet new histories run after run at a fixed cost to the suite).
SETTINGS = settings(max_examples=30, deadline=None, derandomize=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TABLES = {
    "claims": "SELECT * FROM claims",
    "relations": "SELECT * FROM relations",
    "claim_state": "SELECT * FROM claim_state",
    "record_state": "SELECT * FROM record_state",
}


def snapshot(conn: sqlite3.Connection) -> dict[str, set[tuple[Any, ...]]]:
    return {name: {tuple(r) for r in conn.execute(sql)} for name, sql in TABLES.items()}


def states(conn: sqlite3.Connection) -> dict[str, set[tuple[Any, ...]]]:
    """Per record: its record state and its claims' statuses (what its index entry shows)."""
    out: dict[str, set[tuple[Any, ...]]] = {}
    for r in conn.execute("SELECT * FROM record_state"):
        out.setdefault(r["record_id"], set()).add(("record", *tuple(r)))
    for r in conn.execute("SELECT c.record_id, c.claim_id, c.start, c.end, s.status"
                          " FROM claims c LEFT JOIN claim_state s USING (claim_id)"):
        out.setdefault(r["record_id"], set()).add(("claim", *tuple(r)))
    return out


def full_rebuild(conn: sqlite3.Connection, run: Callable[[], None]) -> dict[str, set]:
    """The derived tables as a rebuild from empty tables leaves them; then rolled back."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table in TABLES:
            conn.execute(f"DELETE FROM {table}")
        run()
        return snapshot(conn)
    finally:
        conn.execute("ROLLBACK")


def changed_states(before: dict[str, set], after: dict[str, set]) -> set[str]:
    return {rid for rid in before.keys() | after.keys() if before.get(rid) != after.get(rid)}


def _ram_folder() -> str | None:
    """A RAM-backed folder for the examples' stores, when the machine has one: what is tested
    here is derivation, and on a disk each fresh store spends most of its time in fsyncs
    (memory.db's first commit, each Tantivy commit: ~85 ms an example here, ~15 ms on tmpfs).
    The same SQLite and Tantivy code runs either way."""
    shm = Path("/dev/shm")
    try:
        usable = shm.is_dir() and os.access(shm, os.W_OK) and shutil.disk_usage(shm).free > 2**28
    except OSError:
        usable = False
    return str(shm) if usable else None


RAM = _ram_folder()


@contextlib.contextmanager
def fresh_folder() -> Iterator[Path]:
    tmp = tempfile.mkdtemp(prefix="lintaid-prop-", dir=RAM)
    try:
        root = Path(tmp) / "proj"
        root.mkdir()
        yield root
    finally:
        _remove(tmp)


def _remove(folder: str) -> None:
    """Remove an example's folder. A closed store's Tantivy reader may still reload after its
    last commit (taking ``.tantivy-meta.lock`` in the index folder) while the folder is being
    removed; that is no failure of the example, so the removal is tried again."""
    for _ in range(100):
        try:
            shutil.rmtree(folder)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)
    shutil.rmtree(folder)


# ---------------------------------------------------------------------------------------------
# Memory records

SENTENCES = [
    "Gateway timeout retry attempts: 5.",
    "Gateway timeout retry attempts: 2.",
    "retry_limit: 3",
    "retry_limit = 5",
    "Update: retry_limit: 7",
    "We use Redis for session storage.",
    "Use Memcached for session storage instead of Redis.",
    "We no longer use Redis.",
    "The platform team owns the control surface.",
    "The reliability team owns the control surface.",
    "We switched from pip to uv.",
    "The deployment strategy uses blue-green releases.",
    "Claude Code outcome\nRequest: store sessions\nResult: We use Redis for session storage. "
    "Added a health check endpoint for the load balancer.",
    "Always start function names with 'x_'.",
    "From now on, start function names with 'fn_'.",
    "Nothing to see here, just notes about lunch.",
    "Deploy notes for the gateway.",  # no claims: only an explicit link can retire these
    "New deploy notes.",
    # an actor beside a purpose: a weak claim, retired (with its sentence) by naming
    "The gateway uses requests for outbound HTTP calls.",
    "The gateway now uses httpx instead of requests.",
    "We use httpx for outbound HTTP calls.",
]
index = st.integers(0, 30)
add = st.tuples(st.just("add"), st.sampled_from(SENTENCES),
                st.sampled_from(["capture", "note", "prompt"]),
                st.sampled_from(["local", "local", "local", "alice"]),
                st.integers(0, 4), st.one_of(st.none(), st.integers(0, 4)),
                st.one_of(st.none(), st.none(), index))
memory_op = st.one_of(
    add, add, add, add,
    st.tuples(st.just("again"), index, index),  # the same record once more, superseding another
    st.tuples(st.just("update"), index, st.sampled_from(SENTENCES)),
    st.tuples(st.just("forget"), index),
    st.tuples(st.just("supersede"), index, index),
    st.tuples(st.sampled_from(["reject", "reject", "accept"]), index),  # a review decision
)
memory_steps = st.lists(st.lists(memory_op, min_size=1, max_size=3), min_size=1, max_size=14)


class MemoryRun:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.added: list[NewRecord] = []  # every record put, in order

    def ids(self) -> list[str]:
        return [r.record_id for r in self.added]

    def pick(self, i: int) -> NewRecord | None:
        return self.added[i % len(self.added)] if self.added else None

    def job(self, op: tuple[Any, ...]) -> None:
        store, kind = self.store, op[0]
        if kind == "add":
            _, text, rkind, user, at, valid, sup = op
            target = self.pick(sup) if sup is not None else None
            rec = NewRecord(content=text, kind=rkind, source=f"test/{len(self.added)}",
                            user_id=user, created_at=1_000_000.0 + 10 * at,
                            valid_at=None if valid is None else 1_000_000.0 + 10 * valid,
                            supersedes=target.record_id if target else None)
            store.put(rec, "test")
            self.added.append(rec)
        elif kind == "again" and self.added:
            rec, target = self.pick(op[1]), self.pick(op[2])
            assert rec is not None and target is not None
            again = NewRecord(**{**rec.__dict__, "supersedes": target.record_id})
            store.put(again, "test")
        elif kind == "update" and self.added:
            rec = self.pick(op[1])
            assert rec is not None
            store.update(rec.record_id, rec.user_id, op[2], "test")
        elif kind == "forget" and self.added:
            rec = self.pick(op[1])
            assert rec is not None
            store.forget(rec.record_id, rec.user_id, None, "test")
        elif kind == "supersede" and self.added:
            new, old = self.pick(op[1]), self.pick(op[2])
            assert new is not None and old is not None
            store.set_supersedes(new.record_id, old.record_id, new.user_id, "test")
        elif kind in ("reject", "accept"):
            rows = list(store.db.execute(
                "SELECT r.kind, c.scope, c.subject, c.predicate, c.record_id AS a, c.value AS av,"
                " o.record_id AS b, o.value AS bv, rec.user_id FROM relations r"
                " JOIN claims c ON c.claim_id = r.source_claim"
                " JOIN claims o ON o.claim_id = r.target_claim"
                " JOIN records rec ON rec.id = c.record_id"
                " WHERE r.chain IS NOT NULL AND r.kind != 'confirms' ORDER BY r.rowid"))
            if rows:
                row = rows[op[1] % len(rows)]
                item = pair_id(row["scope"], row["subject"], row["predicate"],
                               (row["a"], row["av"]), (row["b"], row["bv"]))
                review.decide(store, item, kind, row["user_id"], "test", None)
                event(f"{kind} held ({row['kind']})")

    def batch(self, ops: list[tuple[Any, ...]]) -> None:
        """As the writer runs a batch: each job in a savepoint, then derivation, one commit."""
        with self.store.transaction():
            for op in ops:
                try:
                    with self.store.savepoint():
                        self.job(op)
                except (StoreError, protocol.RemoteError):
                    pass  # not found (forgotten, another user's), a self link, a decided item
            derive_memory(self.store)


# Decisions need relations to decide on: a pool where every sentence sits on one of two chains,
# one user, few distinct times (equal times conflict), and decisions as often as adds.
CHAINED = [
    "Gateway timeout retry attempts: 5.",
    "Gateway timeout retry attempts: 2.",
    "Gateway timeout retry attempts: 7.",
    "Dan owns the payments service.",
    "Eve owns the payments service.",
    "Dan owns the payments service. Eve owns the payments service.",
]
chained_add = st.tuples(st.just("add"), st.sampled_from(CHAINED),
                        st.sampled_from(["capture", "note"]), st.just("local"),
                        st.integers(0, 2), st.one_of(st.none(), st.integers(0, 2)), st.none())
review_op = st.one_of(
    chained_add, chained_add,
    st.tuples(st.sampled_from(["reject", "accept"]), index),
    st.tuples(st.just("forget"), index),
    st.tuples(st.just("update"), index, st.sampled_from(CHAINED)),
)
review_steps = st.lists(st.lists(review_op, min_size=1, max_size=3), min_size=2, max_size=12)


def _max_seq(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COALESCE(MAX(seq), 0) FROM pending_index").fetchone()[0]


@SETTINGS
@given(memory_steps, st.sampled_from([1000, 1000, 3, 1]))
def test_memory_records_incremental_equals_full_rebuild(steps: list[list[tuple]],
                                                        batch: int) -> None:
    check_memory_steps(steps, batch)


@SETTINGS
@given(review_steps, st.sampled_from([1000, 1000, 2, 1]))
def test_review_decisions_incremental_equals_full_rebuild(steps: list[list[tuple]],
                                                          batch: int) -> None:
    check_memory_steps(steps, batch)


def check_memory_steps(steps: list[list[tuple]], batch: int) -> None:
    with fresh_folder() as root:
        store = MemoryStore(root)
        try:
            run = MemoryRun(store)
            conn = store.db
            for ops in steps:
                before, seq = states(conn), _max_seq(conn)
                run.batch(ops)
                after = states(conn)
                got = snapshot(conn)
                want = full_rebuild(conn, lambda: rebuild(MemoryPolicy(store),
                                                          store.live_ids(), batch))
                assert got == want
                queued = {r[0] for r in conn.execute(
                    "SELECT record_id FROM pending_index WHERE seq > ?", (seq,))}
                assert changed_states(before, after) <= queued
        finally:
            store.close()


# ---------------------------------------------------------------------------------------------
# Workspace files

PATHS = ["docs/a.md", "docs/b.md", "docs/c.md", "c.md", "docs/sub/d.md", "docs/notes.txt",
         "src/code.py"]
BODIES = [
    "# Gateway Retry Policy\n\nGateway timeout retry attempts: {n}.\n",
    "# Gateway Retry Policy\n\nGateway timeout retry attempts: {n}.\n\nExtra rationale stays "
    "relevant for operators.\n",
    "# Cache\n\nWe use {tech} for caching.\n",
    "The {team} team owns the control surface.\n",
    "# Configuration\n\nRetry attempts: {n}.\n",
    "# Notes\n\nNothing to claim here.\n",
    "RETRY_ATTEMPTS = {n}\n",
]
# Targets resolve beside the file first, then from the root; the first that exists wins, so a
# nearer target appearing or vanishing re-resolves a link whose own file did not change.
LINKS = [None, None, "a.md", "c.md", "c.md", "/c.md", "sub/d.md", "../c.md", "missing.md",
         ["b.md", "a.md"], ["b.md", "a.md"], ["missing.md", "c.md"]]
MTIMES = [1_735_689_600, 1_735_689_610, 1_767_225_600]
write = st.tuples(st.just("write"), st.sampled_from(PATHS), st.sampled_from(BODIES),
                  st.integers(1, 3), st.sampled_from(["redis", "memcached"]),
                  st.sampled_from(["platform", "reliability"]), st.sampled_from(LINKS),
                  st.sampled_from(MTIMES))
file_op = st.one_of(
    write, write,
    st.tuples(st.just("touch"), st.sampled_from(PATHS), st.sampled_from(MTIMES)),
    st.tuples(st.just("delete"), st.sampled_from(PATHS)),
)
file_steps = st.lists(st.lists(file_op, min_size=1, max_size=3), min_size=1, max_size=12)


def _frontmatter(link: str | list[str] | None) -> str:
    if link is None:
        return ""
    if isinstance(link, str):
        return f"---\nsupersedes: {link}\n---\n"
    return "---\nsupersedes:\n" + "".join(f"  - {x}\n" for x in link) + "---\n"


class WorkspaceRun:
    def __init__(self, store: WorkspaceStore) -> None:
        self.store = store
        self.files: dict[str, tuple[bytes, int]] = {}  # path -> (content, mtime in seconds)

    def step(self, ops: list[tuple[Any, ...]]) -> None:
        touched: dict[str, bool] = {}  # path -> still there
        for op in ops:
            kind, path = op[0], op[1]
            if kind == "write":
                _, _, body, n, tech, team, link, mtime = op
                text = body.format(n=n, tech=tech, team=team)
                if path.endswith(".md"):
                    text = _frontmatter(link) + text
                self.files[path] = (text.encode(), mtime)
            elif kind == "touch" and path in self.files:
                self.files[path] = (self.files[path][0], op[2])
            elif kind == "delete":
                self.files.pop(path, None)
            touched[path] = path in self.files
        updates = [file_update(p, self.files[p][0], len(self.files[p][0]),
                               self.files[p][1] * 10**9, read_at=2e9)
                   for p, present in touched.items() if present]
        removed = [p for p, present in touched.items() if not present]
        apply_files(self.store, updates, removed)


@SETTINGS
@given(file_steps, st.sampled_from([1000, 1000, 2, 1]))
def test_workspace_files_incremental_equals_full_rebuild(steps: list[list[tuple]],
                                                         batch: int) -> None:
    with fresh_folder() as root:
        store = WorkspaceStore(root, derived_version="test")
        try:
            run = WorkspaceRun(store)
            conn = store.derived.conn
            for ops in steps:
                conn.execute("DELETE FROM pending_index")
                before = states(conn)
                run.step(ops)
                after = states(conn)
                got = snapshot(conn)
                want = full_rebuild(conn, lambda: rebuild(WorkspacePolicy(store),
                                                          store.policy_paths(), batch))
                assert got == want
                queued = {r[0] for r in conn.execute("SELECT path FROM pending_index")}
                assert changed_states(before, after) - queued <= set(PATHS) - set(run.files)
        finally:
            store.close()


# ---------------------------------------------------------------------------------------------
# Documents and memory interleaved: memory chains hold the documents' standing claims

MIXED_SENTENCES = [
    "Artifact bucket: s3://acme-alpha.",
    "Request: Which bucket?\nResult: Artifact bucket: s3://acme-beta.",
    "The artifact bucket is now s3://acme-gamma.",
    "The gateway uses requests for outbound HTTP calls.",
    "The gateway now uses httpx instead of requests.",
    "We use httpx for outbound HTTP calls.",
    "The gateway uses requests again instead of httpx.",
    "The gateway uses Redis for caching.",
    "Gateway timeout retry attempts: 2.",
    "Deploy notes for the gateway.",
]
DOC_BODIES = [
    "# ADR: artifact storage\n\nArtifact bucket: s3://acme-{v}.\n",
    "# Gateway\n\nThe gateway uses {lib} for outbound HTTP calls.\n",
    "# Gateway client\n\nThe gateway now uses {lib} instead of requests.\n",
    "# Retry Policy\n\nGateway timeout retry attempts: {n}.\n",
    "# Notes\n\nNothing to claim here.\n",
]
DOC_PATHS = ["docs/adr/0001.md", "docs/adr/0002.md", "docs/gateway.md", "notes.md"]
DOC_LINKS = [None, None, None, "0001.md", "0002.md"]
at = st.integers(0, 6)  # memory and files on one clock: 1_000_000 + 10 * at seconds
mixed_add = st.tuples(st.just("add"), st.sampled_from(MIXED_SENTENCES),
                      st.sampled_from(["capture", "note"]), st.just("local"), at,
                      st.one_of(st.none(), st.none(), at), st.none())
doc_write = st.tuples(st.just("write"), st.sampled_from(DOC_PATHS), st.sampled_from(DOC_BODIES),
                      st.integers(1, 3), st.sampled_from(["alpha", "beta"]),
                      st.sampled_from(["requests", "httpx"]), st.sampled_from(DOC_LINKS), at)
mixed_step = st.one_of(
    st.tuples(st.just("memory"), st.lists(st.one_of(
        mixed_add, mixed_add, st.tuples(st.just("forget"), index),
        st.tuples(st.just("update"), index, st.sampled_from(MIXED_SENTENCES)),
        st.tuples(st.just("supersede"), index, index)), min_size=1, max_size=3)),
    st.tuples(st.just("files"), st.lists(st.one_of(
        doc_write, doc_write, st.tuples(st.just("touch"), st.sampled_from(DOC_PATHS), at),
        st.tuples(st.just("delete"), st.sampled_from(DOC_PATHS))), min_size=1, max_size=3)),
)


class DocumentRun:
    """Files written as the writer's jobs do (``apply_files`` with memory), each step inside
    one memory batch that ends with ``derive_memory`` against the documents."""

    def __init__(self, store: WorkspaceStore, memory: MemoryStore) -> None:
        self.store, self.memory = store, memory
        self.files: dict[str, tuple[bytes, int]] = {}

    def step(self, ops: list[tuple[Any, ...]]) -> None:
        touched: dict[str, bool] = {}
        for op in ops:
            kind, path = op[0], op[1]
            if kind == "write":
                _, _, body, n, v, lib, link, when = op
                text = _frontmatter(link) + body.format(n=n, v=v, lib=lib)
                self.files[path] = (text.encode(), 1_000_000 + 10 * when)
            elif kind == "touch" and path in self.files:
                self.files[path] = (self.files[path][0], 1_000_000 + 10 * op[2])
            elif kind == "delete":
                self.files.pop(path, None)
            touched[path] = path in self.files
        updates = [file_update(p, self.files[p][0], len(self.files[p][0]),
                               self.files[p][1] * 10**9, read_at=2e9)
                   for p, present in touched.items() if present]
        removed = [p for p, present in touched.items() if not present]
        with self.memory.transaction():
            apply_files(self.store, updates, removed, self.memory)
            derive_memory(self.memory, self.store)


ACTOR_STORY = [  # a document retires an actor's sentence, a memory reverts, the file goes
    ("memory", [("add", MIXED_SENTENCES[3], "capture", "local", 1, None, None)]),
    ("files", [("write", "docs/gateway.md", DOC_BODIES[2], 1, "alpha", "httpx", None, 2)]),
    ("memory", [("add", MIXED_SENTENCES[6], "capture", "local", 3, None, None)]),
    ("files", [("delete", "docs/gateway.md")]),
    ("memory", [("forget", 1)]),
]
MEMORY_STORY = [  # an actor's sentence retired by a memory naming its value, then a revert
    ("memory", [("add", MIXED_SENTENCES[3], "capture", "local", 1, None, None)]),
    ("memory", [("add", MIXED_SENTENCES[4], "capture", "local", 2, None, None)]),
    ("memory", [("add", MIXED_SENTENCES[6], "capture", "local", 3, None, None),
                ("add", MIXED_SENTENCES[5], "note", "local", 4, None, None)]),
    ("memory", [("forget", 1)]),
]
ADR_STORY = [  # a memory, an ADR, a newer ADR superseding it, a memory with a cue, a deletion
    ("memory", [("add", MIXED_SENTENCES[0], "capture", "local", 1, None, None)]),
    ("files", [("write", "docs/adr/0001.md", DOC_BODIES[0], 1, "alpha", "httpx", None, 2)]),
    ("files", [("write", "docs/adr/0002.md", DOC_BODIES[0], 1, "beta", "httpx", "0001.md", 3)]),
    ("memory", [("add", MIXED_SENTENCES[1], "capture", "local", 4, None, None),
                ("add", MIXED_SENTENCES[2], "note", "local", 5, None, None)]),
    ("files", [("touch", "docs/adr/0002.md", 6)]),
    ("files", [("delete", "docs/adr/0002.md")]),
]


@SETTINGS
@given(st.lists(mixed_step, min_size=1, max_size=12), st.sampled_from([1000, 1000, 3, 1]))
@example(ACTOR_STORY, 1000)
@example(ADR_STORY, 1)
@example(MEMORY_STORY, 1000)
def test_documents_and_memory_interleaved_incremental_equals_full_rebuild(
        steps: list[tuple[str, list[tuple]]], batch: int) -> None:
    with fresh_folder() as root:
        memory = MemoryStore(root)
        store = WorkspaceStore(root, derived_version="test")
        try:
            records, files = MemoryRun(memory), DocumentRun(store, memory)
            conn = memory.db
            for kind, ops in steps:
                before, seq = states(conn), _max_seq(conn)
                if kind == "memory":
                    with memory.transaction():
                        for op in ops:
                            try:
                                with memory.savepoint():
                                    records.job(op)
                            except StoreError:
                                pass
                        derive_memory(memory, store)
                else:
                    files.step(ops)
                after = states(conn)
                got = snapshot(conn)
                want = full_rebuild(conn, lambda: rebuild(MemoryPolicy(memory, store),
                                                          memory.live_ids(), batch))
                assert got == want
                queued = {r[0] for r in conn.execute(
                    "SELECT record_id FROM pending_index WHERE seq > ?", (seq,))}
                assert changed_states(before, after) <= queued
                ws = store.derived.conn
                assert snapshot(ws) == full_rebuild(ws, lambda: rebuild(
                    WorkspacePolicy(store), store.policy_paths(), batch))
        finally:
            store.close()
            memory.close()
