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

_FLAG: Final = """(EXISTS (SELECT 1 FROM relations x WHERE x.target_record = {rid}
               AND x.kind IN ('supersedes', 'conflicts_with'))
       OR EXISTS (SELECT 1 FROM assertions a WHERE a.record_id = {rid}
                  AND a.attribute != 'text'))"""
"""Whether a record is contradicted by a claim relation or asserts about a person."""

_ROW: Final = f"""
SELECT r.id, r.user_id, r.created_at, c.category, {_FLAG.format(rid="r.id")}
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

# What a change to each table does to a record's row: made again (whether it has one at all
# may change), dropped (superseded), or only its flag: set by a contradicting relation or a
# person's assertion, looked at again when one goes. Derivation writes a chain's relations and
# states again on each of its claims, so those triggers do the least, and only when what they
# change can matter (a state becoming or ceasing to be superseded).
_AGAIN, _DROP, _SET, _CHECK = "again", "drop", "set", "check"
_SUPERSEDED = "{row}.status = 'superseded'"
_UNWATCHED = "NOT EXISTS (SELECT 1 FROM record_watch WHERE record_id = NEW.record_id)"
_SOURCES: Final = (
    ("records_insert", "records", "INSERT", "", "NEW.id", _AGAIN),
    ("records_update", "records", "UPDATE OF forgotten_at, kind, user_id, created_at", "",
     "NEW.id", _AGAIN),
    ("records_delete", "records", "DELETE", "", "OLD.id", _DROP),
    ("state_superseded", "record_state", "INSERT", _SUPERSEDED.format(row="NEW"),
     "NEW.record_id", _DROP),
    ("state_insert", "record_state", "INSERT",
     f"NOT {_SUPERSEDED.format(row='NEW')} AND {_UNWATCHED}", "NEW.record_id", _AGAIN),
    ("state_update", "record_state", "UPDATE",
     f"({_SUPERSEDED.format(row='OLD')}) IS NOT ({_SUPERSEDED.format(row='NEW')})",
     "NEW.record_id", _AGAIN),
    ("state_delete", "record_state", "DELETE", _SUPERSEDED.format(row="OLD"),
     "OLD.record_id", _AGAIN),
    ("category_insert", "record_category", "INSERT", "", "NEW.record_id", _AGAIN),
    ("category_update", "record_category", "UPDATE", "", "NEW.record_id", _AGAIN),
    ("category_delete", "record_category", "DELETE", "", "OLD.record_id", _DROP),
    ("relation_insert", "relations", "INSERT",
     "NEW.kind IN ('supersedes', 'conflicts_with')", "NEW.target_record", _SET),
    ("relation_delete", "relations", "DELETE",
     "OLD.kind IN ('supersedes', 'conflicts_with')", "OLD.target_record", _CHECK),
    ("assertion_insert", "assertions", "INSERT", "NEW.attribute != 'text'", "NEW.record_id",
     _SET),
    ("assertion_delete", "assertions", "DELETE", "OLD.attribute != 'text'", "OLD.record_id",
     _CHECK),
)
TRIGGERS: Final = tuple(f"record_watch_{name}" for name, *_ in _SOURCES)


def _trigger(name: str, table: str, event: str, when: str, rid: str, action: str) -> str:
    drop = f"DELETE FROM record_watch WHERE record_id = {rid};"
    body = {
        _DROP: drop,
        _SET: f"UPDATE record_watch SET flagged = 1 WHERE record_id = {rid} AND flagged = 0;",
        _CHECK: (f"UPDATE record_watch SET flagged = {_FLAG.format(rid=rid)}"
                 f" WHERE record_id = {rid} AND flagged = 1;"),
        _AGAIN: f"{drop} INSERT INTO record_watch {_ROW} AND r.id = {rid};",
    }[action]
    return (f"CREATE TRIGGER record_watch_{name} AFTER {event} ON {table}"
            + (f" WHEN {when}" if when else "") + f" BEGIN {body} END")


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
