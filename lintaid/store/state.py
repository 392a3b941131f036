"""Reads of the derived state as a whole: what is currently claimed, what was retired since a
time, what disagrees. The same SQL serves memory.db and workspace.db, whose derived tables
share one shape; each store passes its ``Live`` rows: the records (or files) that may be shown,
as a table, the column expressions these reads need and a condition.

The reads are driven from the side an index serves: the newest live rows first for current
claims, the rows written since a time (and ``claim_state.superseded_by_record``) for what
they retired, ``relations.kind`` for conflicts, so a SessionStart costs milliseconds however
much history a project holds. Joins are written ``CROSS JOIN``, which SQLite keeps in the
written order, so planner statistics cannot turn a lookup into a scan. Read connections only, any thread. Rows come back as dicts;
``lintaid.search`` turns them into the shared models.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .sqlite import in_batches

# Status and relation words as the derived tables hold them.
SUPERSEDED: Final = "superseded"
CONFLICTED: Final = "conflicted"
CONFLICTS_WITH: Final = "conflicts_with"
CONFIRMS: Final = "confirms"
SUPERSEDES: Final = "supersedes"
CONTEXT: Final = "context"  # a claim a request stated and its result did not confirm

COLUMNS: Final = ("id", "created_at", "source", "session_id", "text", "path")


@dataclass(frozen=True)
class Live:
    """The rows a state read may show: ``table``, the SQL of each of ``COLUMNS`` and of
    ``where`` over an alias ``{t}``, and ``params`` for ``where``'s placeholders. ``text`` is
    what claim offsets point into; ``lines``: report each claim's line in it."""

    table: str
    columns: Mapping[str, str]
    where: str
    params: Sequence[Any] = ()
    lines: bool = False

    def col(self, alias: str, name: str) -> str:
        return self.columns[name].format(t=alias)

    def cond(self, alias: str) -> str:
        return "(" + self.where.format(t=alias) + ")"


def _claim_columns(live: Live, claim: str, row: str) -> str:
    """A claim's columns (``{claim}_subject`` ...) and its record's, from alias ``row``."""
    text = live.col(row, "text")
    line = (f"(length(substr({text}, 1, {claim}.start))"
            f" - length(replace(substr({text}, 1, {claim}.start), char(10), '')) + 1)"
            if live.lines else "NULL")
    return ", ".join([
        *(f"{claim}.{name} AS {claim}_{name}"
          for name in ("claim_id", "record_id", "subject", "predicate", "value", "evidence",
                       "scope")),
        *(f"{live.col(row, name)} AS {claim}_{name}"
          for name in ("created_at", "source", "session_id", "path")),
        f"{line} AS {claim}_line"])


def current_claims(conn: sqlite3.Connection, live: Live, *, limit: int,
                   session_id: str | None = None) -> list[dict[str, Any]]:
    """Claims still believed (current or conflicted), newest record first; only those of
    ``session_id``'s records when given. Left out: what a request only asked about (a
    context claim is no decision), a claim a newer one restates (the newer is listed), and
    one a newer one likely supersedes (it waits in review, listed with the conflicts).
    ``standing``: the claim confirms or supersedes an earlier one."""
    where = (f"{live.cond('l')} AND COALESCE(s.status, 'current') != ? AND c.cue_kind != ?"
             " AND NOT EXISTS (SELECT 1 FROM relations x WHERE x.target_claim = c.claim_id"
             " AND x.kind IN (?, ?) AND x.chain IS NOT NULL)")
    params: list[Any] = [*live.params, SUPERSEDED, CONTEXT, CONFIRMS, SUPERSEDES]
    if session_id is not None:
        where += f" AND {live.col('l', 'session_id')} = ?"
        params.append(session_id)
    # Standing: it restates or replaces an earlier claim (a fact the project came back to).
    standing = ("EXISTS (SELECT 1 FROM relations y WHERE y.source_claim = c.claim_id"
                f" AND y.kind IN ('{CONFIRMS}', '{SUPERSEDES}'))")
    sql = (f"SELECT {_claim_columns(live, 'c', 'l')}, COALESCE(s.status, 'current') AS status,"
           f" {standing} AS standing"
           f" FROM {live.table} l CROSS JOIN claims c ON c.record_id = {live.col('l', 'id')}"
           f" LEFT JOIN claim_state s ON s.claim_id = c.claim_id WHERE {where}"
           f" ORDER BY {live.col('l', 'created_at')} DESC, c.record_id, c.n LIMIT ?")
    return [dict(r) for r in conn.execute(sql, [*params, limit])]


