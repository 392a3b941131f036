"""memory.db and its Tantivy index: the only code that reads or writes them.

Threading: mutating methods run on the writer thread only (inside ``Writer`` batches); read
methods may run on any thread and use a per-thread read connection (WAL lets them run beside
the writer). The index is derived, so it is brought in step by the store's own indexer thread
after each commit: a Tantivy commit costs tens of milliseconds, and the writer need not wait
for it before taking the next batch. The indexer reads committed rows only, and touches the
index only; the writer clears the ``pending_index`` rows it reports done.

The store persists; it derives nothing. The durable tables are migrated by name
(``migrations.py``); the derived policy tables are read and written as rows
(``derived_tables.py``) by the one policy engine, through ``lintaid.derivation``.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

import tantivy

from lintaid.capture.record import NewRecord, content_fingerprint, normalize_user
from lintaid.clock import HybridClock
from lintaid.logs import get_logger
from lintaid_client import models, paths
from lintaid_client.redact import redact, redact_value

from . import chains, integrity, state, timeline, transfer, wal_loss
from .backup import BackupInfo, Retention, copy_database, rolling_backup
from .board import BoardTable
from .derived_tables import DerivedTables
from .index import millis
from .ledger import LedgerTable
from .links import closes_cycle, cycle_message
from .migrations import migrate
from .outbox import EXPIRE, FORGET, LINK, RECORD, REJECT, REJECT_FIELDS, RESTORE, Outbox
from .read_cache import ReadCache
from .reviews import ReviewTable
from .schema import DERIVED_VERSION_KEY, ensure_derived_schema, get_meta, set_meta
from .sqlite import VARIABLE_BUDGET, batches, connect, in_batches, transaction
from .user_index import UserIndexes
from .watch import ensure_watch

INDEX_VERSION = 8  # 4: created_at and expires_at in milliseconds; 5: client; 6: one index per
# user, author, session_id, valid_at; 7: the record's stored copy and audit sequence; 8: the
# words of the kinds of tools a text names (``describe``)
MAX_AHEAD_S = 86_400.0
"""How far ahead of the wall clock a stored or explicit time may pull the store's clock: an
import dated in the year 9000 must not drag every later stamp there."""
MAX_AUTHOR_CHARS = 100
MISSING_KEY: Final = integrity.MISSING_KEY  # the last report of lost WAL writes
MISSING_SHOWN_S: Final = integrity.MISSING_SHOWN_S
AUTHORED, TURN = "author", "turn"
"""Traits: the record has an author; it is a conversation turn (an author and a session)."""
log = get_logger("lintaid.store")


class StoreError(Exception):
    """A request the store refuses; ``code`` is a protocol error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def transient(err: BaseException) -> bool:
    """Whether a write failed for a reason that may pass (a full disk, a lock, an I/O
    error), not because of what was written."""
    return isinstance(err, (sqlite3.OperationalError, OSError)) and not integrity.is_damage(err)


def _memory_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    # ``content`` is what the record still says (superseded claim sentences blanked out), so a
    # retired statement cannot win a current query; ``content_all`` is the whole text, for
    # history queries.
    sb.add_text_field("content", stored=False, tokenizer_name="en_stem")
    sb.add_text_field("content_all", stored=False, tokenizer_name="en_stem")
    # The subjects and values of the record's current claims: a record that currently states
    # something about what the query names should outrank one that merely mentions it.
    sb.add_text_field("claims", stored=False, tokenizer_name="en_stem")
    sb.add_text_field("user_id", tokenizer_name="raw")
    sb.add_text_field("status", tokenizer_name="raw")
    sb.add_text_field("kind", tokenizer_name="raw")
    sb.add_text_field("client", tokenizer_name="raw")  # the agent client that captured it
    # Who said it (``metadata.author``): matched as a name, never as words of the text.
    sb.add_text_field("author", stored=True, tokenizer_name="default")
    sb.add_text_field("session_id", stored=True, tokenizer_name="raw")
    # TRAITS: what kinds of records a user's index holds, so a search pays for a rule only
    # when it can apply.
    sb.add_text_field("traits", tokenizer_name="raw")
    sb.add_integer_field("created_at", indexed=True, fast=True, stored=True)
    sb.add_integer_field("valid_at", indexed=True, fast=True, stored=True)
    sb.add_integer_field("expires_at", indexed=True, fast=True)
    # What brings back a write memory.db lost with its WAL (``wal_loss``): the record's
    # durable columns and links, and the audit sequence of its newest change.
    sb.add_integer_field(wal_loss.AUDIT_SEQ, indexed=True, fast=True)
    sb.add_bytes_field(wal_loss.ROW, stored=True)
    return sb.build()


def author_of(metadata: str | None) -> str | None:
    """A record's author: its ``metadata.author`` when that is a non-blank string."""
    try:
        meta = json.loads(metadata) if metadata else {}
    except ValueError:
        return None
    author = meta.get("author") if isinstance(meta, dict) else None
    if not isinstance(author, str) or not author.strip():
        return None
    return " ".join(author.split())[:MAX_AUTHOR_CHARS]


