"""workspace.db and the workspace Tantivy index: the only code that reads or writes them.

Everything here is derived from the project's files and may be thrown away: a missing, corrupt or
old-schema index is rebuilt from workspace.db, and an old-schema workspace.db is emptied (the next
reconcile re-reads the files). It never touches memory.db.

The store persists rows; it derives nothing. Files' policy state lives in the same derived
tables as memory.db's (``schema.DERIVED_SCHEMA``, a file's path as its record id), written by
the one policy engine through ``lintaid.derivation``.

Threading: ``transaction``, ``apply``, ``mark_pending``, ``flush_index`` and ``close`` run on the
writer thread only; the read methods run on any thread, each on its own connection (WAL keeps
them beside the writer). A change is written to SQLite together with a ``pending_index`` row in
one transaction; ``flush_index`` then brings the index in step and clears the rows, so a crash
between the two is replayed at the next start.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import threading
import time
from collections.abc import Collection, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import tantivy

from lintaid.logs import get_logger
from lintaid.retrieval.query import words
from lintaid_client import paths

from . import integrity, state
from .derived_tables import DerivedTables
from .index import TantivyIndex, Terms, boolean
from .schema import DERIVED_SCHEMA, DERIVED_VERSION_KEY, get_meta, set_meta
from .sqlite import batches, connect, in_batches, script, transaction

INDEX_VERSION: Final = 1
DB_VERSION: Final = "2"  # 2: the shared derived tables replace file_state; file_links
SEARCH_FIELDS: Final = ["text", "heading"]
CURRENT: Final = "current"
SUPERSEDED: Final = "superseded"
FILE_KINDS: Final = ("decision", "document", "code")
"""A decision document (its claims take part in the policy), other prose, or code (source,
configuration, data): what a hit's ``doc_type`` says."""