def retired_since(conn: sqlite3.Connection, live: Live, since: float, *,
                  limit: int) -> list[dict[str, Any]]:
    """Claims retired by a record (or file) written since ``since``, with what retired them:
    ``o_*`` the old claim, ``n_*`` the new one (the retiring record's ``new_text`` stands in
    when it has no claim of its own: an explicit link). Newest retirement first."""
    new_created = live.col("ln", "created_at")
    sql = (f"SELECT {_claim_columns(live, 'o', 'lo')}, {_claim_columns(live, 'n', 'ln')},"
           f" {live.col('ln', 'id')} AS new_record, {live.col('ln', 'text')} AS new_text,"
           f" {new_created} AS new_created_at, {live.col('ln', 'source')} AS new_source,"
           f" {live.col('ln', 'path')} AS new_path"
           f" FROM {live.table} ln"
           # CROSS JOIN keeps the written order: from the rows written since, never a scan.
           f" CROSS JOIN claim_state s ON s.superseded_by_record = {live.col('ln', 'id')}"
           " CROSS JOIN claims o ON o.claim_id = s.claim_id"
           f" CROSS JOIN {live.table} lo ON {live.col('lo', 'id')} = o.record_id"
           " LEFT JOIN claims n ON n.claim_id = s.superseded_by_claim"
           f" WHERE {live.cond('ln')} AND {new_created} >= ? AND {live.cond('lo')}"
           f" AND s.status = ? ORDER BY {new_created} DESC, o.record_id, o.n LIMIT ?")
    # What a turn's own request said, settled by its result, is no change to report.
    return [dict(r) for r in conn.execute(
        sql, [*live.params, since, *live.params, SUPERSEDED, limit])
        if r["o_record_id"] != r["new_record"]]


def bare_records_retired_since(conn: sqlite3.Connection, live: Live, since: float, *,
                               limit: int) -> list[dict[str, Any]]:
    """Records without claims retired (an explicit link) by a record written since ``since``:
    ``old_*`` and ``new_*`` ids, texts, times, sources and sessions. Newest first."""
    def side(alias: str, name: str) -> str:
        return ", ".join(f"{live.col(alias, col)} AS {name}_{col}"
                         for col in ("id", "text", "created_at", "source", "session_id"))

    new_created = live.col("ln", "created_at")
    sql = (f"SELECT {side('lo', 'old')}, {side('ln', 'new')} FROM {live.table} ln"
           f" CROSS JOIN record_state rs ON rs.superseded_by = {live.col('ln', 'id')}"
           f" CROSS JOIN {live.table} lo ON {live.col('lo', 'id')} = rs.record_id"
           f" WHERE {live.cond('ln')} AND {new_created} >= ? AND {live.cond('lo')}"
           " AND rs.status = ? AND NOT EXISTS"
           f" (SELECT 1 FROM claims c WHERE c.record_id = {live.col('lo', 'id')})"
           f" ORDER BY {new_created} DESC, {live.col('lo', 'id')} LIMIT ?")
    return [dict(r) for r in conn.execute(
        sql, [*live.params, since, *live.params, SUPERSEDED, limit])]