class MemoryStore:
    """``wall``: the wall clock the store's hybrid clock reads (tests step it back).
    ``describe``: words the index adds to a text beside it (the daemon hands in
    ``lintaid.policy.kinds.kind_terms``: "Postgres" is a database), so a question in other
    words finds it; the store knows no vocabulary of its own."""

    def __init__(self, root: Path, *, wall: Callable[[], float] = time.time,
                 describe: Callable[[str], str] | None = None) -> None:
        self.root = root
        self._wall = wall
        self._describe = describe
        paths.ensure_state_dir(root)
        self.db_path = paths.memory_db_path(root)
        self.clock = HybridClock(wall=wall)
        self.generation = 0  # one step as each transaction begins and one as it ends
        self.cache = ReadCache(lambda: self.generation)  # what a read found, until then
        self._rows_ahead = False  # records dated beyond the clock's reach (not followed)
        self._write, self.integrity = self._open()
        self.derived = DerivedTables(self._write)
        self.reviews = ReviewTable(self._write, self._read)  # held review decisions
        self.ledger = LedgerTable(self._write, self._read)  # what each injection gave
        self.board = BoardTable(self._write, self._read)  # bulletin board posts, not memory
        self._backed_up_changes = -1  # set after the start-up writes below
        self._local = threading.local()
        self.outbox = Outbox(self._write, self._read)  # the team tier's; idle until one is joined
        self._changed: set[str] = set()  # records written by the batch in progress
        self._seq = self._write.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM pending_index").fetchone()[0]
        self._indexed: dict[str, int] = {}  # (record, seq) in the index, rows not yet cleared
        self._indexed_lock = threading.Lock()
        self._index_requests: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self.index = UserIndexes(paths.index_dir(root, "memory"), _memory_schema, INDEX_VERSION)
        self.recovered: list[str] = []  # written back from the index at start (WAL loss)
        self._recovered_added: set[str] = set()
        self._mark = wal_loss.read_mark(self.index.path)
        self.missing = {} if self.index.rebuilt else self._missing_acknowledged()
        if self.index.rebuilt:
            self._write.execute(
                "INSERT OR IGNORE INTO pending_index(record_id, seq) SELECT id, 0 FROM records"
                " WHERE forgotten_at IS NULL"
            )
        # A user's index recreated empty, or missing (its folder removed): fed again.
        indexed = set(self.index.users())
        stored = {r[0] for r in self._write.execute("SELECT DISTINCT user_id FROM records"
                                                    " WHERE forgotten_at IS NULL")}
        for user in sorted(set(self.index.broken) | (stored - indexed)):
            self._write.execute(
                "INSERT OR IGNORE INTO pending_index(record_id, seq) SELECT id, 0 FROM records"
                " WHERE forgotten_at IS NULL AND user_id = ?", (user,))
        try:
            self._index_pending(self._write)  # replay what a crash left behind, before serving
        except Exception as err:  # rows stay pending: the indexer retries after each commit
            log.error("index_replay_failed", error=str(err))
        self._clear_indexed()
        self._backed_up_changes = self._write.total_changes
        self._indexer = threading.Thread(target=self._index_loop, name="lintaid-indexer",
                                         daemon=True)
        self._indexer.start()

    def _open(self) -> tuple[sqlite3.Connection, str]:
        """Connect, check, migrate and read the clock's start: raise ``integrity.Damaged``
        (nothing written) when SQLite finds the file damaged on the way."""
        conn: sqlite3.Connection | None = None
        try:
            conn = connect(self.db_path, durable=True)
            checked = integrity.check(conn, self.db_path, wall=self._wall)
            migrate(conn)
            ensure_watch(conn, rebuilt=ensure_derived_schema(conn))
            self._observe_stored(conn)
            return conn, checked
        except BaseException as err:
            if conn is not None:
                conn.close()
            if integrity.is_damage(err):
                raise integrity.Damaged(self.db_path, str(err)) from err
            raise

    def _missing_acknowledged(self) -> dict[str, Any]:
        """Acknowledged writes memory.db no longer holds (its WAL was damaged or deleted):
        found from the index, written back where its stored copy allows (``wal_loss``), and
        reported (the log, ``status``, doctor; kept in ``meta`` and shown for a week). The
        records written back are derived again by the writer's first batch
        (``settle_recovered``)."""
        with transaction(self._write):
            lost = wal_loss.find_and_recover(self._write, self.index, self.audit,
                                             self.index.broken)
            if not lost.ids and not lost.forgotten:  # an earlier report shows for a week
                try:
                    report = json.loads(get_meta(self._write, MISSING_KEY) or "{}")
                except ValueError:
                    report = {}
                if isinstance(report, dict) and time.time() - float(
                        report.get("found_at", 0)) < MISSING_SHOWN_S:
                    return report
                return {}
            report = lost.report()
            set_meta(self._write, MISSING_KEY, json.dumps(report))
            # Audit sequences past the floor are handed out again from here: the mark
            # starts over at what memory.db now holds (the index has every change in it).
            self._mark = int(self._write.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM audit").fetchone()[0])
        wal_loss.write_mark(self.index.path, self._mark)
        self.recovered = lost.touched
        self._recovered_added = set(lost.added)
        for rid in self.recovered:
            row = self._write.execute("SELECT created_at FROM records WHERE id = ?",
                                      (rid,)).fetchone()
            if row is not None and isinstance(row[0], (int, float)):
                self.clock.observe(float(row[0]))
        log.error("acknowledged_writes_missing", **{k: v for k, v in report.items()
                                                     if k != "found_at"},
                  note="memory.db lacked writes its index held: its WAL was damaged or "
                       "deleted; what the index kept a copy of is written back")
        self.index.commit()
        return report

    def settle_recovered(self) -> None:
        """Writer thread, first batch: derive and index again what ``_missing_acknowledged``
        wrote back, and queue the shared records it added for the team once more (the
        server keys a record's event on its id, so one that did leave is not stored twice)."""
        ids, self.recovered = self.recovered, []
        added, self._recovered_added = self._recovered_added, set()
        if not ids:
            return
        self.mark_dirty(ids)
        for row in in_batches(self._write, "SELECT * FROM records WHERE id IN ({ids})"
                              " AND forgotten_at IS NULL", sorted(added)):
            if self.outbox.shares(row) and row["member"] is None:
                self.outbox.note(RECORD, row["id"], row["created_at"])

    # -- connections ---------------------------------------------------------------------
    def _read(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.db_path, durable=True)
            self._local.conn = conn
        return conn

    @property
    def db(self) -> sqlite3.Connection:
        """The write connection: for the writer thread and the policy state updater."""
        return self._write

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.generation += 1
        try:
            with transaction(self._write):
                self._clear_indexed()
                yield
        finally:
            self._changed.clear()
            self.generation += 1

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """One job inside a batch: its failure undoes only its own changes."""
        self._write.execute("SAVEPOINT job")
        changed_before = set(self._changed)
        try:
            yield
        except BaseException:
            self._write.execute("ROLLBACK TO job")
            self._write.execute("RELEASE job")
            self._changed = changed_before
            raise
        self._write.execute("RELEASE job")

    def close(self) -> None:
        """Stop the indexer after a last pass (the writer has stopped), then close."""
        if self._indexer.is_alive():
            self._index_requests.put(None)
            self._indexer.join(60)
        self._clear_indexed()
        self.index.close()
        self._write.close()

    # -- backups (any thread) ------------------------------------------------------------
    def backup(self, to: Path | None = None, retention: Retention | None = None) -> BackupInfo:
        """A consistent copy of memory.db, taken while the writer goes on: to ``to``, or as
        the next rolling backup (older ones kept as ``retention`` says). Raise
        ``integrity.Damaged`` when the copy is not whole."""
        changes = self._write.total_changes
        if to is None:
            info = rolling_backup(self.root, self.db_path, retention)
            self._backed_up_changes = changes
        else:
            info = copy_database(self.db_path, to)
        return info

    def changed_since_backup(self) -> bool:
        """Whether anything was written since the last rolling backup (or since start, when
        this daemon made none: a restart without writes makes no new backup)."""
        return self._write.total_changes != self._backed_up_changes

    # -- the clock -----------------------------------------------------------------------
    def _observe_stored(self, conn: sqlite3.Connection) -> None:
        """Start the clock after every stored stamp, so a restart with the wall clock behind
        the newest record still writes newer ones. Stamps beyond ``MAX_AHEAD_S`` are not
        followed (logged): they came from a broken clock or an unchecked import."""
        horizon = self._wall() + MAX_AHEAD_S
        for table, column in (("records", "created_at"), ("links", "at")):
            row = conn.execute(
                f"SELECT MAX({column}), SUM({column} > ?) FROM {table}"
                f" WHERE typeof({column}) IN ('real', 'integer')", (horizon,)).fetchone()
            newest, ahead = row[0], row[1] or 0
            if ahead:
                self._rows_ahead = self._rows_ahead or table == "records"
                newest = conn.execute(
                    f"SELECT MAX({column}) FROM {table} WHERE typeof({column}) IN"
                    f" ('real', 'integer') AND {column} <= ?", (horizon,)).fetchone()[0]
                log.warning("clock_rows_ahead", table=table, rows=ahead,
                            note="dated more than a day ahead of the wall clock; not followed")
            if newest is not None:
                self.clock.observe(float(newest))

    def _stamp(self, explicit: float | None) -> float:
        """The stamp of a new row: the clock's next, or an explicit (imported) time that the
        clock takes in, so everything written after it is newer."""
        if explicit is None:
            return self.clock.now()
        if explicit > self._wall() + MAX_AHEAD_S:
            raise StoreError("bad_request", "created_at is more than a day ahead of this "
                             "machine's clock")
        self.clock.observe(explicit)
        return explicit

    def take_time(self, explicit: float | None) -> float:
        """Writer thread: an explicit (imported) time, taken in by the clock, else the
        clock's next stamp."""
        return self._stamp(explicit)

    # -- writes (writer thread) ----------------------------------------------------------
    def mark_dirty(self, record_ids: Iterable[str], *, derive: bool = True) -> None:
        """Note records whose derived state or index entry must be brought in step
        (``derive=False``: only the index entry; their derived state is in step already)."""
        ids = [i for i in record_ids if i]
        if ids:
            if derive:
                self._changed.update(ids)
            self._seq += 1
            self._write.executemany(
                "INSERT OR REPLACE INTO pending_index(record_id, seq) VALUES (?, ?)",
                [(i, self._seq) for i in ids],
            )

    def _clear_indexed(self) -> None:
        """Drop the pending rows the indexer has made durable (unless marked again since)."""
        with self._indexed_lock:
            done, self._indexed = list(self._indexed.items()), {}
        if not done:
            return
        sql = "DELETE FROM pending_index WHERE record_id = ? AND seq = ?"
        if self._write.in_transaction:
            self._write.executemany(sql, done)
        else:  # at start or stop: one commit, not one fsync per row
            with transaction(self._write):
                self._write.executemany(sql, done)

    def audit(self, actor: str, op: str, target: str, user_id: str, before: str | None,
              after: str | None, detail: dict[str, Any] | None = None) -> None:
        self._write.execute(
            "INSERT INTO audit(at, actor, op, target, user_id, before_hash, after_hash,"
            " before_content, after_content, detail) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (time.time(), actor, op, target, user_id,
             content_fingerprint(before) if before is not None else None,
             content_fingerprint(after) if after is not None else None,
             _redact_text(before), _redact_text(after), json.dumps(redact_value(detail or {}))),
        )

    def put(self, rec: NewRecord, actor: str, *, op: str = "add") -> tuple[str, str]:
        """Insert a record; return (id, event). ``op``: the audit log's word for it.

        The event is ADD, NONE (already there), SUPERSEDE (already there, and the ``supersedes``
        link it carries was new, so it was added) or FORGOTTEN. Every text of the record is
        redacted here, whatever path it came by (redaction is idempotent: what a caller
        redacted already comes out the same, with the same id).
        """
        rec = redacted(rec)
        rid = rec.record_id
        user = normalize_user(rec.user_id)
        fingerprint = content_fingerprint(rec.content)
        if rec.supersedes == rid:
            raise StoreError("bad_request", "a memory cannot supersede itself")
        row = self._write.execute(
            "SELECT forgotten_at FROM records WHERE id = ?", (rid,)
        ).fetchone()
        if row is not None:
            if row["forgotten_at"] is not None:
                return rid, "FORGOTTEN"
            if rec.supersedes:
                self._require_visible(rec.supersedes, user)
                if self._add_link(rid, rec.supersedes, user, actor):
                    return rid, "SUPERSEDE"
            return rid, "NONE"
        tomb = self._write.execute(
            "SELECT record_id FROM tombstones WHERE fingerprint = ? AND user_id = ?",
            (fingerprint, user),
        ).fetchone()
        if tomb is not None:
            return tomb["record_id"], "FORGOTTEN"
        if rec.supersedes:
            self._require_visible(rec.supersedes, user)
        created = self._stamp(rec.created_at)
        now = time.time()
        self._write.execute(
            "INSERT INTO records(id, kind, source, user_id, provider, session_id, event, doc_type,"
            " cwd, branch, revision, paths, tools, metadata, file_hashes, content, content_hash,"
            " created_at, updated_at, valid_at, expires_at, turn_id, request_hash, private,"
            " member, machine) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (rid, rec.kind, rec.source, user, rec.provider, rec.session_id, rec.event,
             rec.doc_type, rec.cwd, rec.branch, rec.revision, json.dumps(rec.paths),
             json.dumps(rec.tools), json.dumps(rec.metadata),
             json.dumps(rec.file_hashes), rec.content, fingerprint,
             created, now, rec.valid_at, rec.expires_at, rec.turn_id,
             rec.request_hash, int(rec.private), rec.member, rec.machine),
        )
        self.audit(actor, op, rid, user, None, rec.content,
                   {"supersedes": rec.supersedes} if rec.supersedes else None)
        if self.outbox.shares({"user_id": user, "kind": rec.kind, "private": rec.private,
                               "provider": rec.provider, "member": rec.member}):
            self.outbox.note(RECORD, rid, created)
        if rec.supersedes:
            self._add_link(rid, rec.supersedes, user, actor)
        self.mark_dirty([rid])
        return rid, "ADD"

    def held_request(self, user_id: str, session_id: str | None,
                     request_hash: str | None) -> tuple[str, str, bool] | None:
        """Writer thread: the captured turn ``session_id`` holds with this request (forgotten
        or not), as (id, content, forgotten); None when it holds none."""
        if not session_id or not request_hash:
            return None
        row = self._write.execute(
            "SELECT id, content, forgotten_at IS NOT NULL FROM records WHERE session_id = ?"
            " AND request_hash = ? AND user_id = ? ORDER BY created_at DESC LIMIT 1",
            (session_id, request_hash, normalize_user(user_id))).fetchone()
        return None if row is None else (str(row[0]), str(row[1]), bool(row[2]))

    def _add_link(self, new_id: str, old_id: str, user_id: str, actor: str) -> bool:
        """Hold "``new_id`` supersedes ``old_id``" beside any other link; False: already held.
        A link that would close a cycle is refused."""
        if self._write.execute("SELECT 1 FROM links WHERE new_id = ? AND old_id = ?",
                               (new_id, old_id)).fetchone():
            return False
        if closes_cycle(self._write, new_id, old_id):
            raise StoreError("bad_request", cycle_message(new_id, old_id))
        at = self.clock.now()
        cur = self._write.execute(
            "INSERT OR IGNORE INTO links(new_id, old_id, user_id, actor, at) VALUES (?,?,?,?,?)",
            (new_id, old_id, user_id, actor, at))
        if not cur.rowcount:
            return False
        self.audit(actor, "supersede", old_id, user_id, None, None, {"by": new_id})
        ends = self._write.execute(
            "SELECT user_id, kind, private, provider, member FROM records WHERE id IN (?, ?)",
            (new_id, old_id)).fetchall()
        if len(ends) == 2 and all(self.outbox.shares(end) for end in ends):
            self.outbox.note(LINK, old_id, at, other=new_id)
        self.mark_dirty([new_id, old_id])
        return True

    def sharing_row(self, record_id: str) -> sqlite3.Row | None:
        """Writer thread: what says whether a record is shared (``Outbox.sharable``), seen
        by the batch in progress; None when there is no such record."""
        row = self._write.execute(
            "SELECT user_id, kind, private, provider, member FROM records WHERE id = ?",
            (record_id,)).fetchone()
        return row if isinstance(row, sqlite3.Row) else None

    def _require_visible(self, record_id: str, user_id: str) -> sqlite3.Row:
        row = self._write.execute(
            "SELECT * FROM records WHERE id = ? AND user_id = ? AND forgotten_at IS NULL",
            (record_id, normalize_user(user_id)),
        ).fetchone()
        if not isinstance(row, sqlite3.Row):
            raise StoreError("not_found", f"no memory {record_id!r}")
        return row

    def update(self, record_id: str, user_id: str, content: str, actor: str,
               metadata: dict[str, Any] | None = None) -> None:
        row = self._require_visible(record_id, user_id)
        content = redact(content)
        meta = json.loads(row["metadata"])
        if metadata:
            meta.update(redact_value(metadata))
        self._write.execute(
            "UPDATE records SET content = ?, content_hash = ?, metadata = ?, updated_at = ?"
            " WHERE id = ?",
            (content, content_fingerprint(content), json.dumps(meta), time.time(), record_id),
        )
        self.audit(actor, "update", record_id, row["user_id"], row["content"], content)
        self.mark_dirty([record_id])

    def complete_turn(self, record_id: str, rec: NewRecord, actor: str) -> None:
        """Writer thread: a held turn read again, now whole (its reply, the tools it used and
        the files it touched); the record keeps its id and time."""
        whole = redacted(rec)
        self.update(record_id, whole.user_id, whole.content, actor)
        self._write.execute(
            "UPDATE records SET paths = ?, tools = ?, file_hashes = ? WHERE id = ?",
            (json.dumps(whole.paths), json.dumps(whole.tools), json.dumps(whole.file_hashes),
             record_id))

    def forget(self, record_id: str, user_id: str, reason: str | None, actor: str,
               op: str = "forget") -> None:
        row = self._require_visible(record_id, user_id)
        reason = _redact_text(reason) or None
        now = time.time()
        self._write.execute(
            "UPDATE records SET forgotten_at = ?, forgotten_reason = ? WHERE id = ?",
            (now, reason, record_id),
        )
        self._write.execute(
            "INSERT OR REPLACE INTO tombstones(fingerprint, user_id, record_id, at, reason)"
            " VALUES (?,?,?,?,?)",
            (row["content_hash"], row["user_id"], record_id, now, reason),
        )
        self.audit(actor, op, record_id, row["user_id"], row["content"], None,
                   {"reason": reason} if reason else None)
        if self.outbox.shares(row):
            self.outbox.note(FORGET, record_id, self.clock.now(),
                             detail={"reason": reason} if reason else None)
        self.mark_dirty([record_id])

    def restore(self, record_id: str, user_id: str, reason: str | None, actor: str, *,
                if_forgotten: bool = False) -> bool:
        """Lift a forget: the record takes part again, and its text may be captured again
        (its tombstone goes). Refused unless the record is this user's and forgotten
        (``if_forgotten``: a record not forgotten is left as it is, and False returned).

        Shared like a forget; a record of this store's own that was forgotten before it
        left is queued again too (the server keys a record's event on its id, so one that
        did leave is not stored twice)."""
        row = self._write.execute(
            "SELECT * FROM records WHERE id = ? AND user_id = ?",
            (record_id, normalize_user(user_id))).fetchone()
        if row is None:
            raise StoreError("not_found", f"no memory {record_id!r}")
        reason = _redact_text(reason) or None
        if row["forgotten_at"] is None:
            if if_forgotten:
                return False
            raise StoreError("bad_request", f"{record_id} is not forgotten; nothing to restore")
        self._write.execute(
            "UPDATE records SET forgotten_at = NULL, forgotten_reason = NULL WHERE id = ?",
            (record_id,))
        self._write.execute(
            "DELETE FROM tombstones WHERE user_id = ? AND (record_id = ? OR fingerprint = ?)",
            (row["user_id"], record_id, row["content_hash"]))
        detail = {"forgotten_at": row["forgotten_at"], "forgotten_reason": row["forgotten_reason"]}
        if reason:
            detail["reason"] = reason
        self.audit(actor, "restore", record_id, row["user_id"], None, row["content"], detail)
        if self.outbox.shares(row):
            if row["member"] is None:
                self.outbox.note(RECORD, record_id, row["created_at"])
            self.outbox.note(RESTORE, record_id, self.clock.now(),
                             detail={"reason": reason} if reason else None)
        self.mark_dirty([record_id])
        return True

    def import_row(self, item: dict[str, Any], user_id: str, actor: str) -> dict[str, Any]:
        """Write one imported row (``transfer.apply``), unless it is held already."""
        return transfer.apply(self, item, normalize_user(user_id), actor)

    def set_supersedes(self, new_id: str, old_id: str, user_id: str, actor: str) -> bool:
        """Add the link "``new_id`` supersedes ``old_id``"; links are added, never replaced.

        Returns False when the link was already held. Forgetting either end deactivates it.
        """
        if new_id == old_id:
            raise StoreError("bad_request", "a memory cannot supersede itself")
        self._require_visible(old_id, user_id)
        new = self._require_visible(new_id, user_id)
        return self._add_link(new_id, old_id, new["user_id"], actor)

    def hold_review(self, row: dict[str, Any], documents: Collection[str] = ()) -> None:
        """Hold (or change) one review decision (``reviews.DECISION_COLUMNS``) on two records
        of ``row["user_id"]`` that this store shows (``documents``: ends that are decision
        documents, not records); a rejection between two shared records is shared (an
        acceptance is shared as the link it made; a document's pair stays here)."""
        row = {**row, "reason": _redact_text(row.get("reason")) or None}
        ids = [rid for rid in dict.fromkeys((row["newer_record"], row["older_record"]))
               if rid not in documents]
        ends = self._write.execute(
            "SELECT user_id, kind, private, provider, member FROM records"
            f" WHERE id IN ({', '.join('?' * len(ids))}) AND user_id = ?"
            " AND forgotten_at IS NULL", (*ids, row["user_id"])).fetchall()
        if len(ends) != len(ids):
            raise StoreError("not_found",
                             f"a memory review item {row['item_id']} names is not here")
        self.reviews.hold(row)
        if row["decision"] == "reject" and not documents \
                and all(self.outbox.shares(end) for end in ends):
            detail = {name: row[name] for name in REJECT_FIELDS if row[name] is not None}
            # stamped with the decision's own time, as ``outbox.backfill`` queues it again
            self.outbox.note(REJECT, row["older_record"], row["at"],
                             other=row["newer_record"], detail=detail)

    def expire(self, record_id: str, user_id: str, at: float | None, actor: str) -> None:
        row = self._require_visible(record_id, user_id)
        when = time.time() if at is None else float(at)
        self._write.execute("UPDATE records SET expires_at = ? WHERE id = ?", (when, record_id))
        self.audit(actor, "expire", record_id, row["user_id"], None, None, {"at": when})
        if self.outbox.shares(row):
            self.outbox.note(EXPIRE, record_id, self.clock.now(), detail={"at": when})
        self.mark_dirty([record_id])

    def confirm(self, record_id: str, user_id: str, actor: str, at: float | None = None) -> float:
        """Hold "this is still true" for a visible record; return when. Staleness counts it
        as a confirmation and ages the record from it."""
        row = self._require_visible(record_id, user_id)
        when = time.time() if at is None else float(at)
        self._write.execute(
            "INSERT INTO confirmations(record_id, user_id, actor, at) VALUES (?,?,?,?)",
            (record_id, row["user_id"], actor, when))
        self.audit(actor, "confirm", record_id, row["user_id"], None, None, {"at": when})
        return when

    # -- what the policy engine reads (writer thread, write connection) -------------------------
    def changed_ids(self) -> set[str]:
        """Records written, edited, forgotten or linked by the batch in progress."""
        return set(self._changed)

    def policy_rows(self, ids: Iterable[str]) -> list[sqlite3.Row]:
        """The records among ``ids`` that take part in the policy (not forgotten)."""
        return in_batches(
            self._write, "SELECT id, content, kind, user_id, created_at, valid_at, member"
            " FROM records WHERE forgotten_at IS NULL AND id IN ({ids})", ids)

    def link_rows(self, ids: Iterable[str]) -> list[sqlite3.Row]:
        """Held links (new_id, old_id) with an end in ``ids`` and neither end forgotten."""
        return in_batches(
            self._write, "SELECT l.new_id, l.old_id FROM links l"
            " JOIN records n ON n.id = l.new_id JOIN records o ON o.id = l.old_id"
            " WHERE (l.new_id IN ({ids}) OR l.old_id IN ({ids})) AND l.new_id != l.old_id"
            " AND n.forgotten_at IS NULL AND o.forgotten_at IS NULL", ids)

    def live_ids(self) -> list[str]:
        return [r[0] for r in self._write.execute(
            "SELECT id FROM records WHERE forgotten_at IS NULL ORDER BY id")]

    def derived_version(self) -> str | None:
        return get_meta(self._write, DERIVED_VERSION_KEY)

    def set_derived_version(self, version: str) -> None:
        set_meta(self._write, DERIVED_VERSION_KEY, version)

    def index_now(self) -> None:
        """Bring the index in step on this thread: only before the writer starts."""
        self._index_pending(self._write)
        self._clear_indexed()

    # -- index (writer thread) -------------------------------------------------------------
    def request_index(self, on_indexed: Callable[[], None]) -> None:
        """After a commit: have the indexer catch up, then call ``on_indexed`` (any thread)."""
        self._index_requests.put(on_indexed)

    def _index_loop(self) -> None:
        while True:
            item = self._index_requests.get()
            callbacks = [] if item is None else [item]
            stop = item is None
            while True:  # everything committed so far is caught up by one pass
                try:
                    more = self._index_requests.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                else:
                    callbacks.append(more)
            try:
                self._index_pending(self._read())
            except Exception as err:  # rows stay pending; the next pass or start retries
                log.error("index_update_failed", error=str(err))
            for callback in callbacks:
                callback()
            if stop:
                return

    def _index_pending(self, conn: sqlite3.Connection) -> int:
        """Bring the index in step with every pending record; return how many were written."""
        with self._indexed_lock:
            already = dict(self._indexed)
        pending = [(r[0], r[1]) for r in conn.execute("SELECT record_id, seq FROM pending_index")
                   if already.get(r[0]) != r[1]]
        if not pending:
            return 0
        docs: dict[str, list[tuple[str, dict[str, Any] | None]]] = {}
        skipped: list[tuple[str, str]] = []
        ids = [rid for rid, _ in pending]
        mark = 0  # the newest change this pass takes in (``wal_loss.write_mark``)
        for chunk in batches(ids, 500):
            rows = {
                r["id"]: r for r in in_batches(
                    conn, "SELECT r.*, COALESCE(s.status, 'current') AS status"
                    " FROM records r LEFT JOIN record_state s ON s.record_id = r.id"
                    " WHERE r.id IN ({ids})", chunk)
            }
            audit_seq = wal_loss.newest_audit(conn, chunk)
            mark = max([mark, *audit_seq.values()])
            links = wal_loss.links_of(conn, chunk)
            retired: dict[str, list[tuple[int, int]]] = {}
            current: dict[str, list[str]] = {}
            for r in in_batches(
                conn, "SELECT c.record_id, c.start, c.end, c.subject, c.value,"
                " COALESCE(s.status, 'current') AS status FROM claims c LEFT JOIN claim_state s"
                " ON s.claim_id = c.claim_id WHERE c.record_id IN ({ids})", chunk,
            ):
                if r["status"] == "superseded":
                    retired.setdefault(r[0], []).append((r[1], r[2]))
                else:
                    current.setdefault(r[0], []).append(f"{r['subject']} {r['value']}")
            for rid in chunk:
                row = rows.get(rid)
                if row is None:  # never stored (records are never deleted): nothing to drop
                    continue
                mine = docs.setdefault(row["user_id"], [])
                if row["forgotten_at"] is not None:
                    mine.append((rid, None))
                    continue
                try:
                    doc = _document(row, retired.get(rid, []), current.get(rid, []),
                                    self._describe)
                    doc[wal_loss.AUDIT_SEQ] = audit_seq.get(rid, 0)
                    doc[wal_loss.ROW] = wal_loss.stored_row(row, links.get(rid, []))
                except (ValueError, TypeError) as err:
                    skipped.append((rid, str(err)[:200]))
                    doc = None
                mine.append((rid, doc))
        for user, user_docs in docs.items():
            skipped.extend(self.index.replace(user, user_docs))
        self.index.commit()
        if mark > self._mark:
            self._mark = mark
            wal_loss.write_mark(self.index.path, mark)
        for rid, reason in skipped:  # one bad row never blocks the rest, nor the next start
            log.error("index_row_skipped", record=rid, reason=reason)
        with self._indexed_lock:
            self._indexed.update(pending)
        return len(pending)

    # -- reads (any thread) ----------------------------------------------------------------
    def get_rows(self, ids: list[str]) -> dict[str, sqlite3.Row]:
        # ``supersedes``: the record's latest explicit link (it may hold several).
        return {row["id"]: row for row in in_batches(
            self._read(),
            "SELECT r.*, (SELECT l.old_id FROM links l WHERE l.new_id = r.id"
            " ORDER BY l.at DESC, l.old_id LIMIT 1) AS supersedes,"
            " COALESCE(s.status, 'current') AS state, s.superseded_by,"
            " s.confidence, s.evidence AS state_evidence FROM records r"
            " LEFT JOIN record_state s ON s.record_id = r.id WHERE r.id IN ({ids})", ids)}

    def hit_rows(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """What a search hit shows of each record, in one query: the ``get_rows`` columns,
        ``claims`` (each as ``claims_for`` gives it), ``spans`` (as ``claim_spans`` gives
        them) and ``relations`` (as ``relations_for`` gives them)."""
        out: dict[str, dict[str, Any]] = {}
        for row in in_batches(self._read(), _HIT_ROWS, ids):
            found = dict(row)
            # JSON holds 15 digits of a REAL; times go through it as text, read back whole.
            claims = [{k: _real(v) if k in _REAL_KEYS else v for k, v in c.items()}
                      for c in json.loads(found.pop("claims_json") or "[]")]
            found["claims"] = sorted(claims, key=lambda c: (c["start"], c["n"]))
            found["relations"] = [
                {"kind": r["kind"], "other_id": other, "role": role,
                 "confidence": _real(r["confidence"]), "method": r["method"],
                 "evidence": r["evidence"]}
                for r in json.loads(found.pop("relations_json") or "[]")
                for rid, other, role in ((r["source"], r["target"], "source"),
                                         (r["target"], r["source"], "target"))
                if rid == found["id"]]
            found["spans"] = {c["claim_id"]: timeline.claim_span(c, found) for c in claims}
            out[found["id"]] = found
        return out

    def session_neighbours(self, ids: list[str], *, before: bool = True
                           ) -> dict[str, tuple[str | None, str | None]]:
        """For each of ``ids`` in a session: the records just before (unless ``before`` is
        False: None) and after it in that session (same user, by creation time, then id),
        neither forgotten nor a prompt."""
        near = ("(SELECT n.id FROM records n WHERE n.session_id = c.session_id"
                " AND n.user_id = c.user_id AND n.forgotten_at IS NULL AND n.kind != 'prompt'"
                " AND (n.created_at {op} c.created_at OR (n.created_at = c.created_at"
                " AND n.id {op} c.id)) ORDER BY n.created_at {order}, n.id {order} LIMIT 1)")
        prev = near.format(op="<", order="DESC") if before else "NULL"
        sql = (f"SELECT c.id, {prev} AS prev_id, {near.format(op='>', order='ASC')} AS next_id"
               " FROM records c WHERE c.id IN ({ids}) AND c.session_id IS NOT NULL")
        return {r["id"]: (r["prev_id"], r["next_id"]) for r in in_batches(self._read(), sql, ids)}

    def claims_for(self, ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
        rows = in_batches(
            self._read(),
            "SELECT c.*, COALESCE(s.status, 'current') AS status, s.superseded_by_claim,"
            " s.superseded_by_record, s.confidence,"
            " COALESCE(nc.value, s.superseded_by_value) AS replaced_by_value"
            " FROM claims c LEFT JOIN claim_state s ON s.claim_id = c.claim_id"
            " LEFT JOIN claims nc ON nc.claim_id = s.superseded_by_claim"
            " WHERE c.record_id IN ({ids})", ids)
        for row in sorted(rows, key=lambda r: (r["record_id"], r["start"], r["n"])):
            out[row["record_id"]].append({
                "claim_id": row["claim_id"], "subject": row["subject"],
                "predicate": row["predicate"], "value": row["value"],
                "evidence": row["evidence"], "start": row["start"], "end": row["end"],
                "scope": row["scope"], "effective_at": row["effective_at"],
                "record_id": row["record_id"], "status": row["status"],
                "superseded_by": row["superseded_by_record"],
                "superseded_by_claim": row["superseded_by_claim"],
                "replaced_by_value": row["replaced_by_value"],
            })
        return out

    def claim_spans(self, ids: list[str]) -> dict[str, timeline.Span]:
        """Valid and record time of each claim of these records (``timeline``)."""
        return timeline.claim_spans(self._read(), ids)

    def record_spans(self, ids: list[str]) -> dict[str, timeline.Span]:
        return timeline.record_spans(self._read(), ids)

    def relations_for(self, ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
        seen: set[tuple[str, str, str]] = set()
        for row in in_batches(self._read(), "SELECT * FROM relations WHERE source_record IN"
                              " ({ids}) OR target_record IN ({ids})", ids):
            key = (row["source_claim"], row["kind"], row["target_claim"])
            if key in seen:  # matched in two batches
                continue
            seen.add(key)
            for rid, other, role in ((row["source_record"], row["target_record"], "source"),
                                     (row["target_record"], row["source_record"], "target")):
                if rid in out:
                    out[rid].append({
                        "kind": row["kind"], "other_id": other, "role": role,
                        "confidence": row["confidence"], "method": row["method"],
                        "evidence": row["evidence"],
                    })
        return out

    def visible_row(self, record_id: str, user_id: str) -> sqlite3.Row | None:
        row = self.get_rows([record_id]).get(record_id)
        if row is None or row["forgotten_at"] is not None:
            return None
        if row["user_id"] != normalize_user(user_id):
            return None
        return row

    def list_ids(self, user_id: str, limit: int, offset: int = 0,
                 include_hidden: bool = False, *, client: str | None = None,
                 kinds: Sequence[str] = (), excluded: Sequence[str] = (),
                 doc_types: Sequence[str] = (), branch: str | None = None,
                 session_id: str | None = None, not_session: str | None = None,
                 since: float | None = None, until: float | None = None,
                 status: str | None = None) -> list[str]:
        """Newest first; only ``client``'s captures, ``kinds`` (``doc_types``, on ``branch``,
        of ``session_id``, created in [``since``, ``until``), of ``status``) when given, never
        ``excluded`` kinds nor ``not_session``'s records."""
        sql = ("SELECT r.id FROM records r LEFT JOIN record_state s ON s.record_id = r.id"
               " WHERE r.user_id = ? AND r.forgotten_at IS NULL")
        params: list[Any] = [normalize_user(user_id)]
        for column, value, op in (("branch", branch, "="), ("session_id", session_id, "="),
                                  ("session_id", not_session, "IS NOT"),
                                  ("provider", client, "="), ("created_at", since, ">="),
                                  ("created_at", until, "<")):
            if value is not None:
                sql += f" AND r.{column} {op} ?"
                params.append(value)
        if doc_types:
            sql += f" AND r.doc_type IN ({', '.join('?' * len(doc_types))})"
            params.extend(doc_types)
        if status is not None:
            sql += _STATUS_SQL[status]
            params.append(time.time())
        elif not include_hidden:
            sql += (" AND (r.expires_at IS NULL OR r.expires_at > ?)"
                    " AND COALESCE(s.status, 'current') != 'superseded'")
            params.append(time.time())
        if list(kinds) == [models.NOTE]:
            sql += " AND r.kind = 'note'"  # the literal lets SQLite use records_notes
        elif kinds:
            sql += f" AND r.kind IN ({', '.join('?' * len(kinds))})"
            params.extend(kinds)
        if excluded:
            sql += f" AND r.kind NOT IN ({', '.join('?' * len(excluded))})"
            params.extend(excluded)
        sql += " ORDER BY r.created_at DESC, r.id LIMIT ? OFFSET ?"
        params.extend((limit, offset))
        return [r[0] for r in self._read().execute(sql, params)]

    # -- the project's state (any thread) -------------------------------------------------
    def _live(self, user_id: str | None) -> state.Live:
        """The records a state read may show: the user's, not forgotten, not expired, and
        no prompt (a prompt states nothing)."""
        return state.Live(
            "records", _LIVE_COLUMNS,
            "{t}.user_id = ? AND {t}.forgotten_at IS NULL"
            " AND ({t}.expires_at IS NULL OR {t}.expires_at > ?) AND {t}.kind != ?",
            (normalize_user(user_id), time.time(), models.PROMPT))

    def current_claims(self, user_id: str | None, limit: int,
                       session_id: str | None = None) -> list[dict[str, Any]]:
        return state.current_claims(self._read(), self._live(user_id), limit=limit,
                                    session_id=session_id)

    def retired_since(self, user_id: str | None, since: float,
                      limit: int) -> list[dict[str, Any]]:
        return state.retired_since(self._read(), self._live(user_id), since, limit=limit)

    def retired_values(self, user_id: str | None) -> tuple[list[dict[str, Any]],
                                                           list[dict[str, Any]]]:
        """Every retired claim with what retired it (``state.retired_values``), and the
        claims still believed that hold one of their values (``state.value_holders``): what
        ``retrieval.retired`` needs to find a value retired elsewhere."""
        conn = self._read()
        live = self._live(user_id)
        retired = state.retired_values(conn, live)
        return retired, state.value_holders(conn, live, sorted({r["o_value"] for r in retired}))

    def bare_records_retired_since(self, user_id: str | None, since: float,
                                   limit: int) -> list[dict[str, Any]]:
        return state.bare_records_retired_since(self._read(), self._live(user_id), since,
                                                limit=limit)

    def conflicts(self, user_id: str | None, limit: int) -> list[dict[str, Any]]:
        return state.conflicts(self._read(), self._live(user_id), limit=limit)

    def session_span(self, user_id: str | None, session_id: str) -> tuple[float, float] | None:
        """When a session's first and last records were captured (prompts included)."""
        row = self._read().execute(
            "SELECT MIN(created_at), MAX(created_at) FROM records"
            " WHERE session_id = ? AND user_id = ?",
            (session_id, normalize_user(user_id))).fetchone()
        return None if row is None or row[0] is None else (float(row[0]), float(row[1]))

    def previous_session(self, user_id: str | None, session_id: str | None,
                         provider: str | None = None) -> str | None:
        """The session, other than ``session_id``, with the newest record (of ``provider``
        when given)."""
        sql = ("SELECT session_id FROM records WHERE user_id = ? AND session_id IS NOT NULL"
               " AND session_id IS NOT ? AND member IS NULL")  # a teammate's is not ours
        params: list[Any] = [normalize_user(user_id), session_id]
        if provider is not None:
            sql += " AND provider = ?"
            params.append(provider)
        row = self._read().execute(sql + " ORDER BY created_at DESC LIMIT 1",
                                   params).fetchone()
        return None if row is None else str(row[0])

    # -- what staleness reads (any thread) ----------------------------------------------------
    def latest_time(self) -> float | None:
        """No record or confirmation is dated after this (None: some may be, the store holds
        records dated beyond its clock's reach): evidence known "until" any later time is
        all there is, so it may be kept (``cache``) until the next write."""
        if self._rows_ahead:
            return None
        generation = self.cache.now()
        kept = self.cache.found("latest", ["confirmed"])
        if "confirmed" in kept:
            confirmed = kept["confirmed"]
        else:
            confirmed = self._read().execute("SELECT MAX(at) FROM confirmations").fetchone()[0]
            self.cache.keep("latest", generation, {"confirmed": confirmed})
        return max(self.clock.last, confirmed or 0.0) + 0.001  # past any rounding

    def staleness_rows(self, ids: Iterable[str]) -> dict[str, sqlite3.Row]:
        """Per record: kind, source, user, creation time and derived category."""
        return {r["id"]: r for r in in_batches(
            self._read(), "SELECT r.id, r.kind, r.source, r.user_id, r.created_at, c.category"
            " FROM records r LEFT JOIN record_category c ON c.record_id = r.id"
            " WHERE r.id IN ({ids})", ids)}

    def lint_rows(self, user_id: str, at: float, excerpt_chars: int) -> list[sqlite3.Row]:
        """The records a current read may show at ``at`` (not forgotten, superseded or
        expired; no prompts), oldest first, with the start of their text."""
        return list(self._read().execute(
            "SELECT r.id, r.kind, r.source, r.user_id, r.created_at, c.category,"
            " substr(r.content, 1, ?) AS excerpt FROM records r"
            " LEFT JOIN record_state s ON s.record_id = r.id"
            " LEFT JOIN record_category c ON c.record_id = r.id"
            " WHERE r.user_id = ? AND r.forgotten_at IS NULL AND r.kind != 'prompt'"
            " AND COALESCE(s.status, 'current') != 'superseded' AND r.created_at <= ?"
            " AND (r.expires_at IS NULL OR r.expires_at > ?) ORDER BY r.created_at, r.id",
            (excerpt_chars, normalize_user(user_id), at, at)))

    def verify_candidates(self, user_id: str, at: float, aged_before: dict[str, float],
                          limit: int) -> list[str]:
        """Records a current read may show at ``at`` that may need verifying, oldest first:
        of a category in ``aged_before`` and created before its time there, or contradicted by
        a claim relation, or asserting something about a person (which a later record may
        contradict at any age).

        Read from ``record_watch`` (``watch.py``): per category, its oldest aged rows and its
        oldest flagged ones, each at most ``limit``; the oldest ``limit`` of them all are the
        answer, whatever the store's size."""
        conn, user = self._read(), normalize_user(user_id)
        found: dict[str, float] = {}
        for category, before in aged_before.items():
            for flagged, until in (("", min(before, at)), (" AND w.flagged = 1", at)):
                found.update((row[0], row[1]) for row in conn.execute(
                    "SELECT w.record_id, w.created_at FROM record_watch w"
                    " CROSS JOIN records r ON r.id = w.record_id"
                    f" WHERE w.user_id = ? AND w.category = ?{flagged} AND w.created_at <= ?"
                    " AND (r.expires_at IS NULL OR r.expires_at > ?)"
                    " ORDER BY w.created_at, w.record_id LIMIT ?",
                    (user, category, until, at, limit)))
        return sorted(found, key=lambda rid: (found[rid], rid))[:limit]

    def excerpts(self, ids: Iterable[str], chars: int) -> dict[str, str]:
        """The start of each record's text."""
        return {r[0]: r[1] for r in in_batches(
            self._read(), "SELECT id, substr(content, 1, ?) FROM records WHERE id IN ({ids})",
            ids, (chars,))}

    def confirmation_rows(self, ids: Iterable[str]) -> list[sqlite3.Row]:
        """Explicit confirmations of these records: (n, record_id, at)."""
        return in_batches(self._read(), "SELECT rowid AS n, record_id, at FROM confirmations"
                          " WHERE record_id IN ({ids})", ids)

    def relations_into(self, record_ids: Iterable[str]) -> list[sqlite3.Row]:
        """Claim relations aimed at these records, with the target claim's status."""
        return in_batches(
            self._read(), "SELECT r.*, COALESCE(s.status, 'current') AS target_status"
            " FROM relations r LEFT JOIN claim_state s ON s.claim_id = r.target_claim"
            " WHERE r.target_record IN ({ids})", record_ids)

    def confirms_into(self, claim_ids: Iterable[str]) -> list[sqlite3.Row]:
        """``confirms`` relations aimed at these claims."""
        # ``+kind``: looked up by the claims (relations_target_claim), never from the index on
        # the kind, which reads every confirms relation of the store.
        return in_batches(self._read(), "SELECT * FROM relations WHERE target_claim IN ({ids})"
                          " AND +kind = 'confirms'", claim_ids)

    def created_times(self, ids: Iterable[str]) -> dict[str, float]:
        """Creation times of the records among ``ids`` that are not forgotten."""
        return {r[0]: r[1] for r in in_batches(
            self._read(), "SELECT id, created_at FROM records WHERE forgotten_at IS NULL"
            " AND id IN ({ids})", ids)}

    def assertion_rows(self, ids: Iterable[str]) -> list[sqlite3.Row]:
        return in_batches(self._read(), "SELECT * FROM assertions WHERE record_id IN ({ids})"
                          " ORDER BY record_id, n", ids)

    def assertions_about(self, user_id: str, values: Iterable[tuple[str, str]],
                         attributes: Iterable[tuple[str, str]]) -> list[sqlite3.Row]:
        """Assertions of this user's believed records (not forgotten, not superseded) with a
        (subject, value) among ``values`` or a (subject, attribute) among ``attributes``."""
        out: dict[tuple[str, int], sqlite3.Row] = {}
        conn = self._read()
        for column, pairs in (("value", list(dict.fromkeys(values))),
                              ("attribute", list(dict.fromkeys(attributes)))):
            for chunk in batches(pairs, VARIABLE_BUDGET // 2 - 1):
                # keys first, each looked up in the (user, subject, column) index
                sql = (f"WITH k(subject, key) AS (VALUES {', '.join(['(?, ?)'] * len(chunk))})"
                       " SELECT a.* FROM k CROSS JOIN assertions a ON a.user_id = ?"
                       f" AND a.subject = k.subject AND a.{column} = k.key"
                       " JOIN records r ON r.id = a.record_id"
                       " LEFT JOIN record_state s ON s.record_id = a.record_id"
                       " WHERE r.forgotten_at IS NULL"
                       " AND COALESCE(s.status, 'current') != 'superseded'")
                params = [*(x for pair in chunk for x in pair), normalize_user(user_id)]
                for row in conn.execute(sql, params):
                    out[(row["record_id"], row["n"])] = row
        return list(out.values())

    def chain(self, claim_id: str,
              user_id: str | None) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """The chain ``claim_id`` sits on (``chains.chain_rows``)."""
        return chains.chain_rows(self._read(), claim_id, normalize_user(user_id))

    def chain_links(self, claim_ids: list[str]) -> list[dict[str, Any]]:
        return chains.links_between(self._read(), claim_ids)

    def export_page(self, user_id: str, section: str, after: int, limit: int,
                    include_history: bool, include_prompts: bool = False,
                    ) -> tuple[str, list[dict[str, Any]], tuple[str, int] | None]:
        """One page of the user's export (``transfer.page``)."""
        return transfer.page(self._read(), normalize_user(user_id), section, after, limit,
                             include_history, include_prompts)

    def texts_at(self, ids: Iterable[str], at: float) -> dict[str, tuple[str, float | None]]:
        """For each record among ``ids`` whose text was edited after ``at``: its text as it
        was then (the first later edit's ``before``) and when that text was last written
        (the last edit at or before ``at``; None: as created), from the audit log."""
        rows = in_batches(self._read(), "SELECT target, at, before_content FROM audit"
                          " WHERE op = 'update' AND target IN ({ids}) ORDER BY seq", ids)
        out: dict[str, tuple[str, float | None]] = {}
        written: dict[str, float] = {}
        for row in rows:
            rid = row["target"]
            if row["at"] <= at:
                written[rid] = row["at"]
            elif rid not in out and row["before_content"] is not None:
                out[rid] = (row["before_content"], None)
        return {rid: (text, written.get(rid)) for rid, (text, _w) in out.items()}

    def audit_rows(self, record_id: str) -> list[sqlite3.Row]:
        return list(self._read().execute(
            "SELECT * FROM audit WHERE target = ? ORDER BY seq", (record_id,)
        ))

    def audit_list(self, user_id: str, *, target: str | None = None,
                   since: float | None = None, actor: str | None = None,
                   after_seq: int = 0, limit: int = 100,
                   newest_first: bool = False) -> list[sqlite3.Row]:
        """The user's audit rows in the order they were written (after ``after_seq``), or
        newest first (before ``after_seq``, unless 0): of one ``target``, at or after
        ``since``, by ``actor`` when given."""
        sql = "SELECT * FROM audit WHERE user_id = ?"
        params: list[Any] = [normalize_user(user_id)]
        if after_seq:
            sql += " AND seq < ?" if newest_first else " AND seq > ?"
            params.append(after_seq)
        for column, value, op in (("target", target, "="), ("at", since, ">="),
                                  ("actor", actor, "=")):
            if value is not None:
                sql += f" AND {column} {op} ?"
                params.append(value)
        order = " ORDER BY seq DESC" if newest_first else " ORDER BY seq"
        return list(self._read().execute(sql + order + " LIMIT ?", [*params, limit]))

    def counts(self) -> dict[str, Any]:
        """Record counts; prompts are counted apart (``prompts``), never among records; with
        more than one user, ``users``: each one's records and prompts (not forgotten)."""
        conn = self._read()
        now = time.time()
        row = conn.execute(
            "SELECT SUM(kind != ?) AS total, SUM(kind = ?) AS prompts,"
            " SUM(forgotten_at IS NOT NULL AND kind != ?) AS forgotten,"
            " SUM(forgotten_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?"
            " AND kind != ?) AS expired FROM records",
            (models.PROMPT, models.PROMPT, models.PROMPT, now, models.PROMPT),
        ).fetchone()
        states = dict(conn.execute(
            "SELECT s.status, COUNT(*) FROM record_state s JOIN records r ON r.id = s.record_id"
            " WHERE r.forgotten_at IS NULL AND r.kind != ? GROUP BY s.status", (models.PROMPT,)
        ).fetchall())
        with self._indexed_lock:
            done = len(self._indexed)
        pending = max(0, conn.execute("SELECT COUNT(*) FROM pending_index").fetchone()[0] - done)
        claims = conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0]
        users = {str(r["user_id"]): {"records": r["records"] or 0, "prompts": r["prompts"] or 0}
                 for r in conn.execute(
                     "SELECT user_id, SUM(kind != ?) AS records, SUM(kind = ?) AS prompts"
                     " FROM records WHERE forgotten_at IS NULL GROUP BY user_id ORDER BY user_id",
                     (models.PROMPT, models.PROMPT))}
        return {
            "records": row["total"] or 0,
            "prompts": row["prompts"] or 0,
            "forgotten": row["forgotten"] or 0,
            "expired": row["expired"] or 0,
            "superseded": states.get("superseded", 0),
            "conflicted": states.get("conflicted", 0),
            "claims": claims,
            "pending_index": pending,
            # per user (not forgotten), only where more than one user has records
            **({"users": users} if len(users) > 1 else {}),
        }


def _document(row: sqlite3.Row, retired: list[tuple[int, int]], current: list[str],
              describe: Callable[[str], str] | None = None) -> dict[str, Any]:
    """One record's index document; ValueError or TypeError for a row that cannot be one.
    ``describe``'s words for what the record still says go beside ``content``, and for its
    whole text beside ``content_all`` (a retired tool's kind is no current match)."""
    content = row["content"]
    if not isinstance(content, str):
        raise ValueError(f"content is a {type(content).__name__}, not text")
    author = author_of(row["metadata"])
    still = blank(content, retired)
    if describe is not None:
        still, content = f"{still}\n{describe(still)}", f"{content}\n{describe(content)}"
    return {
        "id": row["id"], "content": still, "content_all": content,
        "claims": " ; ".join(current), "user_id": str(row["user_id"]),
        "status": str(row["status"]), "kind": str(row["kind"]),
        "created_at": millis(row["created_at"]), "expires_at": millis(row["expires_at"]),
        **({"valid_at": millis(row["valid_at"])} if row["valid_at"] is not None else {}),
        **({"client": str(row["provider"])} if row["provider"] else {}),
        **({"author": author, "traits": [AUTHORED, TURN] if row["session_id"] else [AUTHORED]}
           if author else {}),
        **({"session_id": str(row["session_id"])} if row["session_id"] else {}),
    }


_CONFLICTED_CLAIM: Final = ("EXISTS (SELECT 1 FROM claim_state cs WHERE cs.record_id = r.id"
                             " AND cs.status = 'conflicted')")
_STATUS_SQL: Final = {
    # One word of the status vocabulary as ``search._record_status`` derives it (expiry first;
    # a conflicted record without a conflicted claim only has retired statements); each takes
    # the time now.
    models.EXPIRED: " AND r.expires_at IS NOT NULL AND r.expires_at <= ?",
    models.CURRENT: " AND (r.expires_at IS NULL OR r.expires_at > ?)"
                    " AND COALESCE(s.status, 'current') = 'current'",
    models.SUPERSEDED: " AND (r.expires_at IS NULL OR r.expires_at > ?)"
                       " AND s.status = 'superseded'",
    models.CONFLICTED: " AND (r.expires_at IS NULL OR r.expires_at > ?)"
                       f" AND s.status = 'conflicted' AND {_CONFLICTED_CLAIM}",
    models.PARTLY_SUPERSEDED: " AND (r.expires_at IS NULL OR r.expires_at > ?)"
                              f" AND s.status = 'conflicted' AND NOT {_CONFLICTED_CLAIM}",
}

_LIVE_COLUMNS: Final = {"id": "{t}.id", "created_at": "{t}.created_at", "source": "{t}.source",
                        "session_id": "{t}.session_id", "text": "{t}.content", "path": "NULL"}


def _exact(column: str) -> str:
    """A REAL column as text with every digit (SQLite's JSON keeps 15), NULL kept."""
    return f"CASE WHEN {column} IS NULL THEN NULL ELSE printf('%!.17g', {column}) END"


_HIT_ROWS: Final = (
    "SELECT r.*, (SELECT l.old_id FROM links l WHERE l.new_id = r.id"
    " ORDER BY l.at DESC, l.old_id LIMIT 1) AS supersedes,"
    " COALESCE(s.status, 'current') AS state, s.superseded_by, s.confidence,"
    " s.evidence AS state_evidence,"
    " (SELECT json_group_array(json_object("
    "  'claim_id', c.claim_id, 'subject', c.subject, 'predicate', c.predicate,"
    "  'value', c.value, 'evidence', c.evidence, 'start', c.start, 'end', c.\"end\","
    f"  'n', c.n, 'scope', c.scope, 'effective_at', {_exact('c.effective_at')},"
    "  'record_id', c.record_id,"
    "  'status', COALESCE(cs.status, 'current'), 'superseded_by', cs.superseded_by_record,"
    "  'superseded_by_claim', cs.superseded_by_claim,"
    "  'replaced_by_value', COALESCE(nc.value, cs.superseded_by_value),"
    f"  'n_created', {_exact('nr.created_at')}, 'n_valid', {_exact('nr.valid_at')},"
    "  'link_at', (SELECT printf('%!.17g', l.at) FROM links l"
    " WHERE l.new_id = cs.superseded_by_record"
    "   AND l.old_id = c.record_id)))"
    "  FROM claims c LEFT JOIN claim_state cs ON cs.claim_id = c.claim_id"
    "  LEFT JOIN claims nc ON nc.claim_id = cs.superseded_by_claim"
    "  LEFT JOIN records nr ON nr.id = cs.superseded_by_record AND cs.status = 'superseded'"
    "  WHERE c.record_id = r.id) AS claims_json,"
    " (SELECT json_group_array(json_object('kind', x.kind, 'source', x.source_record,"
    "  'target', x.target_record, 'confidence', printf('%!.17g', x.confidence),"
    " 'method', x.method,"
    "  'evidence', x.evidence))"
    "  FROM relations x WHERE x.source_record = r.id OR x.target_record = r.id)"
    "  AS relations_json"
    " FROM records r LEFT JOIN record_state s ON s.record_id = r.id WHERE r.id IN ({ids})")
"""``MemoryStore.hit_rows``: a record, its claims and its relations as one row."""
_REAL_KEYS: Final = frozenset({"effective_at", "n_created", "n_valid", "link_at"})


def _real(text: Any) -> float | None:
    return None if text is None or text == "" else float(text)


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with the given character spans cut out."""
    if not spans:
        return text
    out, at = [], 0
    for start, end in sorted(spans):
        if start > at:
            out.append(text[at:start])
        at = max(at, end)
    out.append(text[at:])
    return " ".join(out)


def _redact_text(text: str | None) -> str | None:
    return redact(text) if isinstance(text, str) and text else text


def redacted(rec: NewRecord) -> NewRecord:
    """``rec`` with every text it stores redacted: content, metadata (keys and values),
    paths, tools, the files it hashed, its folder and where it came from."""
    out = replace(
        rec, content=redact(rec.content), metadata=redact_value(rec.metadata),
        paths=[redact(p) for p in rec.paths], tools=[redact(t) for t in rec.tools],
        file_hashes={redact(k): v for k, v in rec.file_hashes.items()},
        cwd=_redact_text(rec.cwd), source=redact(rec.source),
        session_id=_redact_text(rec.session_id), branch=_redact_text(rec.branch))
    return rec if out == rec else out
