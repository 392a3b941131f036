"""Rows of the derived policy tables (``schema.DERIVED_SCHEMA``), read and written as rows.

The same code serves memory.db and workspace.db. It knows columns, not policy types: the glue
in ``lintaid.derivation`` turns these rows into the policy engine's types and back. Writes run
on the writer thread inside the caller's transaction.
"""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, Final

from .schema import DERIVED_TABLES
from .sqlite import in_batches

CLAIM_COLUMNS: Final = ("claim_id", "record_id", "n", "created_at", "source_kind", "scope",
                        "subject", "predicate", "value", "evidence", "start", "end",
                        "effective_at", "cue", "replaces", "topic", "cue_kind", "peers")
KEY_COLUMNS: Final = ("key", "claim_id", "record_id", "scope", "strong", "ord")
FEW: Final = 8
"""Claims wanting one key at most this many: each asks for its nearest holders; more (a
rebuild, a burst), the key's holders are read once."""
INFERRED: Final = "inferred"
"""``relations.chain`` of the relations the policy drew (explicit links have NULL)."""
RELATION_COLUMNS: Final = ("chain", "n", "source_claim", "target_claim", "source_record",
                           "target_record", "kind", "confidence", "method", "evidence")
CLAIM_STATE_COLUMNS: Final = ("claim_id", "record_id", "status", "superseded_by_claim",
                              "superseded_by_record", "confidence", "superseded_by_value")
RECORD_STATE_COLUMNS: Final = ("record_id", "status", "superseded_by", "confidence",
                               "evidence")
CATEGORY_COLUMNS: Final = ("record_id", "category")
ASSERTION_COLUMNS: Final = ("record_id", "n", "user_id", "at", "subject", "attribute", "value",
                            "leaves")


def _insert(table: str, columns: Sequence[str]) -> str:
    return (f"INSERT OR REPLACE INTO {table}({', '.join(columns)})"
            f" VALUES ({', '.join('?' * len(columns))})")


def _relation_order(row: sqlite3.Row) -> tuple[Any, ...]:
    """Explicit relations first, by link; then inferred ones, by their ends."""
    if row["chain"] is None:
        return (0, row["source_record"], row["target_record"], row["n"], "")
    return (1, row["source_claim"], row["kind"], row["target_claim"], "")


