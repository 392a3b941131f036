"""Acknowledged writes memory.db lost with its WAL: found at start, and brought back from the
search index where its stored copy allows.

A write is acknowledged once it is in the WAL; a WAL damaged or deleted before a checkpoint
takes with it everything written since (SQLite's behaviour). The search index lives outside
memory.db and is derived from committed rows only, one document per live record, each
holding a copy of its record's durable columns and of the links it takes part in (``ROW``,
stored, not indexed) and the audit sequence of the record's newest change (``AUDIT_SEQ``).
So at start:

- a document whose audit sequence is past every audit row left (or whose ``created_at`` is
  past every record left) shows a change memory.db lost: a record added, edited, restored,
  expired or linked since the checkpoint. It is written back as the document holds it;
- a live record the index lacks, though the index took in its newest change (the index's
  mark, ``MARK_FILE``, the newest audit sequence it has taken in, written after each of its
  commits, is past it), was forgotten by a lost write (a forget is the only thing that
  takes a record out of the index): it is forgotten again.

Everything memory.db alone held is not recovered: review decisions, confirmations, the
injection ledger, a forget's reason, and what the index had not yet committed when the
daemon stopped (about a second of writes). The audit log says what was recovered
(``recover`` by ``lintaid:recovery``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import tantivy

from lintaid.logs import get_logger

from .index import boolean, millis
from .links import closes_cycle
from .sqlite import in_batches
from .user_index import UserIndexes

ROW: Final = "row"
MARK_FILE: Final = "lintaid-audit-seq"
AUDIT_SEQ: Final = "audit_seq"
ACTOR: Final = "lintaid:recovery"
MAX_FOUND: Final = 100_000
COLUMNS: Final = (
    "id", "kind", "source", "user_id", "provider", "session_id", "event", "doc_type", "cwd",
    "branch", "revision", "paths", "tools", "metadata", "file_hashes", "content",
    "content_hash", "created_at", "updated_at", "valid_at", "expires_at", "turn_id",
    "request_hash", "private", "member", "machine")
"""The durable columns of a record a document keeps a copy of (``forgotten_*`` never: a
forgotten record has no document)."""
_EDITABLE: Final = ("content", "content_hash", "metadata", "updated_at", "paths", "tools",
                    "file_hashes", "expires_at")
log = get_logger("lintaid.store")

Audit = Callable[..., None]
"""``MemoryStore.audit``: (actor, op, target, user, before, after, detail)."""


def stored_row(row: sqlite3.Row, links: Iterable[sqlite3.Row]) -> bytes:
    """What a record's document keeps of it: its durable columns and its links."""
    full = dict(zip(row.keys(), tuple(row), strict=True))
    out: dict[str, Any] = {c: full[c] for c in COLUMNS if c in full}
    out["links"] = [[r["new_id"], r["old_id"], r["user_id"], r["actor"], r["at"]]
                    for r in links]
    return json.dumps(out, separators=(",", ":")).encode()


def newest_audit(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, int]:
    """Each record's newest audit sequence (the record, or a link naming it, changed)."""
    return {str(r[0]): int(r[1]) for r in in_batches(
        conn, "SELECT target, MAX(seq) FROM audit WHERE target IN ({ids}) GROUP BY target",
        ids)}


def links_of(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, list[sqlite3.Row]]:
    out: dict[str, list[sqlite3.Row]] = {}
    for r in in_batches(conn, "SELECT new_id, old_id, user_id, actor, at FROM links"
                        " WHERE new_id IN ({ids}) OR old_id IN ({ids})", ids):
        for end in {r["new_id"], r["old_id"]}:
            out.setdefault(end, []).append(r)
    return out


