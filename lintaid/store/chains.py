"""Reads of one claim's chain: the claims about the same subject and predicate in the same
scope, with their derived status and the relations the policy drew between them.

Read connections only, any thread; rows come back as dicts (``lintaid.search`` turns them into
the shared models). Only records of ``user_id`` that are not forgotten take part, as in every
other read.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .sqlite import in_batches


def chain_rows(conn: sqlite3.Connection, claim_id: str,
               user_id: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """``(the claim's key row, the chain's claims)``, oldest first: by effective time, then by
    when their records were created. ``(None, [])`` when the claim is unknown."""
    key = conn.execute("SELECT claim_id, scope, subject, predicate FROM claims"
                       " WHERE claim_id = ?", (claim_id,)).fetchone()
    if key is None:
        return None, []
    rows = conn.execute(
        "SELECT c.claim_id, c.record_id, c.value, c.evidence, c.effective_at,"
        " c.created_at, COALESCE(s.status, 'current') AS status, s.superseded_by_claim"
        " FROM claims c CROSS JOIN records r ON r.id = c.record_id"
        " LEFT JOIN claim_state s ON s.claim_id = c.claim_id"
        " WHERE c.scope = ? AND c.subject = ? AND c.predicate = ?"
        " AND r.user_id = ? AND r.forgotten_at IS NULL"
        " ORDER BY COALESCE(c.effective_at, c.created_at), c.created_at, c.record_id, c.n",
        (key["scope"], key["subject"], key["predicate"], user_id))
    return dict(key), [dict(r) for r in rows]


def links_between(conn: sqlite3.Connection, claim_ids: list[str]) -> list[dict[str, Any]]:
    """The relations whose both ends are among ``claim_ids``, in the order they were derived."""
    wanted = set(claim_ids)
    seen: set[tuple[str, str, str]] = set()
    out = []
    for row in in_batches(conn, "SELECT * FROM relations WHERE source_claim IN ({ids})",
                          claim_ids):
        key = (row["source_claim"], row["kind"], row["target_claim"])
        if row["target_claim"] in wanted and key not in seen:
            seen.add(key)
            out.append(dict(row))
    out.sort(key=lambda r: (r["chain"] is not None, r["chain"] or "", r["n"]))
    return out
