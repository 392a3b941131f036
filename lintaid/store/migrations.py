"""Named, ordered migrations for memory.db's durable tables (records, links, audit, tombstones).

Each migration runs once and is recorded by name in ``_migrations``; the list only ever grows
at the end. The pending ones run in one transaction: a database is never left half-migrated,
and a new one costs one commit (one fsync) instead of one per migration. A database written before migrations existed (it has
``meta.schema_version`` and no ``_migrations`` table) replays the same list: ``m001`` finds its
tables already there and changes nothing, the later ones move its data forward.

The derived tables are not migrated: they are dropped and derived again (see ``schema.py``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from .sqlite import script, transaction

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


def applied(conn: sqlite3.Connection) -> list[str]:
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = '_migrations'").fetchone() is None:
        return []
    return [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY applied_at, name")]


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply every migration not yet recorded, in one transaction; return the names applied."""
    done = set(applied(conn))
    pending = [fn for fn in MIGRATIONS if fn.__name__ not in done]
    if not pending and done:
        return []
    with transaction(conn):
        conn.execute("CREATE TABLE IF NOT EXISTS _migrations"
                     " (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
        for fn in pending:
            fn(conn)
            conn.execute("INSERT INTO _migrations(name, applied_at) VALUES (?, ?)",
                         (fn.__name__, time.time()))
    return [fn.__name__ for fn in pending]


@migration
def m001_initial(conn: sqlite3.Connection) -> None:
    """The durable tables as the first release wrote them (``meta.schema_version`` 1 and 2)."""
    script(conn, """
        CREATE TABLE IF NOT EXISTS records (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            source TEXT NOT NULL,
            user_id TEXT NOT NULL,
            provider TEXT,
            session_id TEXT,
            event TEXT,
            doc_type TEXT,
            cwd TEXT,
            branch TEXT,
            revision TEXT,
            paths TEXT NOT NULL DEFAULT '[]',
            tools TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}',
            file_hashes TEXT NOT NULL DEFAULT '{}',
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            valid_at REAL,
            expires_at REAL,
            supersedes TEXT,
            forgotten_at REAL,
            forgotten_reason TEXT
        );
        CREATE INDEX IF NOT EXISTS records_user ON records(user_id, created_at);
        CREATE INDEX IF NOT EXISTS records_supersedes ON records(supersedes);
        CREATE TABLE IF NOT EXISTS audit (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            at REAL NOT NULL,
            actor TEXT NOT NULL,
            op TEXT NOT NULL,
            target TEXT NOT NULL,
            user_id TEXT NOT NULL,
            before_hash TEXT,
            after_hash TEXT,
            before_content TEXT,
            after_content TEXT,
            detail TEXT
        );
        CREATE INDEX IF NOT EXISTS audit_target ON audit(target, seq);
        CREATE TABLE IF NOT EXISTS tombstones (
            fingerprint TEXT NOT NULL,
            user_id TEXT NOT NULL,
            record_id TEXT NOT NULL,
            at REAL NOT NULL,
            reason TEXT,
            PRIMARY KEY (fingerprint, user_id)
        );
        CREATE TABLE IF NOT EXISTS pending_index (record_id TEXT PRIMARY KEY, seq INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)
    """)


@migration
def m002_held_links(conn: sqlite3.Connection) -> None:
    """Explicit links become a held many-to-many table; ``records.supersedes`` goes.

    One column per record let a second link from the same record replace the first, which
    brought the first target back. The column's links are kept, dated by the record's last
    update (the best time the old schema holds), and the hand-bumped schema version retires.
    """
    script(conn, """
        CREATE TABLE links (
            new_id TEXT NOT NULL,
            old_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            actor TEXT NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY (new_id, old_id)
        );
        CREATE INDEX links_old ON links(old_id);
        INSERT OR IGNORE INTO links(new_id, old_id, user_id, actor, at)
            SELECT id, supersedes, user_id, 'migration', updated_at FROM records
            WHERE supersedes IS NOT NULL AND supersedes != '' AND supersedes != id;
        DROP INDEX IF EXISTS records_supersedes;
        ALTER TABLE records DROP COLUMN supersedes;
        DELETE FROM meta WHERE key = 'schema_version'
    """)


@migration
def m003_turns(conn: sqlite3.Connection) -> None:
    """A captured turn's identity and its request's fingerprint, and an index by session: a
    compaction or session end asks whether its session holds a turn already, and SessionStart
    reads one session's records."""
    script(conn, """
        ALTER TABLE records ADD COLUMN turn_id TEXT;
        ALTER TABLE records ADD COLUMN request_hash TEXT;
        CREATE INDEX records_session ON records(session_id, created_at)
    """)


@migration
def m004_confirmations(conn: sqlite3.Connection) -> None:
    """Explicit confirmations ("this is still true"): held state, one row each, never derived.

    Staleness counts each as one confirmation and ages the record from the latest.
    """
    script(conn, """
        CREATE TABLE confirmations (
            record_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            actor TEXT NOT NULL,
            at REAL NOT NULL
        );
        CREATE INDEX confirmations_record ON confirmations(record_id, at)
    """)


@migration
def m005_trust_reviews(conn: sqlite3.Connection) -> None:
    """Decisions on the review queue: held state, one row per item, never derived.

    An item is a pair of statements the policy related without hiding either (an inferred
    supersession below the hide threshold, or a conflict); ``item_id`` derives from the
    chain and the two (record, value) sides, so it names the same pair after any rebuild.
    ``reject``: the pair is never related again (the engine reads these rows when it relates
    the chain); ``accept``: an explicit link holds the newer over the older (in ``links``).
    """
    script(conn, """
        CREATE TABLE reviews (
            item_id TEXT PRIMARY KEY,
            decision TEXT NOT NULL,
            user_id TEXT NOT NULL,
            actor TEXT NOT NULL,
            at REAL NOT NULL,
            reason TEXT,
            kind TEXT NOT NULL,
            confidence REAL NOT NULL,
            scope TEXT NOT NULL,
            subject TEXT NOT NULL,
            predicate TEXT NOT NULL,
            newer_record TEXT NOT NULL,
            newer_value TEXT NOT NULL,
            older_record TEXT NOT NULL,
            older_value TEXT NOT NULL
        );
        CREATE INDEX reviews_chain ON reviews(scope, subject, predicate, decision);
        CREATE INDEX reviews_newer ON reviews(newer_record);
        CREATE INDEX reviews_older ON reviews(older_record);
        CREATE INDEX audit_at ON audit(at)
    """)


@migration
def m006_team_outbox(conn: sqlite3.Connection) -> None:
    """The team tier (PostgreSQL): what a record's sharing needs, held beside the record.

    ``records.private``: never shared (``lintaid add --private``); ``member`` and ``machine``:
    who wrote a record pulled from a teammate (NULL: written here). ``team_outbox``: what is
    still to be pushed, written in the same transaction as the record or decision it names;
    ``team_state``: the pull cursor and the like, per team space.
    """
    script(conn, """
        ALTER TABLE records ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE records ADD COLUMN member TEXT;
        ALTER TABLE records ADD COLUMN machine TEXT;
        CREATE TABLE team_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            target TEXT NOT NULL,
            other TEXT,
            stamp REAL NOT NULL,
            detail TEXT,
            queued_at REAL NOT NULL
        );
        CREATE TABLE team_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)
    """)


@migration
def m007_team_quarantine(conn: sqlite3.Connection) -> None:
    """Pulled team events refused alone (malformed, out of range, naming what was never
    shared): kept for a person to see, bounded and redacted; the pull cursor moved past
    them."""
    script(conn, """
        CREATE TABLE team_quarantine (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            server_seq INTEGER NOT NULL,
            event_id TEXT,
            kind TEXT,
            member TEXT,
            reason TEXT NOT NULL,
            excerpt TEXT,
            at REAL NOT NULL
        )
    """)


@migration
def m008_injection_ledger(conn: sqlite3.Connection) -> None:
    """What memory did: one row per injection (what it showed, its size, the values,
    identifiers and paths its statements hold) and, once the session's next capture read it,
    whether the agent used it (``used``: 1 or 0; NULL until judged). Held, never derived."""
    script(conn, """
        CREATE TABLE injections (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            at REAL NOT NULL,
            client TEXT,
            session_id TEXT,
            event TEXT NOT NULL,
            kind TEXT NOT NULL,
            records TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            tokens INTEGER NOT NULL,
            markers TEXT NOT NULL,
            judged_at REAL,
            used INTEGER,
            used_markers TEXT
        );
        CREATE INDEX injections_session ON injections(session_id, seq);
        CREATE INDEX injections_at ON injections(at)
    """)


@migration
def m009_bulletin_board(conn: sqlite3.Connection) -> None:
    """The bulletin board: short status notes agents leave each other, held apart from
    memory (never records, never mined for claims, never indexed with memory, never
    injected). ``boards``: one per (user, caller-chosen key), with the last sequence given
    to a post; ``board_posts``: each post with its board's sequence, its author's client and
    session, and the caller's ``request_id`` (one post per request); ``board_members``: the
    sessions that joined a board and the last sequence each read; ``board_sessions``: each
    session's default board (the last it opened). ``board_posts_fts``: full-text search of
    the posts, kept in step by triggers."""
    script(conn, """
        CREATE TABLE boards (
            board_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            key TEXT NOT NULL,
            title TEXT NOT NULL,
            created_at REAL NOT NULL,
            client TEXT,
            session_id TEXT,
            last_sequence INTEGER NOT NULL DEFAULT 0,
            UNIQUE (user_id, key)
        );
        CREATE TABLE board_posts (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            post_id TEXT NOT NULL UNIQUE,
            board_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            sequence INTEGER NOT NULL,
            content TEXT NOT NULL,
            author TEXT,
            client TEXT,
            session_id TEXT,
            request_id TEXT NOT NULL,
            created_at REAL NOT NULL,
            UNIQUE (board_id, sequence),
            UNIQUE (user_id, request_id)
        );
        CREATE INDEX board_posts_at ON board_posts(created_at);
        CREATE TABLE board_members (
            board_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            client TEXT,
            joined_at REAL NOT NULL,
            seen_at REAL NOT NULL,
            read_sequence INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (board_id, session_id)
        );
        CREATE INDEX board_members_session ON board_members(user_id, session_id);
        CREATE TABLE board_sessions (
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            board_id TEXT NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY (user_id, session_id)
        );
        CREATE VIRTUAL TABLE board_posts_fts USING fts5(
            content, content='board_posts', content_rowid='seq',
            tokenize='porter unicode61');
        CREATE TRIGGER board_posts_fts_add AFTER INSERT ON board_posts BEGIN
            INSERT INTO board_posts_fts(rowid, content) VALUES (new.seq, new.content);
        END;
        CREATE TRIGGER board_posts_fts_drop AFTER DELETE ON board_posts BEGIN
            INSERT INTO board_posts_fts(board_posts_fts, rowid, content)
                VALUES ('delete', old.seq, old.content);
        END
    """)


@migration
def m010_notes(conn: sqlite3.Connection) -> None:
    """A user's notes, newest first, without reading the other records: the notes a
    SessionStart lists read every record of a store that holds none. Partial, so only a
    query naming ``kind = 'note'`` itself can use it (no other query's plan moves)."""
    conn.execute("CREATE INDEX records_notes ON records(user_id, created_at) WHERE kind = 'note'")
