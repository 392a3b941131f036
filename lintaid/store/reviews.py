"""The review queue's rows: held decisions (``reviews``, durable) and the relations a person
may settle (read from the derived tables).

Persistence only: which relations wait, and what an item's id is, are the policy's
(``lintaid.policy.review``); the caller passes the thresholds. ``relations`` holds a chain's
inferred relations (``chain`` not null) between claims of live records; a row here is one of
them with both claims, both records and both claims' statuses.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable
from typing import Any, Final

from .sqlite import in_batches

_SIDE_COLUMNS: Final = ("claim_id", "record_id", "scope", "subject", "predicate", "value",
                        "evidence", "effective_at")
_RECORD_COLUMNS: Final = ("created_at", "source", "session_id", "user_id")
DECISION_COLUMNS: Final = ("item_id", "decision", "user_id", "actor", "at", "reason", "kind",
                           "confidence", "scope", "subject", "predicate", "newer_record",
                           "newer_value", "older_record", "older_value")


def _side(claim: str, record: str, state: str, name: str) -> str:
    cols = [f"{claim}.{c} AS {name}_{c}" for c in _SIDE_COLUMNS]
    cols += [f"{record}.{c} AS {name}_{c}" for c in _RECORD_COLUMNS]
    cols.append(f"COALESCE({state}.status, 'current') AS {name}_status")
    return ", ".join(cols)


_PAIRS: Final = (
    "SELECT r.kind, r.confidence, r.method, r.evidence,"
    f" {_side('a', 'la', 'sa', 'newer')}, {_side('b', 'lb', 'sb', 'older')}"
    " FROM relations r CROSS JOIN claims a ON a.claim_id = r.source_claim"
    " CROSS JOIN claims b ON b.claim_id = r.target_claim"
    " CROSS JOIN records la ON la.id = a.record_id"
    " CROSS JOIN records lb ON lb.id = b.record_id"
    " LEFT JOIN claim_state sa ON sa.claim_id = r.source_claim"
    " LEFT JOIN claim_state sb ON sb.claim_id = r.target_claim"
    " WHERE r.chain IS NOT NULL AND r.kind IN ('supersedes', 'conflicts_with')"
    " AND r.confidence >= ? AND la.user_id = ? AND lb.user_id = ?"
    " AND la.forgotten_at IS NULL AND lb.forgotten_at IS NULL"
    " AND (la.expires_at IS NULL OR la.expires_at > ?)"
    " AND (lb.expires_at IS NULL OR lb.expires_at > ?)"
)


_PAIRS_OF: Final = _PAIRS.replace(
    "FROM relations r", "FROM (SELECT * FROM relations WHERE source_record IN ({ids}) UNION"
    " SELECT * FROM relations WHERE target_record IN ({ids})) r", 1)
"""``_PAIRS`` for relations with an end among given records (two ``{ids}`` lists)."""


class ReviewTable:
    """``write``: the writer's connection (decisions, and what the engine reads while it
    derives); ``read``: this thread's read connection."""

    def __init__(self, write: sqlite3.Connection, read: Callable[[], sqlite3.Connection]) -> None:
        self._write = write
        self._read = read

    # -- what the engine reads (writer thread) ---------------------------------------------
    def rejected_items(self, item_ids: Iterable[str]) -> set[str]:
        """Those of ``item_ids`` a person rejected."""
        return {r[0] for r in in_batches(
            self._write, "SELECT item_id FROM reviews WHERE decision = 'reject'"
            " AND item_id IN ({ids})", item_ids)}

    # -- pairs a person may settle -----------------------------------------------------------
    def pairs(self, user_id: str, min_confidence: float, *,
              record_ids: Iterable[str] | None = None, writer: bool = False,
              limit: int | None = None) -> list[dict[str, Any]]:
        """Inferred supersedes and conflicts_with relations at or above ``min_confidence``
        between live, unexpired records of ``user_id`` (with an end among ``record_ids`` when
        given), newest side first: ``kind``, ``confidence``, ``method``, ``evidence`` and
        ``newer_*`` / ``older_*`` (claim, record and status columns)."""
        conn = self._write if writer else self._read()
        now = time.time()
        params: list[Any] = [min_confidence, user_id, user_id, now, now]
        order = " ORDER BY max(la.created_at, lb.created_at) DESC, a.claim_id, b.claim_id"
        if record_ids is None:
            sql = _PAIRS + order + (" LIMIT ?" if limit is not None else "")
            rows = conn.execute(sql, [*params, *([limit] if limit is not None else [])])
            return [dict(r) for r in rows]
        # Driven by the records' own relations (both ends are indexed), never a scan of every
        # relation of the kind: the cost follows the hits, not the store.
        found = in_batches(conn, _PAIRS_OF, record_ids, after=params)
        seen: set[tuple[str, str, str]] = set()
        out = []
        for row in found:
            key = (row["kind"], row["newer_claim_id"], row["older_claim_id"])
            if key not in seen:  # matched on both ends, in two batches
                seen.add(key)
                out.append(dict(row))
        return out

    # -- held decisions ----------------------------------------------------------------------
    def decisions(self, item_ids: Iterable[str], *, writer: bool = False) -> dict[str, Any]:
        conn = self._write if writer else self._read()
        return {r["item_id"]: dict(r) for r in in_batches(
            conn, "SELECT * FROM reviews WHERE item_id IN ({ids})", item_ids)}

    def hold(self, row: dict[str, Any]) -> None:
        """Writer thread: store (or change) one decision; ``row`` has ``DECISION_COLUMNS``."""
        self._write.execute(
            f"INSERT OR REPLACE INTO reviews({', '.join(DECISION_COLUMNS)})"
            f" VALUES ({', '.join('?' * len(DECISION_COLUMNS))})",
            [row[c] for c in DECISION_COLUMNS])

    def undo(self, item_id: str) -> None:
        """Writer thread: drop a held decision."""
        self._write.execute("DELETE FROM reviews WHERE item_id = ?", (item_id,))
