"""The review queue's rows: held decisions (``reviews``, durable) and the relations a person
may settle (read from the derived tables).

Persistence only: which relations wait, and what an item's id is, are the policy's
(``lintaid.policy.review``); the caller passes the thresholds. ``relations`` holds a chain's
inferred relations (``chain`` not null) between claims of live records; a row here is one of
them with both claims, both records and both claims' statuses. One end may be a decision
document's claim (a memory chain's read-only member): that end has only its ids here, and
the caller reads the rest from the workspace.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable
from typing import Any, Final

from .sqlite import in_batches

_SIDE_COLUMNS: Final = ("scope", "subject", "predicate", "value", "evidence", "effective_at")
_RECORD_COLUMNS: Final = ("created_at", "source", "session_id", "user_id")
DECISION_COLUMNS: Final = ("item_id", "decision", "user_id", "actor", "at", "reason", "kind",
                           "confidence", "scope", "subject", "predicate", "newer_record",
                           "newer_value", "older_record", "older_value")


def _side(end: str, claim: str, record: str, state: str, name: str) -> str:
    """One end's columns. The claim and record ids come from the relation (``end``: source
    or target), so an end that is another store's claim (a decision document's, on a memory
    chain) keeps them while its own columns are NULL (``{name}_external`` is 1)."""
    cols = [f"r.{end}_claim AS {name}_claim_id", f"r.{end}_record AS {name}_record_id"]
    cols += [f"{claim}.{c} AS {name}_{c}" for c in _SIDE_COLUMNS]
    cols += [f"{record}.{c} AS {name}_{c}" for c in _RECORD_COLUMNS]
    cols.append(f"COALESCE({state}.status, 'current') AS {name}_status")
    cols.append(f"({record}.id IS NULL) AS {name}_external")
    return ", ".join(cols)


def _live(record: str) -> str:
    """A memory end of the user, not forgotten, not expired; or another store's claim."""
    return (f"({record}.id IS NULL OR ({record}.user_id = ? AND {record}.forgotten_at IS NULL"
            f" AND ({record}.expires_at IS NULL OR {record}.expires_at > ?)))")


_PAIRS: Final = (
    "SELECT r.kind, r.confidence, r.method, r.evidence, r.chain,"
    f" {_side('source', 'a', 'la', 'sa', 'newer')},"
    f" {_side('target', 'b', 'lb', 'sb', 'older')}"
    # LEFT JOINs keep the written order too: from the relations of these kinds, never a scan.
    " FROM relations r LEFT JOIN claims a ON a.claim_id = r.source_claim"
    " LEFT JOIN claims b ON b.claim_id = r.target_claim"
    " LEFT JOIN records la ON la.id = r.source_record"
    " LEFT JOIN records lb ON lb.id = r.target_record"
    " LEFT JOIN claim_state sa ON sa.claim_id = r.source_claim"
    " LEFT JOIN claim_state sb ON sb.claim_id = r.target_claim"
    " WHERE r.chain IS NOT NULL AND r.kind IN ('supersedes', 'conflicts_with')"
    " AND r.confidence >= ? AND (la.id IS NOT NULL OR lb.id IS NOT NULL)"
    f" AND {_live('la')} AND {_live('lb')}"
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
    def rejected(self, scope: str, subject: str, predicate: str) -> set[str]:
        """Item ids on this chain whose two statements the engine must never relate again:
        the rejected ones, and the acceptances of a memory over a decision document (the
        older end is no record here: memory never writes a document's state, so the pair is
        settled by not relating it; an acceptance between memories is a link instead)."""
        return {r[0] for r in self._write.execute(
            "SELECT item_id FROM reviews v WHERE scope = ? AND subject = ? AND predicate = ?"
            " AND (decision = 'reject' OR (decision = 'accept' AND NOT EXISTS"
            " (SELECT 1 FROM records x WHERE x.id = v.older_record)))",
            (scope, subject, predicate))}

    def rejected_items(self, item_ids: Iterable[str]) -> set[str]:
        """Those of ``item_ids`` the engine must never relate again: the rejected ones, and
        the acceptances of a memory over a decision document (see ``rejected``)."""
        return {r[0] for r in in_batches(
            self._write, "SELECT item_id FROM reviews v WHERE item_id IN ({ids})"
            " AND (decision = 'reject' OR (decision = 'accept' AND NOT EXISTS"
            " (SELECT 1 FROM records x WHERE x.id = v.older_record)))", item_ids)}

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
        params: list[Any] = [min_confidence, user_id, now, user_id, now]
        order = (" ORDER BY max(COALESCE(la.created_at, 0), COALESCE(lb.created_at, 0)) DESC,"
                 " r.source_claim, r.target_claim")
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

    def overruled_documents(self) -> set[tuple[str, str]]:
        """(path, value) of decision documents' statements a person accepted a memory over
        (the older end of an acceptance that is no record here)."""
        return {(r[0], r[1]) for r in self._read().execute(
            "SELECT older_record, older_value FROM reviews v WHERE decision = 'accept'"
            " AND NOT EXISTS (SELECT 1 FROM records x WHERE x.id = v.older_record)")}

    def records_here(self, ids: Iterable[str]) -> set[str]:
        """Writer thread: which of ``ids`` are memory records (the others: documents)."""
        return {r[0] for r in in_batches(self._write, "SELECT id FROM records WHERE id IN ({ids})",
                                         ids)}

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
