"""Reads of the derived state as a whole: what is currently claimed, what was retired since a
time, what disagrees. The same SQL serves memory.db and workspace.db, whose derived tables
share one shape; each store passes its ``Live`` source: the records (or files) that may be
shown, with the columns these reads need.

Read connections only, any thread. Rows come back as plain dicts; ``lintaid.search`` turns
them into the shared models.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

# Status and relation words as the derived tables hold them.
SUPERSEDED: Final = "superseded"
CONFLICTED: Final = "conflicted"
CONFLICTS_WITH: Final = "conflicts_with"

_LINE: Final = ("(length(substr({t}, 1, {c}.start))"
                " - length(replace(substr({t}, 1, {c}.start), char(10), '')) + 1)")


@dataclass(frozen=True)
class Live:
    """The rows that may be shown, as a SELECT with the columns ``id``, ``created_at``,
    ``kind``, ``doc_type``, ``source``, ``session_id``, ``text`` (the text claim offsets
    point into) and ``path`` (None for memory records); ``params`` bind its placeholders."""

    select: str
    params: Sequence[Any] = ()
    lines: bool = False  # report the line of each claim in ``text`` (project files)


def _claim_columns(alias: str, live: str, lines: bool) -> str:
    line = _LINE.format(t=f"{live}.text", c=alias) if lines else "NULL"
    return (f"{alias}.claim_id AS {alias}_claim_id, {alias}.record_id AS {alias}_record_id,"
            f" {alias}.subject AS {alias}_subject, {alias}.predicate AS {alias}_predicate,"
            f" {alias}.value AS {alias}_value, {alias}.evidence AS {alias}_evidence,"
            f" {live}.created_at AS {alias}_created_at, {live}.source AS {alias}_source,"
            f" {live}.session_id AS {alias}_session_id, {live}.path AS {alias}_path,"
            f" {line} AS {alias}_line")


def current_claims(conn: sqlite3.Connection, live: Live, *, limit: int,
                   session_id: str | None = None) -> list[dict[str, Any]]:
    """Claims still believed (current or conflicted), newest record first; only those of
    ``session_id``'s records when given."""
    where = " WHERE COALESCE(s.status, 'current') != ?"
    params: list[Any] = [*live.params, SUPERSEDED]
    if session_id is not None:
        where += " AND l.session_id = ?"
        params.append(session_id)
    sql = (f"WITH l AS ({live.select}) SELECT {_claim_columns('c', 'l', live.lines)},"
           " COALESCE(s.status, 'current') AS status FROM claims c JOIN l ON l.id = c.record_id"
           f" LEFT JOIN claim_state s ON s.claim_id = c.claim_id{where}"
           " ORDER BY l.created_at DESC, c.record_id, c.n LIMIT ?")
    params.append(limit)
    return [dict(r) for r in conn.execute(sql, params)]


def retired_since(conn: sqlite3.Connection, live: Live, since: float, *,
                  limit: int) -> list[dict[str, Any]]:
    """Claims retired by a record (or file) newer than ``since``, with what retired them:
    ``o_*`` the old claim, ``n_*`` the new one (its record's text when the retiring record
    has no claim of its own: an explicit link). Newest retirement first."""
    sql = (f"WITH l AS ({live.select}) SELECT {_claim_columns('o', 'lo', live.lines)},"
           f" {_claim_columns('n', 'ln', live.lines)}, ln.id AS new_record,"
           " ln.text AS new_text, ln.created_at AS new_created_at, ln.source AS new_source,"
           " ln.path AS new_path"
           " FROM claim_state s JOIN claims o ON o.claim_id = s.claim_id"
           " JOIN l lo ON lo.id = o.record_id JOIN l ln ON ln.id = s.superseded_by_record"
           " LEFT JOIN claims n ON n.claim_id = s.superseded_by_claim"
           " WHERE s.status = ? AND ln.created_at >= ?"
           " ORDER BY ln.created_at DESC, o.record_id, o.n LIMIT ?")
    return [dict(r) for r in conn.execute(sql, [*live.params, SUPERSEDED, since, limit])]


def conflicts(conn: sqlite3.Connection, live: Live, *, limit: int) -> list[dict[str, Any]]:
    """Pairs of claims that disagree and are both still marked conflicted: ``a_*`` the newer
    side (the relation's source), ``b_*`` the older. Newest first."""
    sql = (f"WITH l AS ({live.select}) SELECT {_claim_columns('a', 'la', live.lines)},"
           f" {_claim_columns('b', 'lb', live.lines)}"
           " FROM relations r JOIN claims a ON a.claim_id = r.source_claim"
           " JOIN claims b ON b.claim_id = r.target_claim"
           " JOIN l la ON la.id = a.record_id JOIN l lb ON lb.id = b.record_id"
           " JOIN claim_state sa ON sa.claim_id = a.claim_id"
           " JOIN claim_state sb ON sb.claim_id = b.claim_id"
           " WHERE r.kind = ? AND sa.status = ? AND sb.status = ?"
           " ORDER BY max(la.created_at, lb.created_at) DESC, a.claim_id, b.claim_id LIMIT ?")
    return [dict(r) for r in conn.execute(
        sql, [*live.params, CONFLICTS_WITH, CONFLICTED, CONFLICTED, limit])]


def bare_records_retired_since(conn: sqlite3.Connection, live: Live, since: float, *,
                               limit: int) -> list[dict[str, Any]]:
    """Records without claims retired (an explicit link) by a record newer than ``since``:
    ``old_*`` and ``new_*`` ids, texts and times. Newest first."""
    sql = (f"WITH l AS ({live.select}) SELECT lo.id AS old_id, lo.text AS old_text,"
           " lo.created_at AS old_created_at, lo.source AS old_source,"
           " lo.session_id AS old_session_id, ln.id AS new_id, ln.text AS new_text,"
           " ln.created_at AS new_created_at, ln.source AS new_source,"
           " ln.session_id AS new_session_id FROM record_state rs"
           " JOIN l lo ON lo.id = rs.record_id JOIN l ln ON ln.id = rs.superseded_by"
           " WHERE rs.status = ? AND ln.created_at >= ?"
           " AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.record_id = lo.id)"
           " ORDER BY ln.created_at DESC, lo.id LIMIT ?")
    return [dict(r) for r in conn.execute(sql, [*live.params, SUPERSEDED, since, limit])]
