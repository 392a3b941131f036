"""Rows of memory.db out (an export, page by page) and back in (an import), as rows.

Persistence only: the file formats are ``lintaid.transfer``'s. An export reads one user's
durable rows section by section, in the order they were written (``rowid``): records (never a
forgotten one), links, review decisions, confirmations, tombstones and, asked for, the audit
log (with the text of forgotten records left out, their hashes kept). An import writes each
row once: a row already held (the same record id, link, decision, confirmation, tombstone or
audit entry) is left alone, so importing a file twice adds nothing; each row it adds is
audited as an ``import``.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, Final, Protocol

from lintaid.capture.record import NewRecord, content_fingerprint

from .links import closes_cycle, cycle_message
from .reviews import DECISION_COLUMNS


class Writes(Protocol):
    """What an import writes through: the memory store, on the writer thread."""

    @property
    def db(self) -> sqlite3.Connection: ...

    def put(self, rec: NewRecord, actor: str, *, op: str = "add") -> tuple[str, str]: ...

    def take_time(self, explicit: float | None) -> float: ...

    def audit(self, actor: str, op: str, target: str, user_id: str, before: str | None,
              after: str | None, detail: dict[str, Any] | None = None) -> None: ...

    def mark_dirty(self, record_ids: Iterable[str]) -> None: ...

SECTIONS: Final = ("records", "links", "reviews", "confirmations", "tombstones", "audit")
_PAGES: Final = {
    "records": "SELECT rowid AS n, * FROM records WHERE user_id = ? AND forgotten_at IS NULL"
               " AND rowid > ? AND (? OR kind != 'prompt') ORDER BY rowid LIMIT ?",
    "links": "SELECT rowid AS n, new_id, old_id, actor, at FROM links WHERE user_id = ?"
             " AND rowid > ? ORDER BY rowid LIMIT ?",
    "reviews": "SELECT rowid AS n, * FROM reviews WHERE user_id = ? AND rowid > ?"
               " ORDER BY rowid LIMIT ?",
    "confirmations": "SELECT rowid AS n, record_id, actor, at FROM confirmations"
                     " WHERE user_id = ? AND rowid > ? ORDER BY rowid LIMIT ?",
    "tombstones": "SELECT rowid AS n, fingerprint, record_id, at, reason FROM tombstones"
                  " WHERE user_id = ? AND rowid > ? ORDER BY rowid LIMIT ?",
    # The text of a memory forgotten since is not exported, not even as its history.
    "audit": "SELECT a.seq AS n, a.at, a.actor, a.op, a.target, a.before_hash, a.after_hash,"
             " CASE WHEN r.forgotten_at IS NULL THEN a.before_content END AS before_content,"
             " CASE WHEN r.forgotten_at IS NULL THEN a.after_content END AS after_content,"
             " a.detail FROM audit a LEFT JOIN records r ON r.id = a.target"
             " WHERE a.user_id = ? AND a.seq > ? AND (? OR r.kind IS NOT 'prompt')"
             " ORDER BY a.seq LIMIT ?",
}
_WITH_PROMPTS: Final = frozenset({"records", "audit"})  # sections that hold prompts' text


def page(conn: sqlite3.Connection, user_id: str, section: str, after: int, limit: int,
         include_history: bool, include_prompts: bool = False,
         ) -> tuple[str, list[dict[str, Any]], tuple[str, int] | None]:
    """Up to ``limit`` rows of ``section`` after row ``after`` (an empty section moves on to
    the next): ``(the section read, its rows, where the next page starts)``."""
    sections = [s for s in SECTIONS if include_history or s != "audit"]
    if section not in sections:
        return section, [], None
    at = sections.index(section)
    while True:
        prompts = (int(include_prompts),) if section in _WITH_PROMPTS else ()
        rows = [dict(r) for r in conn.execute(_PAGES[section],
                                              (user_id, after, *prompts, limit))]
        if len(rows) == limit:
            return section, rows, (section, int(rows[-1]["n"]))
        if at + 1 >= len(sections):
            return section, rows, None
        if rows:
            return section, rows, (sections[at + 1], 0)
        at, after = at + 1, 0
        section = sections[at]


# -- import (writer thread) ------------------------------------------------------------------
_MEMORY_ID: Final = re.compile(r"m[0-9a-f]{23}")


def document_end(end: str) -> bool:
    """Whether a review decision's end names a decision document (the project-relative path
    of a file) rather than a memory (``m`` and 23 hex digits, ``NewRecord.record_id``)."""
    if _MEMORY_ID.fullmatch(end) or not end or "\\" in end or "\x00" in end:
        return False
    parts = end.split("/")
    return not end.startswith("/") and all(part not in ("", ".", "..") for part in parts)


def _existing(conn: sqlite3.Connection, ids: Sequence[str], user_id: str) -> set[str]:
    marks = ", ".join("?" * len(ids))
    return {r[0] for r in conn.execute(
        f"SELECT id FROM records WHERE user_id = ? AND id IN ({marks})", (user_id, *ids))}


def _same_text_and_provenance(conn: sqlite3.Connection, record: NewRecord,
                              user_id: str) -> str | None:
    """A record of the user already holding this text from the same source and session
    under another id (an export's id basis changed since, or none was given), or None."""
    row = conn.execute(
        "SELECT id FROM records WHERE user_id = ? AND content_hash = ? AND source = ?"
        " AND session_id IS ? AND kind = ? AND id != ? LIMIT 1",
        (user_id, content_fingerprint(record.content), record.source, record.session_id,
         record.kind, record.record_id)).fetchone()
    return None if row is None else str(row[0])


def apply(store: Writes, item: dict[str, Any], user_id: str, actor: str) -> dict[str, Any]:
    """Write one imported row (``item["type"]``; a record comes as ``item["record"]``, a
    ``NewRecord``); return ``{"event": ADD | NONE | FORGOTTEN | SKIP, ...}``."""
    conn, kind = store.db, item["type"]
    if kind == "record":
        record: NewRecord = item["record"]
        held = _same_text_and_provenance(conn, record, user_id)
        if held is not None:
            return {"event": "NONE", "id": held}
        rid, event = store.put(record, actor, op="import")
        return {"event": event, "id": rid}
    if kind == "link":
        new, old = item["new_id"], item["old_id"]
        if new == old or _existing(conn, [new, old], user_id) != {new, old}:
            return {"event": "SKIP", "reason": "a memory it links is not here"}
        if conn.execute("SELECT 1 FROM links WHERE new_id = ? AND old_id = ?",
                        (new, old)).fetchone() is None and closes_cycle(conn, new, old):
            return {"event": "SKIP", "reason": cycle_message(new, old)}
        at = store.take_time(item["at"])
        if not conn.execute("INSERT OR IGNORE INTO links(new_id, old_id, user_id, actor, at)"
                            " VALUES (?,?,?,?,?)",
                            (new, old, user_id, item.get("actor") or actor, at)).rowcount:
            return {"event": "NONE"}
        store.audit(actor, "import", old, user_id, None, None, {"type": "link", "by": new})
        store.mark_dirty([new, old])
        return {"event": "ADD"}
    if kind == "review":
        row = {**{c: item.get(c) for c in DECISION_COLUMNS}, "user_id": user_id}
        ends = [str(row["newer_record"]), str(row["older_record"])]
        # A decision on a memory against a decision document names the file by its path:
        # only its memory end must be here (the file is the project's, read by the daemon).
        here = _existing(conn, list(dict.fromkeys(ends)), user_id)
        memories = [end for end in dict.fromkeys(ends) if end in here]
        if not memories or not all(end in here or document_end(end) for end in ends):
            return {"event": "SKIP", "reason": "a memory it names is not here"}
        marks = ", ".join("?" * len(DECISION_COLUMNS))
        if not conn.execute(f"INSERT OR IGNORE INTO reviews({', '.join(DECISION_COLUMNS)})"
                            f" VALUES ({marks})", [row[c] for c in DECISION_COLUMNS]).rowcount:
            return {"event": "NONE"}
        target = ends[1] if ends[1] in memories else memories[0]
        store.audit(actor, "import", target, user_id, None, None,
                    {"type": "review", "review": row["item_id"], "decision": row["decision"]})
        store.mark_dirty(memories)
        return {"event": "ADD"}
    if kind == "confirmation":
        rid, at, by = item["record_id"], float(item["at"]), item.get("actor") or actor
        if not _existing(conn, [rid], user_id):
            return {"event": "SKIP", "reason": "the memory it confirms is not here"}
        if conn.execute("SELECT 1 FROM confirmations WHERE record_id = ? AND user_id = ?"
                        " AND at = ? AND actor = ?", (rid, user_id, at, by)).fetchone():
            return {"event": "NONE"}
        conn.execute("INSERT INTO confirmations(record_id, user_id, actor, at)"
                     " VALUES (?,?,?,?)", (rid, user_id, by, at))
        store.audit(actor, "import", rid, user_id, None, None,
                    {"type": "confirmation", "at": at})
        return {"event": "ADD"}
    if kind == "tombstone":
        if not conn.execute("INSERT OR IGNORE INTO tombstones(fingerprint, user_id, record_id,"
                            " at, reason) VALUES (?,?,?,?,?)",
                            (item["fingerprint"], user_id, item["record_id"],
                             float(item["at"]), item.get("reason"))).rowcount:
            return {"event": "NONE"}
        store.audit(actor, "import", item["record_id"], user_id, None, None,
                    {"type": "tombstone"})
        return {"event": "ADD"}
    if kind == "audit":
        key = (item["target"], float(item["at"]), item["op"], item["actor"],
               item.get("before_hash"), item.get("after_hash"))
        if conn.execute("SELECT 1 FROM audit WHERE target = ? AND at = ? AND op = ?"
                        " AND actor = ? AND before_hash IS ? AND after_hash IS ?",
                        key).fetchone():
            return {"event": "NONE"}
        detail = {**(item.get("detail") or {}), "imported": True}
        conn.execute(
            "INSERT INTO audit(at, actor, op, target, user_id, before_hash, after_hash,"
            " before_content, after_content, detail) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (key[1], key[3], key[2], key[0], user_id, key[4], key[5],
             item.get("before_content"), item.get("after_content"), json.dumps(detail)))
        return {"event": "ADD"}
    raise ValueError(f"unknown row type {kind!r}")
