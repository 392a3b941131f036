"""memory.db's policy through the real MemoryStore and Writer (SQLite + Tantivy in tmp_path):
held explicit links, named migrations, the variable limit, sub-second times.

Incremental derivation against a full rebuild is held by ``test_derivation_property.py``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from lintaid import derivation
from lintaid.capture.record import NewRecord
from lintaid.search import Reader, SearchRequest
from lintaid.store import memory as memory_module
from lintaid.store.memory import MemoryStore
from lintaid.store.migrations import MIGRATIONS, applied
from lintaid.writer import Writer

SENTENCES = [
    "Gateway timeout retry attempts: 5.",
    "Gateway timeout retry attempts: now 2.",
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

    def run(self, fn, timeout: float = 60):
        return self.writer.run(fn, timeout)

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


def _hits(store: MemoryStore, writer: Writer, query: str, **kw) -> list[dict]:
    reader = Reader(memory=store, wait_visible=writer.wait_visible)
    reader.settle(None)
    req = SearchRequest(query=query, top_k=kw.pop("top_k", 10), **kw)
    return [h.to_dict() for h in reader.search(req).results]


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
        h.apply(("update", 1, "Gateway timeout retry attempts: now 2."))
        assert [x["id"] for x in _hits(h.store, h.writer, q)] == [new]
        h.apply(("forget", 1))
        hits = _hits(h.store, h.writer, q)
        assert [x["id"] for x in hits] == [old] and hits[0]["status"] == "current"
    finally:
        h.close()


def test_fifty_superseded_near_duplicates_do_not_take_top_k_slots(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    try:
        def put(text: str, at: float) -> str:
            rec = NewRecord(content=text, kind="note", source="test", created_at=at)
            return h.run(lambda: h.store.put(rec, "test"))[0]

        now = time.time()
        # each a change of the one before (a cue: cue-less, they would only likely supersede
        # one another, conflicted and in review); the newest retires all fifty
        for i in range(50):
            put(f"Cache eviction policy setting: now {i + 100}.", now - 10_000 + i)
        put("Cache eviction policy setting: now 7.", now)
        current = [put(f"Cache eviction notes {i}: the cache evicts cold keys first.", now + i)
                   for i in range(5)]
        hits = _hits(h.store, h.writer, "cache eviction policy setting", top_k=5)
        assert len(hits) == 5
        assert all(x["status"] in ("current", "conflicted") for x in hits)
        assert "Cache eviction policy setting: now 7." in [x["content"] for x in hits]
        assert len(set(current) & {x["id"] for x in hits}) == 4
        with_history = _hits(h.store, h.writer, "cache eviction policy setting", top_k=60,
                             history=True)
        assert sum(x["status"] == "superseded" and x["historical"] for x in with_history) == 50
    finally:
        h.close()


@pytest.fixture
def h(tmp_path: Path):
    harness = Harness(tmp_path)
    try:
        yield harness
    finally:
        harness.close()


def _put(h: Harness, text: str, *, at: float | None = None, supersedes: str | None = None,
         source: str = "test") -> tuple[str, str]:
    rec = NewRecord(content=text, kind="note", source=source, supersedes=supersedes,
                    created_at=at if at is not None else h.clock)
    return h.run(lambda: h.store.put(rec, "test"))


def _state(h: Harness, rid: str) -> tuple[str, str | None]:
    row = h.store.get_rows([rid])[rid]
    return row["state"], row["superseded_by"]


# -- held explicit links -------------------------------------------------------------------------

def test_one_text_superseding_two_records_retires_both(h: Harness) -> None:
    """Reported bug: a second supersede by the same text rewrote the one link column, and the
    first record came back as current."""
    a, _ = _put(h, "Deploy notes for the gateway.", at=100)
    b, _ = _put(h, "Deploy notes for the proxy.", at=200)
    t, event = _put(h, "New deploy notes.", at=300, supersedes=a)
    assert event == "ADD"
    t2, event = _put(h, "New deploy notes.", at=300, supersedes=b)  # the same record again
    assert (t2, event) == (t, "SUPERSEDE")
    assert _state(h, a) == ("superseded", t) and _state(h, b) == ("superseded", t)
    # The op's own follow-up link (as ``supersede`` sends it) adds nothing, and removes nothing.
    assert h.run(lambda: h.store.set_supersedes(t, b, "local", "test")) is False
    assert _state(h, a) == ("superseded", t)
    hits = _hits(h.store, h.writer, "deploy notes")
    assert [x["id"] for x in hits] == [t]


def test_a_duplicate_add_carrying_supersedes_applies_the_link(h: Harness) -> None:
    """Reported bug: an add whose text already existed returned NONE and dropped its link."""
    old, _ = _put(h, "The staging cluster lives in us-east-1.", at=100)
    new, event = _put(h, "Staging notes are kept in the wiki.", at=200)
    assert event == "ADD" and _state(h, old) == ("current", None)
    again, event = _put(h, "Staging notes are kept in the wiki.", at=200, supersedes=old)
    assert (again, event) == (new, "SUPERSEDE")
    assert _state(h, old) == ("superseded", new)
    assert [a["op"] for a in h.store.audit_rows(old)] == ["add", "supersede"]
    assert json.loads(h.store.audit_rows(old)[1]["detail"]) == {"by": new}
    assert _put(h, "Staging notes are kept in the wiki.", at=200, supersedes=old)[1] == "NONE"
    assert h.store.get_rows([new])[new]["supersedes"] == old


def test_forgetting_either_end_deactivates_the_link(h: Harness) -> None:
    a, _ = _put(h, "Deploy notes for the gateway.", at=100)
    b, _ = _put(h, "New deploy notes.", at=200, supersedes=a)
    c, _ = _put(h, "Newest deploy notes.", at=300, supersedes=a)
    assert _state(h, a) == ("superseded", c)
    h.run(lambda: h.store.forget(c, "local", None, "test"))
    assert _state(h, a) == ("superseded", b)  # b's link still holds
    h.run(lambda: h.store.forget(b, "local", None, "test"))
    assert _state(h, a) == ("current", None)  # the newer records are gone: a is back
    assert {x["id"] for x in _hits(h.store, h.writer, "deploy notes")} == {a}
    h.run(lambda: h.store.forget(a, "local", None, "test"))
    assert h.store.get_rows([a])[a]["state"] == "current"  # no derived row: forgotten
    assert h.store.counts()["superseded"] == 0


# -- sub-second times ------------------------------------------------------------------------------

def test_as_of_tells_apart_writes_milliseconds_apart(h: Harness) -> None:
    t0 = 1_700_000_000.0
    old, _ = _put(h, "The CI runs on Jenkins.", at=t0)
    new, _ = _put(h, "The CI runs on GitHub Actions instead of Jenkins.", at=t0 + 0.004)
    assert [x["id"] for x in _hits(h.store, h.writer, "CI runs", now=t0 + 1)] == [new]
    then = _hits(h.store, h.writer, "CI runs", as_of=t0 + 0.002, now=t0 + 1)
    assert [(x["id"], x["status"]) for x in then] == [(old, "current")]
    rid, _ = h.run(lambda: h.store.put(NewRecord(
        content="The CI cache expires soon.", kind="note", source="test", created_at=t0,
        expires_at=t0 + 0.5), "test"))
    assert rid in {x["id"] for x in _hits(h.store, h.writer, "CI cache", now=t0 + 0.499)}
    assert rid not in {x["id"] for x in _hits(h.store, h.writer, "CI cache", now=t0 + 0.501)}


# -- migrations and the derived-state version ------------------------------------------------------

V2_SCHEMA = (Path(__file__).parent / "data" / "memory_schema_v2.sql").read_text()


def _v2_database(root: Path) -> dict[str, str]:
    """memory.db as the code before named migrations wrote it, with a link and derived rows."""
    (root / ".lint-ai").mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(root / ".lint-ai" / "memory.db")
    conn.executescript(V2_SCHEMA)
    ids = {"old": "m-old", "new": "m-new", "gone": "m-gone", "other": "m-other"}
    rows = [
        (ids["old"], "Deploy notes for the gateway.", 100.0, None, None),
        (ids["new"], "New deploy notes.", 200.0, ids["old"], None),
        (ids["gone"], "retry_limit: 3", 300.0, None, 350.0),
        (ids["other"], "retry_limit: 5", 400.0, None, None),
    ]
    for rid, content, at, supersedes, forgotten in rows:
        conn.execute(
            "INSERT INTO records(id, kind, source, user_id, content, content_hash, created_at,"
            " updated_at, supersedes, forgotten_at, metadata) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (rid, "note", "api", "local", content, f"h-{rid}", at, at + 1, supersedes,
             forgotten, '{"k": 1}'))
    conn.execute("INSERT INTO audit(at, actor, op, target, user_id) VALUES"
                 " (200, 'api', 'supersede', 'm-old', 'local')")
    conn.execute("INSERT INTO tombstones VALUES ('h-m-gone', 'local', 'm-gone', 350, 'x')")
    conn.execute("INSERT INTO record_state(record_id, status) VALUES ('m-old', 'superseded')")
    conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', '2')")
    conn.commit()
    conn.close()
    return ids


def test_a_database_from_before_migrations_is_migrated_without_loss(tmp_path: Path) -> None:
    ids = _v2_database(tmp_path)
    h = Harness(tmp_path)
    try:
        db = h.store.db
        assert applied(db) == [m.__name__ for m in MIGRATIONS]
        assert "supersedes" not in {r[1] for r in db.execute("PRAGMA table_info(records)")}
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() is None
        assert [tuple(r) for r in db.execute("SELECT new_id, old_id, user_id FROM links")] == [
            (ids["new"], ids["old"], "local")]
        rows = h.store.get_rows(list(ids.values()))
        assert set(rows) == set(ids.values())
        assert rows[ids["new"]]["content"] == "New deploy notes."
        assert json.loads(rows[ids["new"]]["metadata"]) == {"k": 1}
        assert rows[ids["gone"]]["forgotten_at"] == 350.0
        assert rows[ids["new"]]["supersedes"] == ids["old"]
        assert len(h.store.audit_rows(ids["old"])) == 1
        assert db.execute("SELECT COUNT(*) FROM tombstones").fetchone()[0] == 1
        # Derived state was derived again at start, under today's rules and tables.
        assert _state(h, ids["old"]) == ("superseded", ids["new"])
        assert _state(h, ids["other"]) == ("current", None)
        assert h.store.derived_version() == derivation.DERIVED_VERSION
        assert [x["id"] for x in _hits(h.store, h.writer, "deploy notes")] == [ids["new"]]
        # The held link keeps working: forgetting the newer record brings the older one back.
        h.run(lambda: h.store.forget(ids["new"], "local", None, "test"))
        assert _state(h, ids["old"]) == ("current", None)
    finally:
        h.close()
    h = Harness(tmp_path)  # a second start applies nothing again
    try:
        assert applied(h.store.db) == [m.__name__ for m in MIGRATIONS]
    finally:
        h.close()


def test_derived_state_of_other_rules_is_rebuilt_at_start(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    a, _ = _put(h, "retry_limit: 3", at=100)
    b, _ = _put(h, "retry_limit: now 5", at=200)
    h.close()
    store = MemoryStore(tmp_path)
    with store.transaction():  # as if derived by older rules: wrong, and marked so
        store.derived.clear()
        store.set_derived_version("older-rules")
    store.close()
    h = Harness(tmp_path)
    try:
        assert _state(h, a) == ("superseded", b)
        assert h.store.derived_version() == derivation.DERIVED_VERSION
        assert [x["id"] for x in _hits(h.store, h.writer, "retry_limit")] == [b]
    finally:
        h.close()


def test_rules_version_follows_the_rule_sources(tmp_path: Path) -> None:
    rules = tmp_path / "rules.py"
    rules.write_text("X = 1\n")
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        first = derivation.rules_version(["rules"])
        assert derivation.rules_version(["rules"]) == first
        rules.write_text("X = 2\n")
        assert derivation.rules_version(["rules"]) != first
    finally:
        sys.path.remove(str(tmp_path))


def test_rules_version_ignores_comments_and_docstrings_not_code_or_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A comment or docstring edit re-derives no store; a code or data edit re-derives."""
    package = tmp_path / "rulespkg"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text('"""Rules."""\n')
    rules = package / "rules.py"
    code = 'def limit(n):\n    return n + 1\n\nLIMIT = 3\n'
    rules.write_text(code)
    (package / "data" / "words.txt").write_text("alpha\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def version() -> str:
        return derivation.rules_version(packages=["rulespkg"])

    first = version()
    assert "rulespkg.rules" in derivation.rule_modules(["rulespkg"])
    rules.write_text('"""The rules, documented."""\n# a comment\n\n\ndef limit(n):\n'
                     '    """One more than n."""\n    return n + 1  # why\n\n'
                     'LIMIT = 3\n"""How many."""\n')
    assert version() == first
    rules.write_text(code.replace("n + 1", "n + 2"))
    second = version()
    assert second != first
    (package / "data" / "words.txt").write_text("alpha\nbeta\n")
    assert version() != second


def test_the_derived_version_covers_every_module_of_the_policy_package() -> None:
    folder = Path(derivation.__file__).parent / "policy"
    modules = {f"lintaid.policy.{p.stem}" for p in folder.glob("*.py") if p.stem != "__init__"}
    covered = set(derivation.rule_modules())
    assert modules <= covered
    assert {"lintaid.policy", "lintaid.derivation", "lintaid.workspace.documents"} <= covered
    assert derivation.DERIVED_VERSION == derivation.rules_version()


def test_the_derived_version_is_kept_under_the_raw_sources_hash(tmp_path: Path) -> None:
    """Parsing every rule module costs a daemon's start about 0.25 s: it is done once per
    code and Python version, then read back."""
    assert derivation.cached_rules_version(tmp_path) == derivation.rules_version()
    [kept] = tmp_path.glob("rules-*")
    assert kept.read_text().strip() == derivation.rules_version()
    kept.write_text("0123456789abcdef\n")  # what is kept is what is read
    assert derivation.cached_rules_version(tmp_path) == "0123456789abcdef"
    kept.write_text("not a version")  # a damaged entry is computed again and replaced
    assert derivation.cached_rules_version(tmp_path) == derivation.rules_version()
    assert kept.read_text().strip() == derivation.rules_version()
    blocked = tmp_path / "file"
    blocked.write_text("")  # a cache folder that cannot be made: computed, not kept
    assert derivation.cached_rules_version(blocked / "sub") == derivation.rules_version()


# -- the variable limit ----------------------------------------------------------------------------

def test_rederiving_1200_records_under_a_999_variable_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect = memory_module.connect
    opened: list[sqlite3.Connection] = []

    def limited(path: Path, *, durable: bool) -> sqlite3.Connection:
        conn = real_connect(path, durable=durable)
        conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
        opened.append(conn)
        return conn

    monkeypatch.setattr(memory_module, "connect", limited)
    h = Harness(tmp_path)
    try:
        with pytest.raises(sqlite3.OperationalError, match="too many SQL variables"):
            h.store.db.execute(f"SELECT 1 WHERE 1 IN ({','.join('?' * 1000)})", [1] * 1000)
        # the second half changes the first half's values, each with a cue
        recs = [NewRecord(content=f"Service {i % 600} timeout seconds:{' now' * (i >= 600)}"
                                  f" {i}.", kind="note",
                          source=f"bulk/{i}", created_at=1000.0 + i) for i in range(1200)]

        def put_all() -> list[str]:
            return [h.store.put(rec, "test")[0] for rec in recs]

        # one batch: 1,200 changed records (more than the limit, and a statement with two IN
        # lists takes at most 499 of them: three batches) derived at once
        ids = h.run(put_all, timeout=600)
        assert h.store.counts()["superseded"] == 600
        derivation.rebuild_memory(h.store)  # the full re-derive, as at a rules change
        assert h.store.counts()["claims"] == 1200
        rows = h.store.get_rows(ids)  # reads go through the same helper
        assert sum(r["state"] == "superseded" for r in rows.values()) == 600
        assert len(h.store.claims_for(ids)) == 1200 and len(h.store.relations_for(ids)) == 1200
        assert h.writer.wait_visible(timeout=60)
    finally:
        h.close()
    assert len(opened) >= 2  # the write connection and at least one reader were limited
