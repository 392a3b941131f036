"""``record_watch``: the records a SessionStart brief may ask about, kept by SQLite itself.

``verify_candidates`` wants the oldest few records a current read may show (not forgotten, no
prompt, not superseded) that are old for their category, or contradicted by a claim relation,
or assert something about a person. Read from ``records`` that is a scan: most old records
are superseded, and in a young store hardly any qualify, so the scan read every record (0.8 s
at 100k records). This table holds one row per record a current read may show, with its
category and whether it is contradicted or asserts about a person (``flagged``); its indexes
give each category's oldest rows, and the oldest flagged ones, directly.

It is derived from ``records`` and the derived tables by triggers, so every writer (the
policy engine, forget and restore, imports, team pulls) keeps it in step without knowing it
exists; ``ensure_watch`` creates it (and fills it from the tables) when it is missing, when
its shape changed, or when the derived tables were made again.
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Final

from .schema import get_meta, set_meta
from .sqlite import transaction

WATCH_TABLE: Final = "record_watch"  # derived: never salvaged, made again at open

_ROW: Final = """
SELECT r.id, r.user_id, r.created_at, c.category,
       EXISTS (SELECT 1 FROM relations x WHERE x.target_record = r.id
               AND x.kind IN ('supersedes', 'conflicts_with'))
       OR EXISTS (SELECT 1 FROM assertions a WHERE a.record_id = r.id AND a.attribute != 'text')
FROM records r JOIN record_category c ON c.record_id = r.id
WHERE r.forgotten_at IS NULL AND r.kind != 'prompt'
  AND NOT EXISTS (SELECT 1 FROM record_state s WHERE s.record_id = r.id
                  AND s.status = 'superseded')"""
"""A record's watch row, if it has one (``flagged`` last)."""

_TABLE: Final = """
CREATE TABLE record_watch (
    record_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    created_at REAL NOT NULL,
    category TEXT NOT NULL,
    flagged INTEGER NOT NULL  -- contradicted by a claim relation, or about a person
);
CREATE INDEX record_watch_aged ON record_watch(user_id, category, created_at, record_id);
CREATE INDEX record_watch_flagged ON record_watch(user_id, category, created_at, record_id)
    WHERE flagged = 1;
"""

# (trigger name suffix, table, event, WHEN condition or "", the record id expression)
_SOURCES: Final = (
    ("records_insert", "records", "INSERT", "", "NEW.id"),
    ("records_update", "records", "UPDATE OF forgotten_at, kind, user_id, created_at", "",
     "NEW.id"),
    ("records_delete", "records", "DELETE", "", "OLD.id"),
    ("state_insert", "record_state", "INSERT", "", "NEW.record_id"),
    ("state_update", "record_state", "UPDATE", "", "NEW.record_id"),
    ("state_delete", "record_state", "DELETE", "", "OLD.record_id"),
    ("category_insert", "record_category", "INSERT", "", "NEW.record_id"),
    ("category_update", "record_category", "UPDATE", "", "NEW.record_id"),
    ("category_delete", "record_category", "DELETE", "", "OLD.record_id"),
    ("relation_insert", "relations", "INSERT",
     "NEW.kind IN ('supersedes', 'conflicts_with')", "NEW.target_record"),
    ("relation_delete", "relations", "DELETE",
     "OLD.kind IN ('supersedes', 'conflicts_with')", "OLD.target_record"),
    ("assertion_insert", "assertions", "INSERT", "NEW.attribute != 'text'", "NEW.record_id"),
    ("assertion_delete", "assertions", "DELETE", "OLD.attribute != 'text'", "OLD.record_id"),
)
TRIGGERS: Final = tuple(f"record_watch_{name}" for name, *_ in _SOURCES)


def _trigger(name: str, table: str, event: str, when: str, rid: str) -> str:
    return (f"CREATE TRIGGER record_watch_{name} AFTER {event} ON {table}"
            + (f" WHEN {when}" if when else "")
            + f" BEGIN DELETE FROM record_watch WHERE record_id = {rid};"
            f" INSERT INTO record_watch {_ROW} AND r.id = {rid}; END")


_DDL: Final = (*(s.strip() for s in _TABLE.split(";") if s.strip()),
               *(_trigger(*source) for source in _SOURCES))
_SHAPE_KEY: Final = "record_watch_shape"
_SHAPE: Final = hashlib.sha256("\n".join(_DDL).encode()).hexdigest()[:16]


def ensure_watch(conn: sqlite3.Connection, *, rebuilt: bool = False) -> bool:
    """Create ``record_watch`` and its triggers and fill it, unless they are there in this
    shape already; ``rebuilt``: the derived tables were just made again (their triggers went
    with them), so make it again too. True when it was (re)made: one transaction."""
    present = {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE name = 'record_watch' OR name LIKE"
        " 'record_watch_%'")}
    if not rebuilt and present >= {"record_watch", *TRIGGERS} \
            and get_meta(conn, _SHAPE_KEY) == _SHAPE:
        return False
    with transaction(conn):
        for name in TRIGGERS:
            conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        conn.execute("DROP TABLE IF EXISTS record_watch")
        for statement in _DDL:
            conn.execute(statement)
        conn.execute(f"INSERT INTO record_watch {_ROW}")
        set_meta(conn, _SHAPE_KEY, _SHAPE)
    return True


def expected_rows(conn: sqlite3.Connection) -> set[tuple[object, ...]]:
    """What ``record_watch`` should hold, computed from the tables (for checks)."""
    return {tuple(r) for r in conn.execute(_ROW)}
