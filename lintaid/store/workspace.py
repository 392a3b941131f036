"""workspace.db and the workspace Tantivy index: the only code that reads or writes them.

Everything here is derived from the project's files and may be thrown away: a missing, corrupt or
old-schema index is rebuilt from workspace.db, and an old-schema workspace.db is emptied (the next
reconcile re-reads the files). It never touches memory.db.

Threading: ``apply``, ``flush_index``, ``rebuild_policy`` and ``close`` run on the writer thread
only; the read methods run on any thread, each on its own connection (WAL keeps them beside the
writer). A change is written to SQLite together with a ``pending_index`` row in one transaction;
``flush_index`` then brings the index in step and clears the rows, so a crash between the two is
replayed at the next start.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import tantivy

from lintaid.policy import CURRENT, SUPERSEDED, RecordState
from lintaid.workspace.chunking import Chunk
from lintaid.workspace.states import PolicyFile, PolicyState, link_candidates
from lintaid_client import paths

from .index import TantivyIndex, boolean
from .sqlite import connect, transaction

INDEX_VERSION: Final = 1
DB_VERSION: Final = "1"
SEARCH_FIELDS: Final = ["text", "heading"]

WORKSPACE_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    indexed_at REAL NOT NULL,
    frontmatter TEXT NOT NULL DEFAULT '{}',
    policy_text TEXT  -- the text the policy engine reads; NULL when the file takes no part
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    heading TEXT,
    text TEXT NOT NULL,
    sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
-- Derived from the policy engine; a file without a row is current.
CREATE TABLE IF NOT EXISTS file_state (
    path TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    superseded_by TEXT,
    confidence REAL,
    evidence TEXT
);
CREATE TABLE IF NOT EXISTS pending_index (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_TABLES: Final = ("files", "chunks", "file_state", "pending_index", "meta")


def _workspace_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("chunk_id", stored=True, tokenizer_name="raw")
    sb.add_text_field("path", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("text", stored=False, tokenizer_name="en_stem")
    sb.add_text_field("heading", stored=False, tokenizer_name="en_stem")
    sb.add_text_field("status", tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("mtime", stored=True, indexed=True, fast=True)
    return sb.build()


@dataclass
class FileUpdate:
    """One file as read from disk, chunked and hashed off the writer thread."""

    path: str
    size: int
    mtime_ns: int
    sha256: str
    chunks: list[Chunk]
    frontmatter: dict[str, Any] = field(default_factory=dict)
    policy_text: str | None = None
    read_at: float = field(default_factory=time.time)  # before the read: see ``racy``


@dataclass(frozen=True)
class Fingerprint:
    size: int
    mtime_ns: int
    sha256: str
    indexed_at: float  # when the stored content was read

    RACY_WINDOW_S = 0.05

    def racy(self) -> bool:
        """A write in the same coarse timestamp tick as our read keeps size and mtime: only a
        re-hash can tell (git's "racy clean" problem)."""
        return self.indexed_at - self.mtime_ns / 1e9 < self.RACY_WINDOW_S


@dataclass
class ApplyResult:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # content differs
    touched: list[str] = field(default_factory=list)  # same content, new size/mtime
    removed: list[str] = field(default_factory=list)
    restated: list[str] = field(default_factory=list)  # policy status changed

    def merge(self, other: ApplyResult) -> None:
        for name in ("added", "changed", "touched", "removed", "restated"):
            getattr(self, name).extend(getattr(other, name))


class WorkspaceStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        paths.ensure_state_dir(root)
        self.db_path = paths.workspace_db_path(root)
        self._write = connect(self.db_path, durable=False)
        self._migrate()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._policy: PolicyState | None = None
        self.closed = False
        self.index = TantivyIndex(paths.index_dir(root, "workspace"), _workspace_schema,
                                  INDEX_VERSION)
        if self.index.rebuilt:
            self._write.execute("INSERT OR IGNORE INTO pending_index SELECT path FROM files")
        self.dirty = self._write.execute("SELECT 1 FROM pending_index LIMIT 1").fetchone() is not None

    def _migrate(self) -> None:
        """Derived data: on another schema version, start empty instead of migrating."""
        self._write.executescript(WORKSPACE_SCHEMA)
        row = self._write.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if row is not None and row[0] == DB_VERSION:
            return
        if row is not None:
            for table in _TABLES:
                self._write.execute(f"DROP TABLE IF EXISTS {table}")
            self._write.executescript(WORKSPACE_SCHEMA)
        self._write.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('version', ?)",
                            (DB_VERSION,))

    # -- connections ---------------------------------------------------------------------------
    def _read(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.db_path, durable=False)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return transaction(self._write)

    def close(self) -> None:
        """Writer thread (or after the writer stopped): commit and release the index writer."""
        if self.closed:
            return
        self.closed = True
        try:
            self.flush_index()
        finally:
            self.index.close()
            self._write.close()
            with self._readers_lock:
                readers, self._readers = self._readers, []
            for conn in readers:
                conn.close()

    # -- writes (writer thread) ----------------------------------------------------------------
    def apply(self, updates: Iterable[FileUpdate], removed: Iterable[str]) -> ApplyResult:
        """Upsert ``updates`` and delete ``removed`` in one transaction, with their policy.

        Upserting a file replaces its chunks only; nothing else in the store is cleared. A file
        whose content hash is unchanged keeps its chunks and only gets its new size and mtime
        (which still matters to the policy: the mtime is the file's effective time).
        """
        result = ApplyResult()
        policy = self._ensure_policy()
        try:
            with self._transaction() as db:
                changed = self._upsert(db, updates, result)
                gone = self._delete(db, removed, result)
                self._write_states(db, policy.update(changed, gone), result)
        except BaseException:
            self._policy = None  # the engine ran ahead of a rolled-back transaction: re-derive
            raise
        if result.added or result.changed or result.touched or result.removed:
            self.dirty = True
        return result

    def _upsert(self, db: sqlite3.Connection, updates: Iterable[FileUpdate],
                result: ApplyResult) -> list[PolicyFile]:
        changed: list[PolicyFile] = []
        for up in updates:
            old = db.execute("SELECT sha256, mtime_ns, size, policy_text FROM files"
                             " WHERE path = ?", (up.path,)).fetchone()
            same_content = old is not None and old["sha256"] == up.sha256
            if same_content:
                if old["mtime_ns"] == up.mtime_ns and old["size"] == up.size:
                    continue
                db.execute("UPDATE files SET size = ?, mtime_ns = ?, indexed_at = ?"
                           " WHERE path = ?", (up.size, up.mtime_ns, up.read_at, up.path))
                result.touched.append(up.path)
            else:
                db.execute("DELETE FROM chunks WHERE path = ?", (up.path,))
                db.executemany(
                    "INSERT OR REPLACE INTO chunks(chunk_id, path, start_line, end_line,"
                    " heading, text, sha256) VALUES (?,?,?,?,?,?,?)",
                    [(c.chunk_id, up.path, c.start_line, c.end_line, c.heading, c.text,
                      c.sha256) for c in up.chunks],
                )
                db.execute(
                    "INSERT OR REPLACE INTO files(path, size, mtime_ns, sha256, indexed_at,"
                    " frontmatter, policy_text) VALUES (?,?,?,?,?,?,?)",
                    (up.path, up.size, up.mtime_ns, up.sha256, up.read_at,
                     json.dumps(up.frontmatter, sort_keys=True), up.policy_text),
                )
                (result.changed if old is not None else result.added).append(up.path)
            db.execute("INSERT OR IGNORE INTO pending_index(path) VALUES (?)", (up.path,))
            text = old["policy_text"] if same_content else up.policy_text
            changed.append(PolicyFile(up.path, up.mtime_ns / 1e9, text,
                                      tuple(link_candidates(up.path, up.frontmatter))))
        return changed

    def _delete(self, db: sqlite3.Connection, removed: Iterable[str],
                result: ApplyResult) -> list[str]:
        gone: list[str] = []
        for path in dict.fromkeys(removed):
            cur = db.execute("DELETE FROM files WHERE path = ?", (path,))
            db.execute("DELETE FROM chunks WHERE path = ?", (path,))
            db.execute("DELETE FROM file_state WHERE path = ?", (path,))
            if cur.rowcount:
                db.execute("INSERT OR IGNORE INTO pending_index(path) VALUES (?)", (path,))
                result.removed.append(path)
                gone.append(path)
        return gone

    def reindex_all(self) -> list[str]:
        """Rewrite every index entry and re-derive every state (``reindex --full``)."""
        self._write.execute("INSERT OR IGNORE INTO pending_index SELECT path FROM files")
        self.dirty = True
        return self.rebuild_policy()

    def _write_states(self, db: sqlite3.Connection, states: dict[str, RecordState],
                      result: ApplyResult) -> None:
        for path, state in sorted(states.items()):
            if state.status == CURRENT:
                cur = db.execute("DELETE FROM file_state WHERE path = ?", (path,))
            else:
                cur = db.execute(
                    "INSERT OR REPLACE INTO file_state(path, status, superseded_by, confidence,"
                    " evidence) SELECT ?,?,?,?,? WHERE EXISTS"
                    " (SELECT 1 FROM files WHERE path = ?)",
                    (path, state.status, state.superseded_by, state.confidence, state.evidence,
                     path),
                )
            if cur.rowcount:
                db.execute("INSERT OR IGNORE INTO pending_index(path) VALUES (?)", (path,))
                result.restated.append(path)
                self.dirty = True

    def _ensure_policy(self) -> PolicyState:
        if self._policy is None:
            self.rebuild_policy()
        assert self._policy is not None
        return self._policy

    def rebuild_policy(self) -> list[str]:
        """Derive every file's state from scratch and store the differences; return them."""
        rows = self._write.execute(
            "SELECT path, mtime_ns, frontmatter, policy_text FROM files").fetchall()
        policy = PolicyState()
        policy.rebuild(
            PolicyFile(r["path"], r["mtime_ns"] / 1e9, r["policy_text"],
                       tuple(link_candidates(r["path"], json.loads(r["frontmatter"]))))
            for r in rows
        )
        self._policy = policy
        wanted = policy.states()
        stored = {r["path"]: RecordState(r["status"], r["superseded_by"], r["confidence"],
                                         r["evidence"] or "")
                  for r in self._write.execute("SELECT * FROM file_state")}
        diff = {p: s for p, s in wanted.items() if stored.get(p) != s}
        diff.update({p: RecordState(CURRENT) for p in stored if p not in wanted})
        result = ApplyResult()
        with self._transaction() as db:
            self._write_states(db, diff, result)
        return result.restated

    # -- index (writer thread) -----------------------------------------------------------------
    def flush_index(self) -> int:
        """Rewrite the index entries of every pending file; return how many files."""
        pending = [r[0] for r in self._write.execute("SELECT path FROM pending_index")]
        if not pending:
            self.dirty = False
            return 0
        for part in _parts(pending, 500):
            marks = ",".join("?" * len(part))
            rows = self._write.execute(
                "SELECT c.chunk_id, c.path, c.heading, c.text, f.mtime_ns,"
                " COALESCE(s.status, 'current') AS status FROM chunks c"
                " JOIN files f ON f.path = c.path LEFT JOIN file_state s ON s.path = c.path"
                f" WHERE c.path IN ({marks})", part,
            ).fetchall()
            self.index.replace("path", [(p, None) for p in part])
            self.index.replace("chunk_id", [(r["chunk_id"], {
                "chunk_id": r["chunk_id"], "path": r["path"], "text": r["text"],
                "heading": r["heading"] or "", "status": r["status"],
                "mtime": r["mtime_ns"] // 1_000_000_000,
            }) for r in rows])
        self.index.commit()
        self._write.executemany("DELETE FROM pending_index WHERE path = ?",
                                [(p,) for p in pending])
        self.dirty = False
        return len(pending)

    # -- reads (any thread) ----------------------------------------------------------------------
    def fingerprints(self) -> dict[str, Fingerprint]:
        return {r["path"]: Fingerprint(r["size"], r["mtime_ns"], r["sha256"], r["indexed_at"])
                for r in self._read().execute(
                    "SELECT path, size, mtime_ns, sha256, indexed_at FROM files")}

    def fingerprints_for(self, rels: list[str]) -> dict[str, Fingerprint]:
        out: dict[str, Fingerprint] = {}
        for part in _parts(rels, 500):
            marks = ",".join("?" * len(part))
            for r in self._read().execute(
                "SELECT path, size, mtime_ns, sha256, indexed_at FROM files"
                f" WHERE path IN ({marks})", part,
            ):
                out[r["path"]] = Fingerprint(r["size"], r["mtime_ns"], r["sha256"],
                                             r["indexed_at"])
        return out

    def paths_under(self, folder: str) -> list[str]:
        """Stored paths inside ``folder`` (relative, posix; "" is the root)."""
        if not folder:
            return [r[0] for r in self._read().execute("SELECT path FROM files")]
        prefix = folder.rstrip("/") + "/"
        return [r[0] for r in self._read().execute(
            "SELECT path FROM files WHERE substr(path, 1, ?) = ?", (len(prefix), prefix))]

    def counts(self) -> dict[str, int]:
        conn = self._read()
        states = dict(conn.execute(
            "SELECT status, COUNT(*) FROM file_state GROUP BY status").fetchall())
        return {
            "files": conn.execute("SELECT COUNT(*) FROM files").fetchone()[0],
            "chunks": conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0],
            "superseded": states.get(SUPERSEDED, 0),
            "conflicted": states.get("conflicted", 0),
            "pending_index": conn.execute("SELECT COUNT(*) FROM pending_index").fetchone()[0],
        }

    def file_state(self, rel: str) -> dict[str, Any]:
        row = self._read().execute("SELECT * FROM file_state WHERE path = ?", (rel,)).fetchone()
        if row is None:
            return {"status": CURRENT, "superseded_by": None, "confidence": None, "evidence": None}
        return {k: row[k] for k in ("status", "superseded_by", "confidence", "evidence")}

    def search(self, text: str, limit: int, *, history: bool) -> tuple[list[dict[str, Any]], int]:
        """Best chunks for ``text``; superseded files are excluded inside the query.

        Returns (hits, hidden): ``hidden`` counts matching chunks the policy filter removed.
        """
        query = self.index.text_query(text, SEARCH_FIELDS)
        if query is None or limit < 1:
            return [], 0
        base = [("must", query)]
        policy = [] if history else [("not", self.index.term("status", SUPERSEDED))]
        searcher = self.index.searcher()
        result = searcher.search(boolean(base + policy), limit=limit, count=True)
        hidden = 0
        if policy:
            hidden = searcher.search(boolean(base), limit=1, count=True).count - result.count
        scored = [(searcher.doc(addr).get_first("chunk_id"), float(score))
                  for score, addr in result.hits]
        rows = self._chunk_rows([cid for cid, _ in scored])
        hits = []
        for chunk_id, score in scored:
            row = rows.get(chunk_id)
            if row is None:  # deleted after the searcher was taken
                continue
            hits.append(_hit(row, score))
        return hits, max(hidden, 0)

    def _chunk_rows(self, chunk_ids: list[str]) -> dict[str, sqlite3.Row]:
        out: dict[str, sqlite3.Row] = {}
        for part in _parts(chunk_ids, 500):
            marks = ",".join("?" * len(part))
            for row in self._read().execute(
                "SELECT c.*, f.mtime_ns, COALESCE(s.status, 'current') AS status,"
                " s.superseded_by, s.confidence, s.evidence FROM chunks c"
                " JOIN files f ON f.path = c.path LEFT JOIN file_state s ON s.path = c.path"
                f" WHERE c.chunk_id IN ({marks})", part,
            ):
                out[row["chunk_id"]] = row
        return out


def _hit(row: sqlite3.Row, score: float) -> dict[str, Any]:
    status = row["status"]
    if status == SUPERSEDED:
        status = "historical"
    return {
        "id": f"ws:{row['path']}:{row['start_line']}",
        "store": "workspace",
        "kind": "file",
        "path": row["path"],
        "start_line": row["start_line"],
        "end_line": row["end_line"],
        "heading": row["heading"],
        "content": row["text"],
        "score": score,
        "status": status,
        "superseded_by": row["superseded_by"],
        "confidence": row["confidence"] if row["confidence"] is not None else 1.0,
        "evidence": row["evidence"],
        "claims": [],
        "relations": [],
        "created_at": row["mtime_ns"] / 1e9,
        "source": row["path"],
        "changed_files": [],
    }


def _parts(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]
