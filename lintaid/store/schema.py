"""The derived policy tables, the same shape in memory.db and workspace.db.

A record id is a memory record's id in memory.db and a file's path in workspace.db. Everything
here is derived by the one policy engine and may be thrown away: when this text changes, the
tables are dropped and created again (``ensure_derived_schema``) and then derived again.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from typing import Final

from .sqlite import script, transaction

DERIVED_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS claims (
    claim_id TEXT PRIMARY KEY,
    record_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    created_at REAL NOT NULL,  -- the record's, when extracted: the claim's order in a chain
    source_kind TEXT NOT NULL,
    scope TEXT NOT NULL,
    subject TEXT NOT NULL,
    predicate TEXT NOT NULL,
    value TEXT NOT NULL,
    evidence TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    effective_at REAL,
    cue INTEGER NOT NULL,
    replaces TEXT,
    topic TEXT NOT NULL DEFAULT '',  -- weighted terms, ``lintaid.policy.topics.encode``
    cue_kind TEXT NOT NULL DEFAULT '',
    peers TEXT NOT NULL DEFAULT ''  -- the other values its statement states
);
CREATE INDEX IF NOT EXISTS claims_record ON claims(record_id);

-- What each claim can be found by (``lintaid.policy.engine.claim_keys``): two claims sharing
-- a key are candidates for a relation.
CREATE TABLE IF NOT EXISTS claim_keys (
    key TEXT NOT NULL,
    claim_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    strong INTEGER NOT NULL,  -- the claim holds the key at full weight
    ord REAL NOT NULL,  -- the claim's record's creation time: "nearest" is by this
    PRIMARY KEY (key, claim_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS claim_keys_record ON claim_keys(record_id);
CREATE INDEX IF NOT EXISTS claim_keys_near ON claim_keys(key, ord);

CREATE TABLE IF NOT EXISTS relations (
    chain TEXT,  -- 'inferred' for relations the policy drew; NULL for explicit links
    n INTEGER NOT NULL,  -- order within its explicit link (0 for inferred ones)
    source_claim TEXT NOT NULL,
    target_claim TEXT NOT NULL,
    source_record TEXT NOT NULL,
    target_record TEXT NOT NULL,
    kind TEXT NOT NULL,
    confidence REAL NOT NULL,
    method TEXT NOT NULL,
    evidence TEXT NOT NULL,
    PRIMARY KEY (source_claim, kind, target_claim)
);
CREATE INDEX IF NOT EXISTS relations_source ON relations(source_record);
CREATE INDEX IF NOT EXISTS relations_target ON relations(target_record);
CREATE INDEX IF NOT EXISTS relations_source_claim ON relations(source_claim);
CREATE INDEX IF NOT EXISTS relations_target_claim ON relations(target_claim);
CREATE INDEX IF NOT EXISTS relations_chain ON relations(chain);
CREATE INDEX IF NOT EXISTS relations_kind ON relations(kind);

CREATE TABLE IF NOT EXISTS claim_state (
    claim_id TEXT PRIMARY KEY,
    record_id TEXT NOT NULL,
    status TEXT NOT NULL,
    superseded_by_claim TEXT,
    superseded_by_record TEXT,
    confidence REAL,
    superseded_by_value TEXT  -- the replacing claim's value when another store holds it
);
CREATE INDEX IF NOT EXISTS claim_state_record ON claim_state(record_id);
CREATE INDEX IF NOT EXISTS claim_state_retired_by ON claim_state(superseded_by_record);

CREATE TABLE IF NOT EXISTS record_state (
    record_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    superseded_by TEXT,
    confidence REAL,
    evidence TEXT
);
CREATE INDEX IF NOT EXISTS record_state_retired_by ON record_state(superseded_by);

-- Staleness inputs, one record at a time (``lintaid.policy.staleness``): the record's category,
-- and what it asserts (about a person, and its own words), for later records to confirm or
-- contradict. ``at`` is the record's creation time.
CREATE TABLE IF NOT EXISTS record_category (
    record_id TEXT PRIMARY KEY,
    category TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS assertions (
    record_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    user_id TEXT NOT NULL,
    at REAL NOT NULL,
    subject TEXT NOT NULL,
    attribute TEXT NOT NULL,
    value TEXT NOT NULL,
    leaves INTEGER NOT NULL,
    PRIMARY KEY (record_id, n)
);
CREATE INDEX IF NOT EXISTS assertions_attribute ON assertions(user_id, subject, attribute);
CREATE INDEX IF NOT EXISTS assertions_value ON assertions(user_id, subject, value);
"""

DERIVED_TABLES: Final = ("claims", "claim_keys", "relations", "claim_state", "record_state",
                         "record_category", "assertions")
META: Final = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
DERIVED_VERSION_KEY: Final = "derived_version"
_SHAPE_KEY: Final = "derived_schema"
# Every table and index DERIVED_SCHEMA creates: all present (and the shape unchanged), a start
# writes nothing.
_DERIVED_NAMES: Final = frozenset(re.findall(r"CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)",
                                             DERIVED_SCHEMA))


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: str | None) -> None:
    if value is None:
        conn.execute("DELETE FROM meta WHERE key = ?", (key,))
    else:
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


def ensure_derived_schema(conn: sqlite3.Connection) -> bool:
    """Create the derived tables; drop them first when their shape changed. True: dropped.

    Dropping also forgets the derived-state version, so the owner derives them again. All of it
    is one transaction (one commit), and none when the shape is already there.
    """
    shape = hashlib.sha256(DERIVED_SCHEMA.encode()).hexdigest()[:16]
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    if present >= {"meta", *_DERIVED_NAMES} and get_meta(conn, _SHAPE_KEY) == shape:
        return False  # as the last start left it: nothing to write
    with transaction(conn):
        conn.execute(META)
        dropped = get_meta(conn, _SHAPE_KEY) != shape
        if dropped:
            for table in DERIVED_TABLES:
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            set_meta(conn, DERIVED_VERSION_KEY, None)
        script(conn, DERIVED_SCHEMA)
        set_meta(conn, _SHAPE_KEY, shape)
    return dropped
