"""When claims and records held (valid time) and when the store knew it (record time).

Read from the records, the derived claim and record states, and the held links; nothing is
stored. A claim holds from its effective time until the record that retired it took effect
(its valid time, else its creation), or until its own record expired; the store learned it
when its record was written and learned of its retirement when the retiring record was
written (or, for an explicit link, when the link was made). Read connections, any thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from .sqlite import in_batches


class Fields(Protocol):
    """A row by column name (``sqlite3.Row``, or a dict)."""

    def __getitem__(self, key: str) -> Any: ...


@dataclass(frozen=True)
class Span:
    """``valid_from``/``valid_until`` on the valid-time axis (None: still holds);
    ``learned_at``/``retracted_at`` on the record-time axis (None: not retracted).
    ``expires_at``: the record's own end, which holds whatever the store learned later."""

    valid_from: float
    valid_until: float | None
    learned_at: float
    retracted_at: float | None
    expires_at: float | None = None
    explicit: bool = False  # retired by an explicit link (a person's or an agent's decision)


def _until(replaced: float | None, expires: float | None) -> float | None:
    ends = [t for t in (replaced, expires) if t is not None]
    return min(ends) if ends else None


def _retired(row: Fields) -> tuple[float | None, float | None]:
    """(when the retirement took effect, when the store learned it) for a row whose state
    names a retiring record ``n_*``."""
    if row["n_created"] is None:
        return None, None
    effective = row["n_valid"] if row["n_valid"] is not None else row["n_created"]
    learned = row["link_at"] if row["link_at"] is not None else row["n_created"]
    return float(effective), float(learned)


def claim_span(claim: Fields, record: Fields) -> Span:
    """A claim's span from its ``effective_at`` and retiring record's ``n_created``,
    ``n_valid`` and ``link_at``, and its record's ``created_at``, ``valid_at`` and
    ``expires_at``."""
    start = claim["effective_at"]
    if start is None:
        start = record["valid_at"] if record["valid_at"] is not None else record["created_at"]
    replaced, retracted = _retired(claim)
    return Span(float(start), _until(replaced, record["expires_at"]),
                float(record["created_at"]), retracted, record["expires_at"])


def claim_spans(conn: sqlite3.Connection, record_ids: Iterable[str]) -> dict[str, Span]:
    """Per claim id of these records: its span (a claim not superseded holds on)."""
    out: dict[str, Span] = {}
    for row in in_batches(
        conn, "SELECT c.claim_id, c.effective_at, r.created_at, r.valid_at, r.expires_at,"
        " nr.created_at AS n_created, nr.valid_at AS n_valid,"
        " (SELECT l.at FROM links l WHERE l.new_id = s.superseded_by_record"
        "  AND l.old_id = c.record_id) AS link_at"
        " FROM claims c CROSS JOIN records r ON r.id = c.record_id"
        " LEFT JOIN claim_state s ON s.claim_id = c.claim_id"
        " LEFT JOIN records nr ON nr.id = s.superseded_by_record AND s.status = 'superseded'"
        " WHERE c.record_id IN ({ids})", record_ids,
    ):
        out[row["claim_id"]] = claim_span(row, row)
    return out


def record_spans(conn: sqlite3.Connection, record_ids: Iterable[str]) -> dict[str, Span]:
    """Per record: from its effective time until the record that wholly retired it took
    effect (an explicit link, or every claim superseded), or until it expired."""
    out: dict[str, Span] = {}
    for row in in_batches(
        conn, "SELECT r.id, r.created_at, r.valid_at, r.expires_at,"
        " nr.created_at AS n_created, nr.valid_at AS n_valid,"
        " (SELECT l.at FROM links l WHERE l.new_id = s.superseded_by"
        "  AND l.old_id = r.id) AS link_at"
        " FROM records r LEFT JOIN record_state s ON s.record_id = r.id"
        " LEFT JOIN records nr ON nr.id = s.superseded_by AND s.status = 'superseded'"
        " WHERE r.id IN ({ids})", record_ids,
    ):
        start = row["valid_at"] if row["valid_at"] is not None else row["created_at"]
        replaced, retracted = _retired(row)
        out[row["id"]] = Span(float(start), _until(replaced, row["expires_at"]),
                              float(row["created_at"]), retracted, row["expires_at"],
                              explicit=row["link_at"] is not None and replaced is not None)
    return out
