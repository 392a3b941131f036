-- memory.db as lintaid wrote it before named migrations (meta.schema_version = 2).
-- memory.db: the durable source of truth. Derived tables (claims, relations, *_state) are
-- recomputed from records; held decisions (supersedes, forgotten_at, tombstones) are not.
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

CREATE TABLE IF NOT EXISTS claims (
    claim_id TEXT PRIMARY KEY,
    record_id TEXT NOT NULL,
    n INTEGER NOT NULL,
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
    replaces TEXT
);
CREATE INDEX IF NOT EXISTS claims_record ON claims(record_id);
CREATE INDEX IF NOT EXISTS claims_chain ON claims(scope, subject, predicate);

CREATE TABLE IF NOT EXISTS relations (
    chain TEXT,  -- the chain key for inferred relations; NULL for explicit links
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
CREATE INDEX IF NOT EXISTS relations_chain ON relations(chain);

CREATE TABLE IF NOT EXISTS claim_state (
    claim_id TEXT PRIMARY KEY,
    record_id TEXT NOT NULL,
    status TEXT NOT NULL,
    superseded_by_claim TEXT,
    superseded_by_record TEXT,
    confidence REAL
);
CREATE INDEX IF NOT EXISTS claim_state_record ON claim_state(record_id);

CREATE TABLE IF NOT EXISTS record_state (
    record_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    superseded_by TEXT,
    confidence REAL,
    evidence TEXT
);

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

-- Records whose index entry must be rewritten; filled in the same transaction as the change
-- (seq grows with every mark), emptied once the index commit holding that seq is durable,
-- replayed at start after a crash.
CREATE TABLE IF NOT EXISTS pending_index (record_id TEXT PRIMARY KEY, seq INTEGER NOT NULL);

CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