def conflicts(conn: sqlite3.Connection, live: Live, *, limit: int) -> list[dict[str, Any]]:
    """Pairs of claims that disagree and are both still marked conflicted: ``a_*`` the newer
    side (the relation's source), ``b_*`` the older. Newest first."""
    newest = f"max({live.col('la', 'created_at')}, {live.col('lb', 'created_at')})"
    sql = (f"SELECT {_claim_columns(live, 'a', 'la')}, {_claim_columns(live, 'b', 'lb')}"
           # CROSS JOIN keeps the written order: from the few conflict relations (by kind).
           " FROM relations r CROSS JOIN claim_state sa ON sa.claim_id = r.source_claim"
           " CROSS JOIN claim_state sb ON sb.claim_id = r.target_claim"
           " CROSS JOIN claims a ON a.claim_id = r.source_claim"
           " CROSS JOIN claims b ON b.claim_id = r.target_claim"
           f" CROSS JOIN {live.table} la ON {live.col('la', 'id')} = a.record_id"
           f" CROSS JOIN {live.table} lb ON {live.col('lb', 'id')} = b.record_id"
           f" WHERE r.kind = ? AND sa.status = ? AND sb.status = ? AND {live.cond('la')}"
           f" AND {live.cond('lb')} ORDER BY {newest} DESC, a.claim_id, b.claim_id LIMIT ?")
    return [dict(r) for r in conn.execute(
        sql, [CONFLICTS_WITH, CONFLICTED, CONFLICTED, *live.params, *live.params, limit])]


def claims_by_id(conn: sqlite3.Connection, live: Live,
                 claim_ids: Sequence[str]) -> list[dict[str, Any]]:
    """These claims (``c_*``, with their records' columns) and each one's ``status``, when
    their records may be shown."""
    sql = (f"SELECT {_claim_columns(live, 'c', 'l')}, COALESCE(s.status, 'current') AS status"
           f" FROM claims c CROSS JOIN {live.table} l ON {live.col('l', 'id')} = c.record_id"
           " LEFT JOIN claim_state s ON s.claim_id = c.claim_id"
           f" WHERE {live.cond('l')} AND c.claim_id IN ({{ids}})")
    return [dict(r) for r in in_batches(conn, sql, claim_ids, live.params)]


def retired_values(conn: sqlite3.Connection, live: Live) -> list[dict[str, Any]]:
    """Every claim a newer claim of this store retired, with what retired it: ``o_*`` the
    old claim, ``n_*`` the new one, ``new_created_at`` when the retiring
    record was written. Driven from ``claim_state``'s index of retiring records, so only
    retired claims are read."""
    sql = (f"SELECT {_claim_columns(live, 'o', 'lo')}, {_claim_columns(live, 'n', 'ln')}, {live.col('ln', 'created_at')}"
           " AS new_created_at FROM claim_state s"
           " CROSS JOIN claims o ON o.claim_id = s.claim_id"
           " CROSS JOIN claims n ON n.claim_id = s.superseded_by_claim"
           f" CROSS JOIN {live.table} lo ON {live.col('lo', 'id')} = o.record_id"
           f" CROSS JOIN {live.table} ln ON {live.col('ln', 'id')} = n.record_id"
           f" WHERE s.superseded_by_record > '' AND s.status = ? AND o.value != ''"
           f" AND {live.cond('lo')} AND {live.cond('ln')}")
    return [dict(r) for r in conn.execute(sql, [SUPERSEDED, *live.params, *live.params])]


def value_holders(conn: sqlite3.Connection, live: Live,
                  values: Sequence[str]) -> list[dict[str, Any]]:
    """The claims still believed (current or conflicted) whose value is one of ``values``
    (as the claims hold them), with their records' columns: read through ``claim_keys``'s
    value keys, never a scan of the claims."""
    keys = ["v:" + v for v in values]
    sql = (f"SELECT {_claim_columns(live, 'c', 'l')}"
           " FROM claim_keys k CROSS JOIN claims c ON c.claim_id = k.claim_id"
           f" CROSS JOIN {live.table} l ON {live.col('l', 'id')} = c.record_id"
           " LEFT JOIN claim_state s ON s.claim_id = c.claim_id"
           f" WHERE k.key IN ({{ids}}) AND k.strong = 1 AND c.value != ''"
           f" AND COALESCE(s.status, 'current') != '{SUPERSEDED}' AND {live.cond('l')}")
    return [dict(r) for r in in_batches(conn, sql, keys, after=live.params)]
