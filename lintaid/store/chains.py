"""Reads of one claim's chain: the claims the policy related to it (and to them), with their
derived status and the relations between them.

Read connections only, any thread; rows come back as dicts (``lintaid.search`` turns them into
the shared models). Only records of ``user_id`` that are not forgotten take part, as in every
other read.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .sqlite import in_batches

MAX_STEPS = 60
"""At most this many claims of a neighbourhood are read."""


def chain_rows(conn: sqlite3.Connection, claim_id: str,
               user_id: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """``(the claim's key row, its neighbourhood's claims)``, oldest first: the claims
    related to it (supersedes, confirms, conflicts), and those related to them, and so on,
    up to MAX_STEPS; by effective time, then by when their records were created.
    ``(None, [])`` when the claim is unknown."""
    key = conn.execute("SELECT claim_id, scope, subject, predicate FROM claims"
                       " WHERE claim_id = ?", (claim_id,)).fetchone()
    if key is None:
        return None, []
    seen = {claim_id}
    frontier = [claim_id]
    while frontier and len(seen) < MAX_STEPS:
        nxt: list[str] = []
        for row in in_batches(conn, "SELECT source_claim, target_claim FROM relations"
                              " WHERE source_claim IN ({ids}) OR target_claim IN ({ids})",
                              frontier):
            for end in (row["source_claim"], row["target_claim"]):
                if end not in seen and len(seen) < MAX_STEPS:
                    seen.add(end)
                    nxt.append(end)
        frontier = nxt
    rows = _rows(conn, sorted(seen), user_id)
    rows.sort(key=lambda r: (r["effective_at"] if r["effective_at"] is not None
                             else r["created_at"], r["created_at"], r["record_id"],
                             r["claim_id"]))
    return dict(key), rows


def _rows(conn: sqlite3.Connection, ids: list[str], user_id: str) -> list[dict[str, Any]]:
    found = in_batches(
        conn,
        "SELECT c.claim_id, c.record_id, c.value, c.evidence, c.effective_at,"
        " c.created_at, COALESCE(s.status, 'current') AS status, s.superseded_by_claim,"
        " r.user_id AS user_id, r.forgotten_at AS forgotten_at"
        " FROM claims c CROSS JOIN records r ON r.id = c.record_id"
        " LEFT JOIN claim_state s ON s.claim_id = c.claim_id WHERE c.claim_id IN ({ids})", ids)
    return [{k: r[k] for k in r.keys() if k not in ("user_id", "forgotten_at")}
            for r in found if r["user_id"] == user_id and r["forgotten_at"] is None]


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
