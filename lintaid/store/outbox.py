"""The team outbox in memory.db: what is still to be pushed to the team's server.

The store notes a shared record, decision or tombstone here on the writer thread, inside the
transaction that writes it, so an acknowledged write is never lost to the team: either both
are committed or neither. Nothing is noted until a team is joined (``enabled``), and nothing
that is not shared ever is: prompts, records marked private, records of a client set private,
other users' API rows (per-user ids stay on their machine), and the teammates' own records
pulled from the server. A decision (forget, supersede, expire, restore, a review rejection) is
shared when the record(s) it names are. The pusher reads the rows in order (``pending``) and,
once the server holds them, deletes them (``delivered``); a push that is repeated after a
crash is harmless, because the server keys every event on an id derived from its content and
provenance.

``team_state`` holds the pull cursor per team space, written in the transaction that applies
what was pulled, so a pulled event is applied exactly once. ``team_quarantine`` keeps the
pulled events that were refused (what, who, why, the start of it, redacted), written in that
same transaction: the cursor moves past them, and ``team status``, doctor and the viewer show
them.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from lintaid.capture.record import LOCAL_USER
from lintaid_client import models
from lintaid_client.redact import redact

RECORD: Final = "record"
LINK: Final = "link"  # ``other`` supersedes ``target``
FORGET: Final = "forget"
EXPIRE: Final = "expire"
RESTORE: Final = "restore"  # lifts a forget of ``target``
REJECT: Final = "reject"  # a review item between ``target`` (older) and ``other`` (newer)
KINDS: Final = (RECORD, LINK, FORGET, EXPIRE, RESTORE, REJECT)
REJECT_FIELDS: Final = ("item_id", "kind", "confidence", "scope", "subject", "predicate",
                        "newer_value", "older_value", "reason")
"""What a shared rejection carries beside its two records: the pair, named as on every
machine (the item id derives from the chain and both (record, value) sides), and why."""
SHARED_KINDS: Final = frozenset({models.CAPTURE, models.NOTE})
QUARANTINE_KEPT: Final = 1000  # the newest refused events kept; older ones are dropped
_QUARANTINE_CHARS: Final = {"event_id": 200, "kind": 40, "member": 200, "reason": 500,
                            "excerpt": 700}

class Outbox:
    """The outbox on the store's write connection (writer thread), and its counts (any
    thread, on a read connection the caller passes)."""

    def __init__(self, conn: sqlite3.Connection, read: Callable[[], sqlite3.Connection]) -> None:
        self._conn = conn
        self._read = read  # this thread's read connection
        self.noted = 0  # rows noted by this process: the pusher is woken when it moves
        self.enabled = False
        self.private_clients: frozenset[str] = frozenset()
        self.member: str | None = None  # this store's member name in the team joined
        self._quiet = 0

    # -- what is shared ----------------------------------------------------------------------
    def shares(self, row: Any) -> bool:
        """Whether a record row (``user_id``, ``kind``, ``private``, ``provider``,
        ``member``) is shared, or a decision about it. A client set private keeps what it
        captured here; a teammate's record is shared whichever client wrote it."""
        return self.enabled and not self._quiet and self.sharable(row)

    def sharable(self, row: Any) -> bool:
        """Whether a record row is of what a team shares, joined or not: a teammate's
        decision may name only such a record (a private one cannot be named from outside)."""
        return (row["user_id"] == LOCAL_USER and row["kind"] in SHARED_KINDS
                and not row["private"]
                and (row["member"] is not None or row["provider"] not in self.private_clients))

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Note nothing while applying what was pulled: it is on the server already."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    # -- noting (writer thread, inside the write's transaction) -------------------------------
    def note(self, kind: str, target: str, stamp: float, *, other: str | None = None,
             detail: dict[str, Any] | None = None) -> None:
        self._conn.execute(
            "INSERT INTO team_outbox(kind, target, other, stamp, detail, queued_at)"
            " VALUES (?,?,?,?,?,?)",
            (kind, target, other, stamp, json.dumps(detail) if detail else None, time.time()))
        self.noted += 1

    def _shared(self, t: str, *, own: bool) -> tuple[str, list[Any]]:
        """SQL for "record ``t`` is shared and not forgotten" (``own``: and written here)."""
        sql = (f"{t}.user_id = ? AND {t}.kind != ? AND {t}.private = 0"
               f" AND {t}.forgotten_at IS NULL")
        params: list[Any] = [LOCAL_USER, models.PROMPT]
        if own:
            sql += f" AND {t}.member IS NULL"
        if self.private_clients:
            clients = sorted(self.private_clients)
            sql += (f" AND ({t}.provider IS NULL OR {t}.provider NOT IN"
                    f" ({', '.join('?' * len(clients))}))")
            params += clients
        return sql, params

    def backfill(self) -> int:
        """On joining: note every shared record of this store still believed, and every
        held link and review rejection between two shared records (the server keeps one copy
        of each, however often this runs). Forgotten records are not sent: what was
        forgotten should reach no one."""
        if not self.enabled:
            return 0
        now = time.time()
        before = self._conn.total_changes
        own, own_params = self._shared("r", own=True)
        self._conn.execute(
            "INSERT INTO team_outbox(kind, target, other, stamp, detail, queued_at)"
            f" SELECT 'record', r.id, NULL, r.created_at, NULL, ? FROM records r WHERE {own}"
            " ORDER BY r.created_at, r.id", (now, *own_params))
        new, new_params = self._shared("n", own=False)
        old, old_params = self._shared("o", own=False)
        self._conn.execute(
            "INSERT INTO team_outbox(kind, target, other, stamp, detail, queued_at)"
            " SELECT 'link', l.old_id, l.new_id, l.at, NULL, ? FROM links l"
            " JOIN records n ON n.id = l.new_id JOIN records o ON o.id = l.old_id"
            f" WHERE {new} AND {old} ORDER BY l.at", (now, *new_params, *old_params))
        fields = ", ".join(f"'{name}', v.{name}" for name in REJECT_FIELDS)
        self._conn.execute(
            "INSERT INTO team_outbox(kind, target, other, stamp, detail, queued_at)"
            f" SELECT 'reject', v.older_record, v.newer_record, v.at, json_object({fields}), ?"
            " FROM reviews v JOIN records n ON n.id = v.newer_record"
            " JOIN records o ON o.id = v.older_record"
            f" WHERE v.decision = 'reject' AND v.user_id = ? AND {new} AND {old} ORDER BY v.at",
            (now, LOCAL_USER, *new_params, *old_params))
        return self._conn.total_changes - before

    # -- the pusher ----------------------------------------------------------------------------
    def pending(self, limit: int) -> list[dict[str, Any]]:
        """Any thread: the oldest ``limit`` rows still to push, each with the record it names
        (for a record: its shared fields; for a decision: nothing more)."""
        conn = self._read()
        rows = [dict(r) for r in conn.execute(
            "SELECT seq, kind, target, other, stamp, detail, queued_at FROM team_outbox"
            " ORDER BY seq LIMIT ?", (limit,))]
        ids = [r["target"] for r in rows if r["kind"] == RECORD]
        records: dict[str, dict[str, Any]] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            for rec in conn.execute(
                    "SELECT id, kind, source, provider, session_id, event, doc_type, branch,"
                    " revision, paths, tools, file_hashes, content, created_at, valid_at,"
                    " expires_at, turn_id, request_hash, forgotten_at FROM records"
                    f" WHERE id IN ({', '.join('?' * len(chunk))})", chunk):
                records[rec["id"]] = dict(rec)
        for row in rows:
            row["detail"] = json.loads(row["detail"]) if row["detail"] else {}
            row["record"] = records.get(row["target"]) if row["kind"] == RECORD else None
        return rows

    def delivered(self, through: int) -> None:
        """Writer thread: the server holds every row up to ``through``."""
        self._conn.execute("DELETE FROM team_outbox WHERE seq <= ?", (through,))

    def clear(self) -> int:
        """Writer thread, on leaving: drop what was never delivered; return how much."""
        return self._conn.execute("DELETE FROM team_outbox").rowcount

    def depth(self) -> tuple[int, float | None]:
        """Any thread: (rows waiting, when the oldest was queued)."""
        row = self._read().execute("SELECT COUNT(*), MIN(queued_at) FROM team_outbox").fetchone()
        return int(row[0]), (float(row[1]) if row[1] is not None else None)

    # -- state (cursor) ----------------------------------------------------------------------
    def state(self, key: str) -> str | None:
        """Any thread."""
        row = self._read().execute("SELECT value FROM team_state WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_state(self, key: str, value: str | None) -> None:
        """Writer thread."""
        if value is None:
            self._conn.execute("DELETE FROM team_state WHERE key = ?", (key,))
        else:
            self._conn.execute("INSERT OR REPLACE INTO team_state(key, value) VALUES (?, ?)",
                               (key, value))

    # -- quarantine ---------------------------------------------------------------------------
    def quarantine(self, server_seq: int, *, event_id: Any, kind: Any, member: Any,
                   reason: str, excerpt: str) -> None:
        """Writer thread: keep a refused pulled event (every field cut to a bound and
        redacted; it came from outside), and no more than the newest ``QUARANTINE_KEPT``."""
        values = {"event_id": event_id, "kind": kind, "member": member, "reason": reason,
                  "excerpt": excerpt}
        # redacted, then cut: a cut first could halve a secret and leave its first part
        limits = _QUARANTINE_CHARS
        kept = {name: None if value is None else
                redact(str(value)[: limits[name] + 8192])[: limits[name]]
                for name, value in values.items()}
        self._conn.execute(
            "INSERT INTO team_quarantine(server_seq, event_id, kind, member, reason, excerpt,"
            " at) VALUES (?,?,?,?,?,?,?)",
            (server_seq, kept["event_id"], kept["kind"], kept["member"], kept["reason"] or "",
             kept["excerpt"], time.time()))
        self._conn.execute(
            "DELETE FROM team_quarantine WHERE seq <= (SELECT MAX(seq) FROM team_quarantine)"
            " - ?", (QUARANTINE_KEPT,))

    def quarantined(self, limit: int) -> tuple[int, list[dict[str, Any]]]:
        """Any thread: (how many refused events are kept, the newest ``limit`` of them)."""
        conn = self._read()
        count = int(conn.execute("SELECT COUNT(*) FROM team_quarantine").fetchone()[0])
        rows = [dict(r) for r in conn.execute(
            "SELECT server_seq, event_id, kind, member, reason, excerpt, at"
            " FROM team_quarantine ORDER BY seq DESC LIMIT ?", (limit,))]
        return count, rows
