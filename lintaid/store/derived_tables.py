"""Rows of the derived policy tables (``schema.DERIVED_SCHEMA``), read and written as rows.

The same code serves memory.db and workspace.db. It knows columns, not policy types: the glue
in ``lintaid.derivation`` turns these rows into the policy engine's types and back. Writes run
on the writer thread inside the caller's transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, Final

from .schema import DERIVED_TABLES
from .sqlite import in_batches

CLAIM_COLUMNS: Final = ("claim_id", "record_id", "n", "created_at", "source_kind", "scope",
                        "subject", "predicate", "value", "evidence", "start", "end",
                        "effective_at", "cue", "replaces", "weak")
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
    """Explicit relations first, by link; then each chain's, in the order they were derived."""
    if row["chain"] is None:
        return (0, row["source_record"], row["target_record"], row["n"])
    return (1, row["chain"], "", row["n"])


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

    def chain(self, scope: str, subject: str, predicate: str) -> list[sqlite3.Row]:
        return list(self.conn.execute(
            "SELECT * FROM claims WHERE scope = ? AND subject = ? AND predicate = ?"
            " ORDER BY record_id, n", (scope, subject, predicate)))

    def standing_claims(self, subject: str, predicate: str) -> list[sqlite3.Row]:
        """Claims of any scope on ``subject`` and ``predicate`` that are not superseded."""
        return list(self.conn.execute(
            "SELECT c.* FROM claims c LEFT JOIN claim_state s ON s.claim_id = c.claim_id"
            " WHERE c.subject = ? AND c.predicate = ? AND COALESCE(s.status, '') != 'superseded'"
            " ORDER BY c.record_id, c.n", (subject, predicate)))

    def claim_subjects(self) -> set[tuple[str, str]]:
        """Every (subject, predicate) some claim states."""
        return {(r[0], r[1]) for r in self.conn.execute(
            "SELECT DISTINCT subject, predicate FROM claims")}

    def claim_values(self, claim_ids: Iterable[str]) -> dict[str, str]:
        return {r[0]: r[1] for r in in_batches(
            self.conn, "SELECT claim_id, value FROM claims WHERE claim_id IN ({ids})", claim_ids)}

    def chains_reaching(self, table: str, column: str) -> set[str]:
        """Chains (ids) holding a relation with an end that is no row of ``table``: another
        store's claims took part in them."""
        return {r[0] for r in self.conn.execute(
            f"SELECT DISTINCT r.chain FROM relations r WHERE r.chain IS NOT NULL AND ("
            f"NOT EXISTS (SELECT 1 FROM {table} t WHERE t.{column} = r.source_record) OR"
            f" NOT EXISTS (SELECT 1 FROM {table} t WHERE t.{column} = r.target_record))")}

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

    def relations_in(self, chains: Iterable[str]) -> list[sqlite3.Row]:
        rows = in_batches(self.conn, "SELECT * FROM relations WHERE chain IN ({ids})", chains)
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
    def replace_claims(self, record_ids: Iterable[str], rows: Iterable[Sequence[Any]]) -> None:
        """Drop the claims (and claim states) of ``record_ids``; insert ``rows``."""
        ids = list(record_ids)
        in_batches(self.conn, "DELETE FROM claim_state WHERE record_id IN ({ids})", ids)
        in_batches(self.conn, "DELETE FROM claims WHERE record_id IN ({ids})", ids)
        self.conn.executemany(_insert("claims", CLAIM_COLUMNS), list(rows))

    def replace_explicit_relations(self, record_ids: Iterable[str],
                                   rows: Iterable[Sequence[Any]]) -> None:
        """Drop the explicit relations with an end in ``record_ids``; insert ``rows``."""
        in_batches(self.conn, "DELETE FROM relations WHERE chain IS NULL AND"
                   " (source_record IN ({ids}) OR target_record IN ({ids}))", record_ids)
        self.conn.executemany(_insert("relations", RELATION_COLUMNS), list(rows))

    def replace_chain_relations(self, chain: str, rows: Iterable[Sequence[Any]]) -> None:
        self.conn.execute("DELETE FROM relations WHERE chain = ?", (chain,))
        self.conn.executemany(_insert("relations", RELATION_COLUMNS), list(rows))

    def replace_relations_in(self, chains: Iterable[str], rows: Iterable[Sequence[Any]]) -> None:
        """Drop the relations of ``chains``; insert ``rows``."""
        in_batches(self.conn, "DELETE FROM relations WHERE chain IN ({ids})", chains)
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