WORKSPACE_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    indexed_at REAL NOT NULL,
    frontmatter TEXT NOT NULL DEFAULT '{}',
    policy_text TEXT,  -- the text the policy engine reads; NULL when the file takes no part
    kind TEXT NOT NULL DEFAULT 'code'  -- FILE_KINDS
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
-- A file's frontmatter ``supersedes:`` targets, in resolution order (n from 0).
CREATE TABLE IF NOT EXISTS file_links (
    path TEXT NOT NULL,
    n INTEGER NOT NULL,
    candidate TEXT NOT NULL,
    PRIMARY KEY (path, n)
);
CREATE INDEX IF NOT EXISTS file_links_candidate ON file_links(candidate);
CREATE TABLE IF NOT EXISTS pending_index (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
log = get_logger("lintaid.store")
_SHAPE: Final = hashlib.sha256((WORKSPACE_SCHEMA + DERIVED_SCHEMA).encode()).hexdigest()[:12]


def _workspace_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("chunk_id", stored=True, tokenizer_name="raw")
    sb.add_text_field("path", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("text", stored=False, tokenizer_name="en_stem")
    sb.add_text_field("heading", stored=False, tokenizer_name="en_stem")
    sb.add_text_field("status", tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("mtime", stored=True, indexed=True, fast=True)
    return sb.build()


@dataclass(frozen=True)
class ChunkRow:
    chunk_id: str
    start_line: int
    end_line: int
    heading: str | None
    text: str
    sha256: str


@dataclass
class FileUpdate:
    """One file as read from disk, chunked and hashed off the writer thread."""

    path: str
    size: int
    mtime_ns: int
    sha256: str
    chunks: list[ChunkRow]
    frontmatter: dict[str, Any] = field(default_factory=dict)
    policy_text: str | None = None  # what the policy reads; None: the file takes no part
    links: tuple[str, ...] = ()  # frontmatter ``supersedes:`` targets, in resolution order
    kind: str = "code"  # FILE_KINDS
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
    restated: list[str] = field(default_factory=list)  # policy state changed

    @property
    def written(self) -> list[str]:
        """Every path whose row was written or deleted."""
        return [*self.added, *self.changed, *self.touched, *self.removed]

    def merge(self, other: ApplyResult) -> None:
        for name in ("added", "changed", "touched", "removed", "restated"):
            getattr(self, name).extend(getattr(other, name))


class WorkspaceStore:
    def __init__(self, root: Path, derived_version: str | None = None) -> None:
        """``derived_version``: the policy rules' version; workspace.db derived under other
        rules is emptied (as on a schema change), and the next reconcile re-reads the files."""
        self.root = root
        paths.ensure_state_dir(root)
        self.db_path = paths.workspace_db_path(root)
        self.recovered: dict[str, Any] | None = None  # set when a damaged file was set aside
        try:
            self._write, self.integrity = self._open(derived_version)
        except integrity.Damaged as err:
            self._set_aside(err)
            self._write, self.integrity = self._open(derived_version)
        self.derived = DerivedTables(self._write)
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self.closed = False
        self.index = TantivyIndex(paths.index_dir(root, "workspace"), _workspace_schema,
                                  INDEX_VERSION)
        if self.index.rebuilt:
            self._write.execute("INSERT OR IGNORE INTO pending_index SELECT path FROM files")
        self.dirty = self._write.execute("SELECT 1 FROM pending_index LIMIT 1").fetchone() is not None

    def _open(self, derived_version: str | None) -> tuple[sqlite3.Connection, str]:
        """Connect, check and migrate; raise ``integrity.Damaged`` for a damaged file."""
        conn: sqlite3.Connection | None = None
        try:
            conn = connect(self.db_path, durable=False)
            checked = integrity.check(conn, self.db_path)
            self._migrate(conn, derived_version)
            return conn, checked
        except BaseException as err:
            if conn is not None:
                conn.close()
            if integrity.is_damage(err):
                raise integrity.Damaged(self.db_path, str(err)) from err
            raise

    def _set_aside(self, err: integrity.Damaged) -> None:
        """Derived state: move the damaged file aside (only the newest damaged copy is kept)
        and drop the index, so both are rebuilt from the project's files."""
        older = integrity.damaged_copies(self.db_path)
        moved = integrity.set_aside(self.db_path)
        for old in older:
            for suffix in ("", "-wal", "-shm"):
                old.with_name(old.name + suffix).unlink(missing_ok=True)
        shutil.rmtree(paths.index_dir(self.root, "workspace"), ignore_errors=True)
        self.recovered = {"at": time.time(), "reason": err.detail, "moved_to": str(moved)}
        log.error("workspace_db_damaged", reason=err.detail, moved_to=str(moved),
                  action="rebuilding workspace.db and its index from the files")

    @staticmethod
    def _migrate(db: sqlite3.Connection, derived_version: str | None) -> None:
        """Derived data: on another schema or rules version, start empty instead of migrating.
        One transaction (one commit), however many tables it creates."""
        with transaction(db):
            script(db, WORKSPACE_SCHEMA)
            version = get_meta(db, "version")
            rules = get_meta(db, DERIVED_VERSION_KEY)
            if version is not None and (version != f"{DB_VERSION}:{_SHAPE}" or (
                    derived_version is not None and rules != derived_version)):
                tables = [r[0] for r in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                    " AND name NOT LIKE 'sqlite_%'")]
                for table in tables:
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                script(db, WORKSPACE_SCHEMA)
            script(db, DERIVED_SCHEMA)
            set_meta(db, "version", f"{DB_VERSION}:{_SHAPE}")
            if derived_version is not None:
                set_meta(db, DERIVED_VERSION_KEY, derived_version)

    # -- connections ---------------------------------------------------------------------------
    def _read(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.db_path, durable=False)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """Writer thread: ``apply``, the policy engine's writes and ``mark_pending`` in one."""
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

    # -- writes (writer thread, inside ``transaction``) ------------------------------------------
    def apply(self, updates: Iterable[FileUpdate], removed: Iterable[str]) -> ApplyResult:
        """Upsert ``updates`` and delete ``removed``; the caller derives their policy state.

        Upserting a file replaces its chunks only; nothing else in the store is cleared. A file
        whose content hash is unchanged keeps its chunks and only gets its new size and mtime
        (which still matters to the policy: the mtime is the file's effective time).
        """
        result = ApplyResult()
        db = self._write
        self._upsert(db, updates, result)
        self._delete(db, removed, result)
        if result.written:
            self.dirty = True
        return result

    def _upsert(self, db: sqlite3.Connection, updates: Iterable[FileUpdate],
                result: ApplyResult) -> None:
        for up in updates:
            old = db.execute("SELECT sha256, mtime_ns, size FROM files WHERE path = ?",
                             (up.path,)).fetchone()
            if old is not None and old["sha256"] == up.sha256:
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
                    " frontmatter, policy_text, kind) VALUES (?,?,?,?,?,?,?,?)",
                    (up.path, up.size, up.mtime_ns, up.sha256, up.read_at,
                     json.dumps(up.frontmatter, sort_keys=True), up.policy_text, up.kind),
                )
                db.execute("DELETE FROM file_links WHERE path = ?", (up.path,))
                db.executemany("INSERT INTO file_links(path, n, candidate) VALUES (?,?,?)",
                               [(up.path, n, c) for n, c in enumerate(up.links)])
                (result.changed if old is not None else result.added).append(up.path)
            db.execute("INSERT OR IGNORE INTO pending_index(path) VALUES (?)", (up.path,))

    def _delete(self, db: sqlite3.Connection, removed: Iterable[str],
                result: ApplyResult) -> None:
        for path in dict.fromkeys(removed):
            cur = db.execute("DELETE FROM files WHERE path = ?", (path,))
            db.execute("DELETE FROM chunks WHERE path = ?", (path,))
            db.execute("DELETE FROM file_links WHERE path = ?", (path,))
            if cur.rowcount:
                db.execute("INSERT OR IGNORE INTO pending_index(path) VALUES (?)", (path,))
                result.removed.append(path)

    def mark_pending(self, paths_: Iterable[str]) -> None:
        """Have these files' index entries rewritten (their policy state changed)."""
        rows = [(p,) for p in paths_]
        if rows:
            self._write.executemany("INSERT OR IGNORE INTO pending_index(path) VALUES (?)", rows)
            self.dirty = True

    def reindex_all(self) -> None:
        """Have every index entry rewritten (``reindex --full``)."""
        self._write.execute("INSERT OR IGNORE INTO pending_index SELECT path FROM files")
        self.dirty = True

    # -- what the policy engine reads (writer thread) --------------------------------------------
    def file_rows(self, rels: Iterable[str]) -> list[sqlite3.Row]:
        return in_batches(self._write, "SELECT path, mtime_ns, policy_text FROM files"
                          " WHERE path IN ({ids})", rels)

    def existing(self, rels: Iterable[str]) -> set[str]:
        return {r[0] for r in in_batches(self._write, "SELECT path FROM files"
                                         " WHERE path IN ({ids})", rels)}

    def link_candidates(self, sources: Iterable[str]) -> dict[str, list[str]]:
        """Each source file's ``supersedes:`` targets, in resolution order."""
        out: dict[str, list[str]] = {}
        rows = in_batches(self._write, "SELECT path, n, candidate FROM file_links"
                          " WHERE path IN ({ids})", sources)
        for row in sorted(rows, key=lambda r: (r["path"], r["n"])):
            out.setdefault(row["path"], []).append(row["candidate"])
        return out

    def sources_naming(self, rels: Iterable[str]) -> set[str]:
        """Files that name any of ``rels`` as a ``supersedes:`` target."""
        return {r[0] for r in in_batches(self._write, "SELECT DISTINCT path FROM file_links"
                                         " WHERE candidate IN ({ids})", rels)}

    def policy_paths(self) -> list[str]:
        """Files with policy text: every file that takes part other than as a link target."""
        return [r[0] for r in self._write.execute(
            "SELECT path FROM files WHERE policy_text IS NOT NULL ORDER BY path")]

    # -- index (writer thread) -----------------------------------------------------------------
    def flush_index(self) -> int:
        """Rewrite the index entries of every pending file; return how many files."""
        pending = [r[0] for r in self._write.execute("SELECT path FROM pending_index")]
        if not pending:
            self.dirty = False
            return 0
        for part in batches(pending, 500):
            rows = in_batches(
                self._write, "SELECT c.chunk_id, c.path, c.heading, c.text, f.mtime_ns,"
                " COALESCE(s.status, 'current') AS status FROM chunks c"
                " JOIN files f ON f.path = c.path LEFT JOIN record_state s"
                " ON s.record_id = c.path WHERE c.path IN ({ids})", part)
            self.index.replace("path", [(p, None) for p in part])
            skipped = self.index.replace("chunk_id", [(r["chunk_id"], {
                "chunk_id": r["chunk_id"], "path": r["path"], "text": r["text"],
                "heading": r["heading"] or "", "status": r["status"],
                "mtime": r["mtime_ns"] // 1_000_000_000,
            }) for r in rows])
            for chunk_id, reason in skipped:
                log.error("index_chunk_skipped", chunk=chunk_id, reason=reason)
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
        return {r["path"]: Fingerprint(r["size"], r["mtime_ns"], r["sha256"], r["indexed_at"])
                for r in in_batches(self._read(), "SELECT path, size, mtime_ns, sha256,"
                                    " indexed_at FROM files WHERE path IN ({ids})", rels)}

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
            "SELECT status, COUNT(*) FROM record_state GROUP BY status").fetchall())
        return {
            "files": conn.execute("SELECT COUNT(*) FROM files").fetchone()[0],
            "chunks": conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0],
            "superseded": states.get(SUPERSEDED, 0),
            "conflicted": states.get("conflicted", 0),
            "pending_index": conn.execute("SELECT COUNT(*) FROM pending_index").fetchone()[0],
        }

    def file_state(self, rel: str) -> dict[str, Any]:
        row = self._read().execute("SELECT * FROM record_state WHERE record_id = ?",
                                   (rel,)).fetchone()
        if row is None or row["status"] == CURRENT:
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
            hidden = _count(searcher.search(boolean(base), limit=1, count=True)) - _count(result)
        scored = [(str(searcher.doc(addr).get_first("chunk_id")), float(score))
                  for score, addr in result.hits]
        rows = self._chunk_rows([cid for cid, _ in scored])
        relevance = Terms(self.index, searcher, "text", words(text)).relevance(
            "chunk_id", [cid for cid, _ in scored])
        hits = []
        for chunk_id, score in scored:
            row = rows.get(chunk_id)
            if row is None:  # deleted after the searcher was taken
                continue
            hits.append(_hit(row, score, relevance.get(chunk_id, 0.0)))
        return hits, max(hidden, 0)

    def terms(self, query_words: list[str]) -> Terms:
        """``query_words`` as this index weighs them (``index.Terms``)."""
        return Terms(self.index, self.index.searcher(), "text", query_words)

    def document_rows(self) -> list[dict[str, Any]]:
        """Every indexed document (not code): its path, frontmatter, mtime (seconds) and
        chunks as (start line, text), in path order; what the document lint reads."""
        out: dict[str, dict[str, Any]] = {}
        for row in self._read().execute(
                "SELECT f.path, f.frontmatter, f.mtime_ns, c.start_line, c.text FROM files f"
                " LEFT JOIN chunks c ON c.path = f.path WHERE f.kind != 'code'"
                " ORDER BY f.path, c.start_line"):
            doc = out.get(row["path"])
            if doc is None:
                doc = out[row["path"]] = {
                    "path": row["path"], "frontmatter": _json_object(row["frontmatter"]),
                    "mtime": row["mtime_ns"] / 1e9, "chunks": []}
            if row["start_line"] is not None:
                doc["chunks"].append((row["start_line"], row["text"]))
        return list(out.values())

    def file_states(self, rels: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The derived state of each of these files that is not current."""
        return {r["record_id"]: {k: r[k] for k in ("status", "superseded_by", "confidence",
                                                   "evidence")}
                for r in in_batches(self._read(), "SELECT * FROM record_state WHERE"
                                    " status != 'current' AND record_id IN ({ids})", rels)}

    def has_path(self, rel: str) -> bool:
        """Whether ``rel`` is an indexed file, or a folder holding one."""
        conn = self._read()
        if conn.execute("SELECT 1 FROM files WHERE path = ?", (rel,)).fetchone():
            return True
        prefix = rel.rstrip("/") + "/"
        return conn.execute("SELECT 1 FROM files WHERE substr(path, 1, ?) = ? LIMIT 1",
                            (len(prefix), prefix)).fetchone() is not None

    # -- the decision documents' state (any thread) ----------------------------------------------
    _LIVE: Final = state.Live(
        "files", {"id": "{t}.path", "created_at": "({t}.mtime_ns / 1e9)", "source": "{t}.path",
                  "session_id": "NULL", "text": "{t}.policy_text", "path": "{t}.path"},
        "{t}.policy_text IS NOT NULL", (), lines=True)

    def current_claims(self, limit: int) -> list[dict[str, Any]]:
        """Claims of decision documents (files taking part in the policy) still believed."""
        return state.current_claims(self._read(), self._LIVE, limit=limit)

    def retired_since(self, since: float, limit: int) -> list[dict[str, Any]]:
        return state.retired_since(self._read(), self._LIVE, since, limit=limit)

    def conflicts(self, limit: int) -> list[dict[str, Any]]:
        return state.conflicts(self._read(), self._LIVE, limit=limit)

    def claims_by_id(self, claim_ids: Collection[str]) -> list[dict[str, Any]]:
        """Decision documents' claims by id (memory's chains name them), with path and line."""
        return state.claims_by_id(self._read(), self._LIVE, sorted(claim_ids))

    def _chunk_rows(self, chunk_ids: list[str]) -> dict[str, sqlite3.Row]:
        return {row["chunk_id"]: row for row in in_batches(
            self._read(), "SELECT c.*, f.mtime_ns, f.kind,"
            " COALESCE(s.status, 'current') AS status,"
            " s.superseded_by, s.confidence, s.evidence FROM chunks c"
            " JOIN files f ON f.path = c.path LEFT JOIN record_state s ON s.record_id = c.path"
            " WHERE c.chunk_id IN ({ids})", chunk_ids)}


def _json_object(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _count(result: tantivy.SearchResult) -> int:
    """The number of matching documents (asked for with ``count=True``; not in the stubs)."""
    return int(result.count)  # type: ignore[attr-defined]


def _hit(row: sqlite3.Row, score: float, relevance: float) -> dict[str, Any]:
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
        "doc_type": row["kind"],
        "content": row["text"],
        "score": score,
        "relevance": relevance,
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
