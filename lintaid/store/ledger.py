"""The injection ledger's rows (``injections``, durable): what each injection gave the agent
and, once the session's next capture was read, whether the agent used it.

Persistence only: what counts as used is ``lintaid.ledger``'s; the writer thread adds and
judges rows inside the transaction of the records beside them, any thread reads.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, Final

KEEP_DAYS: Final = 180
"""Rows older than this are dropped (at most once an hour, as rows are added)."""
_PRUNE_EVERY_S: Final = 3600.0
GROUPS: Final = {"day": "strftime('%Y-%m-%d', at, 'unixepoch')", "client": "client",
                 "session": "session_id", "kind": "kind"}
_SUMS: Final = (
    "COUNT(*) AS injections, SUM(json_array_length(records)) AS records,"
    " SUM(bytes) AS bytes, SUM(tokens) AS tokens,"
    " SUM(used IS NOT NULL) AS judged, COALESCE(SUM(used), 0) AS used,"
    " MIN(at) AS first_at, MAX(at) AS last_at")


class LedgerTable:
    def __init__(self, write: sqlite3.Connection, read: Callable[[], sqlite3.Connection]) -> None:
        self._write = write
        self._read = read
        self._pruned_at = 0.0

    # -- writer thread ---------------------------------------------------------------------
    def add(self, *, at: float, client: str | None, session_id: str | None, event: str,
            kind: str, records: Sequence[str], size: int, tokens: int,
            markers: Sequence[str]) -> int:
        if at - self._pruned_at > _PRUNE_EVERY_S:
            self._write.execute("DELETE FROM injections WHERE at < ?",
                                (at - KEEP_DAYS * 86400.0,))
            self._pruned_at = at
        cur = self._write.execute(
            "INSERT INTO injections(at, client, session_id, event, kind, records, bytes,"
            " tokens, markers) VALUES (?,?,?,?,?,?,?,?,?)",
            (at, client, session_id, event, kind, json.dumps(list(records)), size, tokens,
             json.dumps(list(markers))))
        return int(cur.lastrowid or 0)

    def waiting(self, session_id: str, until: float) -> list[tuple[int, list[str]]]:
        """The session's injections not judged yet, made by ``until``: (seq, markers)."""
        return [(int(r[0]), json.loads(r[1])) for r in self._write.execute(
            "SELECT seq, markers FROM injections WHERE session_id = ? AND used IS NULL"
            " AND at <= ? ORDER BY seq", (session_id, until))]

    def judge(self, seq: int, used: Sequence[str], at: float) -> None:
        self._write.execute(
            "UPDATE injections SET judged_at = ?, used = ?, used_markers = ? WHERE seq = ?",
            (at, 1 if used else 0, json.dumps(list(used)), seq))

    # -- any thread ------------------------------------------------------------------------
    def totals(self, since: float | None = None, client: str | None = None,
               session_id: str | None = None) -> dict[str, Any]:
        where, params = _where(since, client, session_id)
        row = self._read().execute(f"SELECT {_SUMS} FROM injections{where}", params).fetchone()
        return _figures(row)

    def grouped(self, by: str, since: float | None = None, client: str | None = None,
                session_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """Totals per day, client, session or kind; newest group first."""
        key = GROUPS[by]
        where, params = _where(since, client, session_id)
        rows = self._read().execute(
            f"SELECT {key} AS grp, {_SUMS} FROM injections{where} GROUP BY grp"
            " ORDER BY MAX(at) DESC LIMIT ?", (*params, limit))
        return [{by: r["grp"], **_figures(r)} for r in rows]

    def recent(self, limit: int, since: float | None = None, client: str | None = None,
               session_id: str | None = None) -> list[dict[str, Any]]:
        """The newest injections themselves."""
        where, params = _where(since, client, session_id)
        rows = self._read().execute(
            f"SELECT * FROM injections{where} ORDER BY seq DESC LIMIT ?", (*params, limit))
        return [{"seq": r["seq"], "at": r["at"], "client": r["client"],
                 "session_id": r["session_id"], "event": r["event"], "kind": r["kind"],
                 "records": json.loads(r["records"]), "bytes": r["bytes"],
                 "tokens": r["tokens"], "used": None if r["used"] is None else bool(r["used"]),
                 "used_markers": json.loads(r["used_markers"] or "[]")} for r in rows]


def _where(since: float | None, client: str | None,
           session_id: str | None) -> tuple[str, tuple[Any, ...]]:
    clauses, params = [], []
    for column, op, value in (("at", ">=", since), ("client", "=", client),
                              ("session_id", "=", session_id)):
        if value is not None:
            clauses.append(f"{column} {op} ?")
            params.append(value)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


def _figures(row: sqlite3.Row) -> dict[str, Any]:
    judged, used = int(row["judged"] or 0), int(row["used"] or 0)
    count = int(row["injections"] or 0)
    return {"injections": count, "records": int(row["records"] or 0),
            "bytes": int(row["bytes"] or 0), "tokens": int(row["tokens"] or 0),
            "mean_tokens": round((row["tokens"] or 0) / count) if count else 0,
            "judged": judged, "used": used,
            "used_share": round(used / judged, 3) if judged else None,
            "first_at": row["first_at"], "last_at": row["last_at"]}