class DerivedTables:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def clear(self) -> None:
        for table in DERIVED_TABLES:
            self.conn.execute(f"DELETE FROM {table}")

    # -- reads ---------------------------------------------------------------------------------
    def claims(self, record_ids: Iterable[str]) -> list[sqlite3.Row]:
        rows = in_batches(self.conn, "SELECT * FROM claims WHERE record_id IN ({ids})",
                          record_ids)
        return sorted(rows, key=lambda r: (r["record_id"], r["n"]))

    def candidates(self, wanted: Iterable[tuple[str, float, bool]], scopes: Iterable[str] | None,
                   nearest: int) -> dict[tuple[str, float, bool], list[str]]:
        """For each ``(key, ord, strong_only)``: the ids of the claims holding the key
        (strongly, if asked), the ``nearest`` before and after ``ord``; of these ``scopes``
        (None: any scope, and only claims no other claim of this store retires: what
        another store may read)."""
        where = ""
        params: list[Any] = []
        if scopes is not None:
            scope_list = sorted(set(scopes))
            where = f" AND k.scope IN ({', '.join('?' * len(scope_list))})"
            params = scope_list
        if scopes is None:
            where += (" AND NOT EXISTS (SELECT 1 FROM claim_state s WHERE s.claim_id ="
                      " k.claim_id AND s.status = 'superseded')")
        out: dict[tuple[str, float, bool], list[str]] = {}
        by_key: dict[tuple[str, bool], list[float]] = {}
        for key, ord_, strong_only in set(wanted):
            by_key.setdefault((key, strong_only), []).append(ord_)
        for (key, strong_only), ords in sorted(by_key.items()):
            strong = " AND k.strong = 1" if strong_only else ""
            sql = f"SELECT k.claim_id, k.ord FROM claim_keys k WHERE k.key = ?{where}{strong}"
            if len(ords) <= FEW:  # a few claims want this key: ask for their nearest
                for ord_ in ords:
                    ids: list[str] = []
                    for cmp, order in (("<=", "DESC"), (">", "ASC")):
                        ids.extend(r[0] for r in self.conn.execute(
                            f"{sql} AND k.ord {cmp} ? ORDER BY k.ord {order} LIMIT ?",
                            (key, *params, ord_, nearest)))
                    out[(key, ord_, strong_only)] = ids
                continue
            # many (a rebuild, a burst): read the key's holders once, pick each one's nearest
            holders = sorted((r[1], r[0]) for r in self.conn.execute(sql, (key, *params)))
            times = [h[0] for h in holders]
            for ord_ in ords:
                at = bisect.bisect_right(times, ord_)
                out[(key, ord_, strong_only)] = [h[1] for h in
                                                  holders[max(0, at - nearest):at + nearest]]
        return out

    def claims_by_id(self, claim_ids: Iterable[str]) -> list[sqlite3.Row]:
        return in_batches(self.conn, "SELECT * FROM claims WHERE claim_id IN ({ids})",
                          claim_ids)

    def claims_with_keys(self, keys: Iterable[str], nearest: int) -> list[sqlite3.Row]:
        """Per key, the ``nearest`` newest claims holding it."""
        ids: set[str] = set()
        for key in sorted(set(keys)):
            ids.update(r[0] for r in self.conn.execute(
                "SELECT claim_id FROM claim_keys WHERE key = ? ORDER BY ord DESC LIMIT ?",
                (key, nearest)))
        rows = in_batches(self.conn, "SELECT * FROM claims WHERE claim_id IN ({ids})",
                          sorted(ids))
        return sorted(rows, key=lambda r: r["claim_id"])

    def keys_of_records(self, record_ids: Iterable[str], strong_only: bool = False) -> set[str]:
        strong = " AND strong = 1" if strong_only else ""
        return {r[0] for r in in_batches(
            self.conn, "SELECT key FROM claim_keys WHERE record_id IN ({ids})" + strong,
            record_ids)}

    def all_keys(self) -> set[str]:
        """Every key some claim holds strongly."""
        return {r[0] for r in self.conn.execute(
            "SELECT DISTINCT key FROM claim_keys WHERE strong = 1")}

    def claim_values(self, claim_ids: Iterable[str]) -> dict[str, str]:
        return {r[0]: r[1] for r in in_batches(
            self.conn, "SELECT claim_id, value FROM claims WHERE claim_id IN ({ids})", claim_ids)}

    def records_reaching(self, table: str, column: str) -> set[str]:
        """This store's records holding an inferred relation with an end that is no row of
        ``table``: another store's claims took part in them."""
        out: set[str] = set()
        for r in self.conn.execute(
                f"SELECT source_record, target_record FROM relations r WHERE r.chain IS NOT NULL"
                f" AND (NOT EXISTS (SELECT 1 FROM {table} t WHERE t.{column} = r.source_record)"
                f" OR NOT EXISTS (SELECT 1 FROM {table} t WHERE t.{column} = r.target_record))"):
            out.update((r[0], r[1]))
        return out

    def explicit_relations(self, record_ids: Iterable[str]) -> list[sqlite3.Row]:
        rows = in_batches(self.conn, "SELECT * FROM relations WHERE chain IS NULL AND"
                          " (source_record IN ({ids}) OR target_record IN ({ids}))", record_ids)
        return sorted(_unique(rows), key=_relation_order)

    def explicit_relations_of_claims(self, claim_ids: Iterable[str]) -> list[sqlite3.Row]:
        rows = in_batches(self.conn, "SELECT * FROM relations WHERE chain IS NULL AND"
                          " (source_claim IN ({ids}) OR target_claim IN ({ids}))", claim_ids)
        return sorted(_unique(rows), key=_relation_order)

    def relations_of_claims(self, claim_ids: Iterable[str]) -> list[sqlite3.Row]:
        rows = in_batches(self.conn, "SELECT * FROM relations"
                          " WHERE source_claim IN ({ids}) OR target_claim IN ({ids})", claim_ids)
        return sorted(_unique(rows), key=_relation_order)

    def claim_states(self, claim_ids: Iterable[str]) -> list[sqlite3.Row]:
        return in_batches(self.conn, "SELECT * FROM claim_state WHERE claim_id IN ({ids})",
                          claim_ids)

    def record_states(self, record_ids: Iterable[str]) -> list[sqlite3.Row]:
        return in_batches(self.conn, "SELECT * FROM record_state WHERE record_id IN ({ids})",
                          record_ids)

    def all_record_states(self) -> list[sqlite3.Row]:
        return list(self.conn.execute("SELECT * FROM record_state"))

    # -- writes --------------------------------------------------------------------------------
    def replace_claims(self, record_ids: Iterable[str], rows: Iterable[Sequence[Any]],
                       keys: Iterable[Sequence[Any]]) -> None:
        """Drop the claims (their keys and claim states) of ``record_ids``; insert ``rows``
        and ``keys`` (``KEY_COLUMNS``)."""
        ids = list(record_ids)
        in_batches(self.conn, "DELETE FROM claim_state WHERE record_id IN ({ids})", ids)
        in_batches(self.conn, "DELETE FROM claim_keys WHERE record_id IN ({ids})", ids)
        in_batches(self.conn, "DELETE FROM claims WHERE record_id IN ({ids})", ids)
        self.conn.executemany(_insert("claims", CLAIM_COLUMNS), list(rows))
        self.conn.executemany(_insert("claim_keys", KEY_COLUMNS), list(keys))

    def replace_explicit_relations(self, record_ids: Iterable[str],
                                   rows: Iterable[Sequence[Any]]) -> None:
        """Drop the explicit relations with an end in ``record_ids``; insert ``rows``."""
        in_batches(self.conn, "DELETE FROM relations WHERE chain IS NULL AND"
                   " (source_record IN ({ids}) OR target_record IN ({ids}))", record_ids)
        self.conn.executemany(_insert("relations", RELATION_COLUMNS), list(rows))

    def replace_inferred_relations(self, claim_ids: Iterable[str],
                                   rows: Iterable[Sequence[Any]]) -> None:
        """Drop the inferred relations with an end in ``claim_ids``; insert ``rows``."""
        ids = list(claim_ids)
        in_batches(self.conn, "DELETE FROM relations WHERE chain IS NOT NULL AND"
                   " source_claim IN ({ids})", ids)
        in_batches(self.conn, "DELETE FROM relations WHERE chain IS NOT NULL AND"
                   " target_claim IN ({ids})", ids)
        self.conn.executemany(_insert("relations", RELATION_COLUMNS), list(rows))

    def write_claim_states(self, rows: Iterable[Sequence[Any]]) -> None:
        self.conn.executemany(_insert("claim_state", CLAIM_STATE_COLUMNS), list(rows))

    def write_record_states(self, rows: Iterable[Sequence[Any]],
                            deleted: Iterable[str]) -> None:
        in_batches(self.conn, "DELETE FROM record_state WHERE record_id IN ({ids})", deleted)
        self.conn.executemany(_insert("record_state", RECORD_STATE_COLUMNS), list(rows))

    def replace_staleness(self, record_ids: Iterable[str], categories: Iterable[Sequence[Any]],
                          assertions: Iterable[Sequence[Any]]) -> None:
        """Drop the staleness inputs of ``record_ids``; insert the given rows."""
        ids = list(record_ids)
        in_batches(self.conn, "DELETE FROM record_category WHERE record_id IN ({ids})", ids)
        in_batches(self.conn, "DELETE FROM assertions WHERE record_id IN ({ids})", ids)
        self.conn.executemany(_insert("record_category", CATEGORY_COLUMNS), list(categories))
        self.conn.executemany(_insert("assertions", ASSERTION_COLUMNS), list(assertions))


def _unique(rows: list[sqlite3.Row]) -> list[sqlite3.Row]:
    """One row per relation: a relation matching on both ends comes back from two batches."""
    seen: dict[tuple[str, str, str], sqlite3.Row] = {}
    for row in rows:
        seen.setdefault((row["source_claim"], row["kind"], row["target_claim"]), row)
    return list(seen.values())
