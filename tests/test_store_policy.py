"""The store's incremental derived state must equal a full derivation after every write.

Drives the real MemoryStore through the real Writer (SQLite + Tantivy in tmp_path) with random
add / update / forget / supersede sequences, and after every step compares the derived tables
with ``lintaid.policy.derive`` run over every stored record.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lintaid.capture.record import NewRecord
from lintaid.policy import RecordInput, derive
from lintaid.search import Reader, SearchRequest
from lintaid.store.memory import MemoryStore
from lintaid.writer import Writer

SENTENCES = [
    "Gateway timeout retry attempts: 5.",
    "Gateway timeout retry attempts: 2.",
    "retry_limit: 3",
    "retry_limit = 5",
    "We use Redis for session storage.",
    "Use Memcached for session storage instead of Redis.",
    "The platform team owns the control surface.",
    "The reliability team owns the control surface.",
    "We switched from pip to uv.",
    "The deployment strategy uses blue-green releases.",
    "Claude Code outcome\nRequest: store sessions\nResult: We use Redis for session storage. "
    "Added a health check endpoint for the load balancer.",
    "Always start function names with 'x_'.",
    "Always start function names with 'fn_'.",
    "Nothing to see here, just notes about lunch.",
]

ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(SENTENCES), st.sampled_from(["capture", "note"])),
        st.tuples(st.just("update"), st.integers(0, 50), st.sampled_from(SENTENCES)),
        st.tuples(st.just("forget"), st.integers(0, 50)),
        st.tuples(st.just("supersede"), st.integers(0, 50), st.integers(0, 50)),
    ),
    min_size=1, max_size=14,
)


class Harness:
    def __init__(self, root: Path) -> None:
        self.store = MemoryStore(root)
        self.writer = Writer(self.store)
        self.writer.start()
        self.ids: list[str] = []
        self.clock = 1_000_000.0

    def close(self) -> None:
        self.writer.stop()
        self.store.close()

    def run(self, fn):
        return self.writer.run(fn)

    def live(self) -> list[str]:
        rows = self.store.get_rows(self.ids)
        return [i for i in self.ids if rows[i]["forgotten_at"] is None]

    def apply(self, op: tuple) -> None:
        kind = op[0]
        live = self.live()
        if kind == "add":
            self.clock += 10
            rec = NewRecord(content=op[1], kind=op[2], source=f"test/{len(self.ids)}",
                            created_at=self.clock)
            rid, event = self.run(lambda: self.store.put(rec, "test"))
            if event == "ADD":
                self.ids.append(rid)
        elif kind == "update" and live:
            rid = live[op[1] % len(live)]
            self.run(lambda: self.store.update(rid, "local", op[2], "test"))
        elif kind == "forget" and live:
            rid = live[op[1] % len(live)]
            self.run(lambda: self.store.forget(rid, "local", None, "test"))
        elif kind == "supersede" and len(live) > 1:
            new, old = live[op[1] % len(live)], live[op[2] % len(live)]
            if new != old:
                self.run(lambda: self.store.set_supersedes(new, old, "local", "test"))

    def check(self) -> None:
        db = self.store.db
        rows = self.store.get_rows(self.ids)
        inputs = [
            RecordInput(record_id=r["id"], text=r["content"], kind=r["kind"],
                        user_id=r["user_id"], created_at=r["created_at"], valid_at=r["valid_at"],
                        explicit_supersedes=r["supersedes"],
                        status_hold="forgotten" if r["forgotten_at"] is not None else None)
            for r in rows.values()
        ]
        full = derive(inputs)
        live = set(self.live())
        want_records = {rid: (s.status, s.superseded_by) for rid, s in full.record_states.items()
                        if rid in live}
        got_records = {r["record_id"]: (r["status"], r["superseded_by"])
                       for r in db.execute("SELECT * FROM record_state")}
        assert got_records == want_records
        want_claims = {cid: s.status for cid, s in full.claim_states.items()
                       if cid.split("::")[0] in live}
        for cid in full.claims:
            if cid.split("::")[0] in live:
                want_claims.setdefault(cid, "current")
        got_claims = {r["claim_id"]: r["status"] for r in db.execute("SELECT * FROM claim_state")}
        for cid in {r[0] for r in db.execute("SELECT claim_id FROM claims")}:
            got_claims.setdefault(cid, "current")
        assert got_claims == want_claims
        want_rel = {(r.kind, r.source_claim, r.target_claim, r.confidence, r.method)
                    for r in full.relations}
        got_rel = {(r["kind"], r["source_claim"], r["target_claim"], r["confidence"], r["method"])
                   for r in db.execute("SELECT * FROM relations")}
        assert got_rel == want_rel


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_incremental_derived_state_equals_a_full_derivation(sequence: list[tuple]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        h = Harness(Path(tmp))
        try:
            for op in sequence:
                h.apply(op)
                h.check()
        finally:
            h.close()


def _hits(store: MemoryStore, writer: Writer, query: str, **kw) -> list[dict]:
    reader = Reader(memory=store, wait_visible=writer.wait_visible)
    reader.settle(None)
    return [h.to_dict() for h in reader.search(SearchRequest(query=query, **kw)).results]


def test_deleting_or_editing_the_newer_record_brings_the_older_one_back(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    try:
        q = "How many retry attempts should we use for gateway timeouts?"
        for text in SENTENCES[:2]:
            h.apply(("add", text, "note"))
        old, new = h.ids
        assert [x["id"] for x in _hits(h.store, h.writer, q)] == [new]
        h.apply(("update", 1, "The gateway dashboard moved to Grafana."))
        assert {x["id"]: x["status"] for x in _hits(h.store, h.writer, q)}[old] == "current"
        h.apply(("update", 1, "Gateway timeout retry attempts: 2."))
        assert [x["id"] for x in _hits(h.store, h.writer, q)] == [new]
        h.apply(("forget", 1))
        hits = _hits(h.store, h.writer, q)
        assert [x["id"] for x in hits] == [old] and hits[0]["status"] == "current"
        h.check()
    finally:
        h.close()


def test_fifty_superseded_near_duplicates_do_not_take_top_k_slots(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    try:
        def put(text: str, at: float) -> str:
            rec = NewRecord(content=text, kind="note", source="test", created_at=at)
            return h.run(lambda: h.store.put(rec, "test"))[0]

        now = time.time()
        for i in range(50):
            put(f"Cache eviction policy setting: {i + 100}.", now - 10_000 + i)
        put("Cache eviction policy setting: 7.", now)  # supersedes all fifty
        current = [put(f"Cache eviction notes {i}: the cache evicts cold keys first.", now + i)
                   for i in range(5)]
        hits = _hits(h.store, h.writer, "cache eviction policy setting", top_k=5)
        assert len(hits) == 5
        assert all(x["status"] in ("current", "conflicted") for x in hits)
        assert "Cache eviction policy setting: 7." in [x["content"] for x in hits]
        assert len(set(current) & {x["id"] for x in hits}) == 4
        with_history = _hits(h.store, h.writer, "cache eviction policy setting", top_k=60,
                             history=True)
        assert sum(x["status"] == "superseded" and x["historical"] for x in with_history) == 50
    finally:
        h.close()