@dataclass
class Lost:
    """What a start found lost and what it brought back."""

    ids: list[str] = field(default_factory=list)  # records with a lost change
    newest_ms: int = 0
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # edited, restored or expired
    links: int = 0
    forgotten: list[str] = field(default_factory=list)  # forgotten again
    unrecovered: list[str] = field(default_factory=list)  # no stored copy, or refused

    @property
    def touched(self) -> list[str]:
        return sorted({*self.added, *self.changed, *self.forgotten})

    def report(self) -> dict[str, Any]:
        count = len(self.ids) + len(self.forgotten)
        return {"count": count, "ids": sorted({*self.ids, *self.forgotten})[:50],
                "newest_at": self.newest_ms / 1000.0 if self.newest_ms else time.time(),
                "found_at": time.time(),
                "recovered": {"added": len(self.added), "changed": len(self.changed),
                              "links": self.links, "forgotten_again": len(self.forgotten)},
                "unrecovered": len(self.unrecovered),
                "unrecovered_ids": sorted(self.unrecovered)[:50]}


def find_and_recover(conn: sqlite3.Connection, indexes: UserIndexes, audit: Audit,
                     skip_users: Iterable[str] = ()) -> Lost:
    """Inside the caller's transaction on ``conn`` (nothing else writes yet): find what the
    index holds that memory.db lost, and write it back; drop from the index what cannot
    be."""
    lost = Lost()
    skip = set(skip_users)
    seq_floor = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM audit").fetchone()[0])
    row = conn.execute("SELECT MAX(created_at) FROM records"
                       " WHERE typeof(created_at) IN ('real', 'integer')").fetchone()
    created_floor = millis(row[0]) if row and row[0] is not None else -1
    copies: dict[str, tuple[str, dict[str, Any] | None]] = {}
    for user in indexes.users():
        index = indexes.for_user(user)
        if index is None or user in skip:
            continue
        searcher = index.searcher()
        query = boolean([("should", index.int_range(AUDIT_SEQ, seq_floor + 1, None)),
                         ("should", index.int_range("created_at", created_floor + 1, None))])
        for _score, address in searcher.search(query, limit=MAX_FOUND).hits:
            doc = searcher.doc(address)
            rid = str(doc["id"][0])
            lost.newest_ms = max(lost.newest_ms, int(doc["created_at"][0]))
            copies[rid] = (user, _decode(doc.get_first(ROW)))
    held = {str(r["id"]): r for r in in_batches(conn, "SELECT * FROM records WHERE id IN"
                                               " ({ids})", list(copies))} if copies else {}
    for rid, (user, copy) in sorted(copies.items(), key=lambda kv: _stamp(kv[1][1])):
        stored = held.get(rid)
        if copy is None or copy.get("id") != rid or copy.get("user_id") != user:
            if stored is None:
                lost.ids.append(rid)
                lost.unrecovered.append(rid)
            continue
        try:
            change = _write_back(conn, rid, copy, stored, audit, lost)
        except (sqlite3.Error, TypeError, ValueError, KeyError) as err:
            log.error("lost_write_not_recovered", record=rid, error=str(err)[:200])
            change = None
            lost.unrecovered.append(rid)
        if change is not None or stored is None:
            lost.ids.append(rid)
    mark = read_mark(indexes.path)
    if mark > seq_floor:  # the index took in changes memory.db no longer has
        for user in indexes.users():
            if user not in skip:
                lost.forgotten += _forget_unindexed(conn, indexes, user, audit, mark)
    for user in {u for rid, (u, _c) in copies.items() if rid in lost.unrecovered}:
        indexes.replace(user, [(rid, None) for rid in lost.unrecovered
                               if copies[rid][0] == user and rid not in held])
    return lost


def _decode(raw: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(bytes(raw)) if raw is not None else None
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _stamp(copy: dict[str, Any] | None) -> float:
    at = copy.get("created_at") if copy else None
    return float(at) if isinstance(at, (int, float)) else 0.0


def _write_back(conn: sqlite3.Connection, rid: str, copy: dict[str, Any],
                stored: sqlite3.Row | None, audit: Audit, lost: Lost) -> str | None:
    """Bring one record back to what its document holds; return what changed (None:
    nothing, the document was of a change memory.db still holds)."""
    user = str(copy["user_id"])
    change: str | None = None
    if stored is None:
        columns = [c for c in COLUMNS if c in copy]
        conn.execute(f"INSERT INTO records({', '.join(columns)}) VALUES"
                     f" ({', '.join('?' * len(columns))})", [copy[c] for c in columns])
        lost.added.append(rid)
        change = "added"
        audit(ACTOR, "recover", rid, user, None, str(copy["content"]),
              {"from": "index", "change": change})
    else:
        edits = {c: copy[c] for c in _EDITABLE if c in copy and copy[c] != stored[c]}
        restored = stored["forgotten_at"] is not None
        if edits or restored:
            sets = [f"{c} = ?" for c in edits]
            if restored:
                sets += ["forgotten_at = NULL", "forgotten_reason = NULL"]
                conn.execute("DELETE FROM tombstones WHERE user_id = ? AND record_id = ?",
                             (user, rid))
            conn.execute(f"UPDATE records SET {', '.join(sets)} WHERE id = ?",
                         [*edits.values(), rid])
            lost.changed.append(rid)
            change = "restored" if restored else "changed"
            audit(ACTOR, "recover", rid, user, stored["content"],
                  str(copy.get("content", stored["content"])),
                  {"from": "index", "change": change, "columns": sorted(edits)})
    for new_id, old_id, link_user, actor, at in copy.get("links") or []:
        if conn.execute("SELECT 1 FROM links WHERE new_id = ? AND old_id = ?",
                        (new_id, old_id)).fetchone():
            continue
        ends = conn.execute("SELECT COUNT(*) FROM records WHERE id IN (?, ?)",
                            (new_id, old_id)).fetchone()[0]
        if ends != 2 or closes_cycle(conn, new_id, old_id):
            continue  # the other end was lost without a copy, or the link is refused
        conn.execute("INSERT INTO links(new_id, old_id, user_id, actor, at)"
                     " VALUES (?,?,?,?,?)", (new_id, old_id, link_user, actor, at))
        audit(ACTOR, "recover", old_id, str(link_user), None, None,
              {"from": "index", "change": "link", "by": new_id})
        lost.links += 1
        change = change or "linked"
    return change


def _forget_unindexed(conn: sqlite3.Connection, indexes: UserIndexes, user: str,
                      audit: Audit, mark: int) -> list[str]:
    """Live records of ``user`` that the index lacks though it took in their newest change
    (their newest audit row is at or below the index's mark): a lost forget took them out
    of it. Looked for only when the mark is past memory.db's audit log (writes were lost)."""
    index = indexes.for_user(user)
    if index is None:
        return []
    searcher = index.searcher()
    indexed = {str(searcher.doc(address)["id"][0]) for _score, address in searcher.search(
        tantivy.Query.all_query(), limit=max(1, searcher.num_docs)).hits}
    live = [str(r[0]) for r in conn.execute(
        "SELECT id FROM records WHERE user_id = ? AND forgotten_at IS NULL"
        " AND typeof(content) = 'text'", (user,))]
    absent = [rid for rid in live if rid not in indexed]
    seqs = newest_audit(conn, absent)
    gone = [rid for rid in absent if 0 < seqs.get(rid, 0) <= mark]
    now = time.time()
    reason = "forgotten again at start: the forget was lost with memory.db's WAL"
    for rid in gone:
        fingerprint = conn.execute("SELECT content_hash, content FROM records WHERE id = ?",
                                   (rid,)).fetchone()
        conn.execute("UPDATE records SET forgotten_at = ?, forgotten_reason = ? WHERE id = ?",
                     (now, reason, rid))
        conn.execute("INSERT OR REPLACE INTO tombstones(fingerprint, user_id, record_id, at,"
                     " reason) VALUES (?,?,?,?,?)", (fingerprint[0], user, rid, now, reason))
        conn.execute("DELETE FROM pending_index WHERE record_id = ?", (rid,))
        audit(ACTOR, "recover", rid, user, str(fingerprint[1]), None,
              {"from": "index", "change": "forgotten", "reason": reason})
    return gone


def read_mark(folder: Path) -> int:
    """The newest audit sequence the index has taken in (0: unknown)."""
    try:
        return int((folder / MARK_FILE).read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def write_mark(folder: Path, seq: int) -> None:
    """After an index commit: the index has taken in every change up to audit ``seq``."""
    tmp = folder / (MARK_FILE + ".tmp")
    try:
        tmp.write_text(f"{seq}\n")
        os.replace(tmp, folder / MARK_FILE)
    except OSError:  # a hint only: without it, a lost forget is not found
        pass
