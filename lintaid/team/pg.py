"""The team server: PostgreSQL through psycopg 3. The only module that imports psycopg.

One table of events, partitioned logically by team space (team name and repository key):
every shared record, decision and tombstone is one row, keyed on ``(team, repo_key,
event_id)`` where the event id derives from the event's content and provenance, so pushing the
same outbox row twice stores it once. ``seq`` is the pull cursor. Pushes to one space are
serialised by a transaction-scoped advisory lock taken before the rows take their ``seq``, so
``seq`` order is commit order within a space and a reader's cursor never passes a row that
commits later. Each push ends with ``NOTIFY`` on the space's channel, which wakes the other
members' pullers.

The schema is versioned (``lintaid_schema``); migrations run in order under an advisory lock
by whichever daemon connects first with the right to (the tables' owner, the team's
administrator). A daemon that finds a newer version than it knows writes nothing and reads
nothing (``SchemaTooNew``); one whose role may not bring an older schema forward says so
(``SchemaNeedsOwner``).

Members are authenticated by the server, not by a column: every member connects as a role of
its own (``add_member`` creates one and grants it into the database's members group), only
that group (and the tables' owner) may read or insert, and connect at all where the
administrator owns the database; row-level security lets a member read the team's rows and
insert only rows whose ``member`` is itself; no member may change or delete a row. What a
pulled row holds is still untrusted input (``lintaid.team.events`` checks it): ``pull`` hands
each row over undecoded, every text column cut to a bound and the body as text (none at all
when it is larger than ``MAX_BODY_BYTES``), so no row can stall or crash the reader.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import psycopg
from psycopg.types.json import Jsonb

SCHEMA_VERSION: Final = 3
CONNECT_TIMEOUT_S: Final = 5
MAX_BODY_BYTES: Final = 1024 * 1024
"""A pulled body larger than this (as JSON text) is not even fetched: a record's text may be
256 KiB locally (``ops.MAX_CONTENT_BYTES``), and JSON's escapes at most multiply that."""
MAX_FIELD_CHARS: Final = 4096
"""Every text column of a pulled row is fetched cut to one character more than this, so an
oversized one is seen as such without being transferred whole."""
MAX_ROLE_BYTES: Final = 63  # NAMEDATALEN - 1: a longer name is cut by the server


def members_group(dbname: str) -> str:
    """The group role of the members of the team tables in database ``dbname``: every
    member's role is granted into it, and it alone (with the tables' owner) may read and
    write them."""
    name = f"lintaid_members_{dbname}"
    if len(name.encode()) <= MAX_ROLE_BYTES:
        return name
    return "lintaid_members_" + hashlib.sha256(dbname.encode()).hexdigest()[:32]


def close_to_members(cur: psycopg.Cursor[Any]) -> bool:
    """Let only the members group (and the tables' owner) read and write the team's tables,
    creating the group if it is missing, and connect to the database when this role owns it;
    whether it does (False: CONNECT is left as the database's owner set it, and any role
    the server lets connect still reads and writes nothing). Idempotent; the connecting role
    owns the tables (else the server refuses) and has CREATEROLE when the group is new."""
    from psycopg import sql

    cur.execute("SELECT current_database(), pg_has_role(current_user, d.datdba, 'MEMBER')"
                " FROM pg_database d WHERE d.datname = current_database()")
    row = cur.fetchone()
    dbname, owns_database = (str(row[0]), bool(row[1])) if row else ("", False)
    group = sql.Identifier(members_group(dbname))
    cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (members_group(dbname),))
    if cur.fetchone() is None:
        cur.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(group))
    cur.execute("SELECT pg_has_role(current_user, relowner, 'MEMBER') FROM pg_class"
                " WHERE oid = 'lintaid_events'::regclass")
    row = cur.fetchone()
    if not row or not row[0]:  # a GRANT or REVOKE by another role is only a warning
        raise psycopg.errors.InsufficientPrivilege(
            "must be the owner of the table lintaid_events to say who may read and write it")
    cur.execute("REVOKE ALL ON lintaid_events, lintaid_schema FROM PUBLIC")
    cur.execute("REVOKE ALL ON SEQUENCE lintaid_events_seq_seq FROM PUBLIC")
    cur.execute(sql.SQL("GRANT SELECT, INSERT ON lintaid_events TO {}").format(group))
    cur.execute(sql.SQL("GRANT USAGE ON SEQUENCE lintaid_events_seq_seq TO {}").format(group))
    cur.execute(sql.SQL("GRANT SELECT ON lintaid_schema TO {}").format(group))
    if owns_database:
        database = sql.Identifier(dbname)
        cur.execute(sql.SQL("REVOKE CONNECT ON DATABASE {} FROM PUBLIC").format(database))
        cur.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(database, group))
    return owns_database


def _members_only(cur: psycopg.Cursor[Any]) -> None:
    """Schema 3: the tables closed to all but the members group (``close_to_members``), and
    the members schema 2 let in granted into it: the roles add-member gave CONNECT on the
    database, and those that wrote rows (their owner, superusers and the group aside)."""
    from psycopg import sql

    close_to_members(cur)
    cur.execute("SELECT current_database()")
    row = cur.fetchone()
    group = members_group(str(row[0]) if row else "")
    cur.execute(
        "SELECT r.rolname FROM pg_roles r WHERE NOT r.rolsuper AND r.rolname <> %(group)s"
        " AND NOT pg_has_role(r.oid, (SELECT relowner FROM pg_class"
        "  WHERE oid = 'lintaid_events'::regclass), 'MEMBER')"
        " AND NOT pg_has_role(r.oid, (SELECT datdba FROM pg_database"
        "  WHERE datname = current_database()), 'MEMBER')"
        " AND (r.oid IN (SELECT a.grantee FROM pg_database d, aclexplode(d.datacl) a"
        "  WHERE d.datname = current_database() AND a.privilege_type = 'CONNECT')"
        "  OR r.rolname IN (SELECT DISTINCT member FROM lintaid_events))"
        " ORDER BY r.rolname", {"group": group})
    for (name,) in cur.fetchall():
        cur.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group),
                                                     sql.Identifier(name)))


MIGRATIONS: Final[dict[int, str | Callable[[psycopg.Cursor[Any]], None]]] = {
    1: """
    CREATE TABLE IF NOT EXISTS lintaid_events (
        seq bigserial PRIMARY KEY,
        team text NOT NULL,
        repo_key text NOT NULL,
        event_id text NOT NULL,
        kind text NOT NULL,
        origin text NOT NULL,
        member text NOT NULL,
        machine text NOT NULL,
        stamp double precision NOT NULL,
        record_id text NOT NULL,
        other_id text,
        body jsonb NOT NULL,
        pushed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (team, repo_key, event_id)
    );
    CREATE INDEX IF NOT EXISTS lintaid_events_space ON lintaid_events (team, repo_key, seq);
    """,
    # Members are roles: each reads every row, inserts only rows naming itself, and changes
    # or deletes none (no UPDATE or DELETE policy, no such grant). FORCE: the owner too.
    2: """
    ALTER TABLE lintaid_events ENABLE ROW LEVEL SECURITY;
    ALTER TABLE lintaid_events FORCE ROW LEVEL SECURITY;
    DROP POLICY IF EXISTS lintaid_events_read ON lintaid_events;
    DROP POLICY IF EXISTS lintaid_events_insert ON lintaid_events;
    CREATE POLICY lintaid_events_read ON lintaid_events FOR SELECT USING (true);
    CREATE POLICY lintaid_events_insert ON lintaid_events FOR INSERT
        WITH CHECK (member = current_user);
    REVOKE ALL ON lintaid_events FROM PUBLIC;
    GRANT SELECT, INSERT ON lintaid_events TO PUBLIC;
    GRANT USAGE ON SEQUENCE lintaid_events_seq_seq TO PUBLIC;
    GRANT SELECT ON lintaid_schema TO PUBLIC;
    """,
    # Only the team's members read and write, not every role on the server: the grants of 2
    # move from PUBLIC to the database's members group, and so does CONNECT where this role
    # owns the database; the members 2 let in join the group.
    3: _members_only,
}
_LOCK_SCHEMA: Final = 0x6C696E74  # "lint": one advisory lock for schema migrations

Error = psycopg.Error
OperationalError = psycopg.OperationalError


class SchemaTooNew(Exception):
    """The server's schema is newer than this lintaid knows."""

    def __init__(self, found: int) -> None:
        super().__init__(
            f"the team server's schema is version {found}, newer than this lintaid knows "
            f"({SCHEMA_VERSION}): nothing is pushed or pulled until lintaid is upgraded "
            "(pip install -U 'lintaid[team]'); local memory works as before")
        self.found = found


class SchemaNeedsOwner(Exception):
    """The server's schema is older than this lintaid, and this role may not migrate it."""

    def __init__(self, found: int, detail: str) -> None:
        super().__init__(
            f"the team server's schema is version {found} and this lintaid needs "
            f"{SCHEMA_VERSION}, but this member's role may not change it ({detail}): the "
            "team's administrator brings it forward by running `lintaid team add-member` "
            "(or any lintaid command) once with the owner's address; local memory works as "
            "before")
        self.found = found


@dataclass(frozen=True)
class Event:
    """One shared change as the server keeps it."""

    event_id: str
    kind: str  # record | link | forget | expire | restore | reject
    record_id: str
    other_id: str | None
    stamp: float  # the writer's hybrid-logical-clock stamp
    body: dict[str, Any]
    origin: str = ""
    member: str = ""
    machine: str = ""
    seq: int = 0
    pushed_at: float = 0.0


@dataclass(frozen=True)
class Row:
    """One pulled row as the server gave it: nothing checked, the body still JSON text
    (``None`` when it was over ``MAX_BODY_BYTES``, ``body_bytes`` long), every text column
    at most ``MAX_FIELD_CHARS`` + 1 characters. ``lintaid.team.events.decode`` makes it an
    ``Event`` or says why not."""

    seq: int
    event_id: Any
    kind: Any
    origin: Any
    member: Any
    machine: Any
    stamp: Any
    record_id: Any
    other_id: Any
    body: str | None
    body_bytes: int
    pushed_at: float

    @classmethod
    def of(cls, ev: Event) -> Row:
        """The row the server would hand over for ``ev`` (tests and replays)."""
        body = json.dumps(ev.body)
        return cls(seq=ev.seq, event_id=ev.event_id, kind=ev.kind, origin=ev.origin,
                   member=ev.member, machine=ev.machine, stamp=ev.stamp,
                   record_id=ev.record_id, other_id=ev.other_id, body=body,
                   body_bytes=len(body.encode()), pushed_at=ev.pushed_at)


def event_id(kind: str, record_id: str, other: str | None, stamp: float, origin: str) -> str:
    """A record's event is the record's own id (the same record from two members is one
    event); a decision's derives from what it names, when and where it was made."""
    if kind == "record":
        return record_id
    basis = "\x1f".join((kind, record_id, other or "", repr(stamp), origin))
    return kind[0] + hashlib.sha256(basis.encode()).hexdigest()[:31]


def channel(team: str, repo_key: str) -> str:
    """The NOTIFY channel of a space: an identifier, whatever the names hold."""
    return "lintaid_" + hashlib.sha256(f"{team}\x1f{repo_key}".encode()).hexdigest()[:24]


def parse_dsn(dsn: str) -> dict[str, str]:
    """The connection parameters of a libpq address (URL or ``key=value`` form); ValueError
    for what is not one."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as err:
        raise ValueError(f"not a PostgreSQL address: {describe(err)} (expected "
                         "postgresql://USER@HOST[:PORT]/DATABASE)") from None
    return {k: str(v) for k, v in params.items() if v is not None}


def without_password(params: dict[str, str]) -> str:
    return address({k: v for k, v in params.items() if k != "password"})


def address(params: dict[str, str]) -> str:
    """A libpq connection string of ``params`` (``key=value`` form)."""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(**params)


def connect(conninfo: str, password: str | None,
            *, autocommit: bool = True) -> psycopg.Connection[Any]:
    extra: dict[str, Any] = {"password": password} if password else {}
    return psycopg.connect(conninfo, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S,
                           application_name="lintaid", **extra)


def describe(err: BaseException) -> str:
    """One line for a person: the server's message, never the connection string."""
    text = (str(err).strip().splitlines() or [type(err).__name__])[0]
    return text[:300]


class Server:
    """One member's view of one space on the server, over one connection (not shared
    between threads)."""

    def __init__(self, conn: psycopg.Connection[Any], team: str, repo_key: str,
                 origin: str) -> None:
        self.conn = conn
        self.team = team
        self.repo_key = repo_key
        self.origin = origin
        self._role: str | None = None

    @property
    def role(self) -> str:
        """The role this connection is, which the server writes as every pushed row's
        member (and refuses any other)."""
        if self._role is None:
            with self.conn.cursor() as cur:
                cur.execute("SELECT current_user")
                row = cur.fetchone()
            self._role = str(row[0]) if row else ""
        return self._role

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass

    # -- schema ----------------------------------------------------------------------------
    def schema_version(self) -> int:
        with self.conn.cursor() as cur:
            cur.execute("SELECT to_regclass('lintaid_schema') IS NOT NULL")
            row = cur.fetchone()
            if not row or not row[0]:
                return 0
            cur.execute("SELECT COALESCE(MAX(version), 0) FROM lintaid_schema")
            found = cur.fetchone()
            return int(found[0]) if found else 0

    def ensure_schema(self) -> int:
        """Bring the server's schema to ``SCHEMA_VERSION``; SchemaTooNew when it is newer."""
        found = self.schema_version()
        if found > SCHEMA_VERSION:
            raise SchemaTooNew(found)
        if found == SCHEMA_VERSION:
            return found
        try:
            return self._migrate()
        except psycopg.errors.InsufficientPrivilege as err:
            raise SchemaNeedsOwner(found, describe(err)) from None

    def _migrate(self) -> int:
        with self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_SCHEMA,))
            cur.execute("CREATE TABLE IF NOT EXISTS lintaid_schema (version integer PRIMARY KEY,"
                        " applied_at timestamptz NOT NULL DEFAULT now())")
            cur.execute("SELECT COALESCE(MAX(version), 0) FROM lintaid_schema")
            row = cur.fetchone()
            found = int(row[0]) if row else 0
            if found > SCHEMA_VERSION:
                raise SchemaTooNew(found)
            for version in range(found + 1, SCHEMA_VERSION + 1):
                step = MIGRATIONS[version]
                if isinstance(step, str):
                    cur.execute(step)
                else:
                    step(cur)
                cur.execute("INSERT INTO lintaid_schema(version) VALUES (%s)", (version,))
        return SCHEMA_VERSION

    # -- push ------------------------------------------------------------------------------
    def push(self, events: Sequence[Event], machine: str) -> int:
        """Store ``events`` as this role's (those the server holds already are skipped) and
        wake the space's listeners; return how many were new."""
        member = self.role
        if not events:
            return 0
        with self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                        (f"{self.team}\x1f{self.repo_key}",))
            cur.executemany(
                "INSERT INTO lintaid_events(team, repo_key, event_id, kind, origin, member,"
                " machine, stamp, record_id, other_id, body) VALUES"
                " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (team, repo_key, event_id) DO NOTHING",
                [(self.team, self.repo_key, e.event_id, e.kind, self.origin, member, machine,
                  e.stamp, e.record_id, e.other_id, Jsonb(e.body)) for e in events])
            added = max(cur.rowcount, 0)
            if added:
                cur.execute("SELECT pg_notify(%s, '')", (channel(self.team, self.repo_key),))
        return added

    # -- pull ------------------------------------------------------------------------------
    def pull(self, after: int, limit: int) -> tuple[list[Row], int, int]:
        """Other members' rows after cursor ``after``, oldest first, undecoded (``Row``); the
        cursor to keep (past this store's own rows too); how many rows were read."""
        cut = MAX_FIELD_CHARS + 1
        with self.conn.cursor() as cur:
            cur.execute(
                "SELECT seq, left(event_id, %(cut)s), left(kind, %(cut)s), left(origin, %(cut)s),"
                " left(member, %(cut)s), left(machine, %(cut)s), stamp, left(record_id, %(cut)s),"
                " left(other_id, %(cut)s), CASE WHEN octet_length(body::text) <= %(body)s"
                " THEN body::text END, octet_length(body::text),"
                " EXTRACT(EPOCH FROM pushed_at)::float8 FROM lintaid_events"
                " WHERE team = %(team)s AND repo_key = %(repo)s AND seq > %(after)s"
                " ORDER BY seq LIMIT %(limit)s",
                {"cut": cut, "body": MAX_BODY_BYTES, "team": self.team, "repo": self.repo_key,
                 "after": after, "limit": limit})
            fetched = cur.fetchall()
        cursor = fetched[-1][0] if fetched else after
        rows = [Row(seq=int(r[0]), event_id=r[1], kind=r[2], origin=r[3], member=r[4],
                    machine=r[5], stamp=r[6], record_id=r[7], other_id=r[8], body=r[9],
                    body_bytes=int(r[10] or 0), pushed_at=float(r[11] or 0.0))
                for r in fetched if not (r[3] == self.origin and r[4] == self.role)]
        return rows, int(cursor), len(fetched)

    def behind(self, after: int) -> tuple[int, float]:
        """Other members' events after ``after``: how many, and how long the oldest has
        waited (seconds, by the server's clock)."""
        with self.conn.cursor() as cur:
            cur.execute(
                "SELECT COUNT(*), COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - MIN(pushed_at)),"
                " 0)::float8 FROM lintaid_events WHERE team = %s AND repo_key = %s AND seq > %s"
                " AND NOT (origin = %s AND member = %s)",
                (self.team, self.repo_key, after, self.origin, self.role))
            row = cur.fetchone()
        return (int(row[0]), float(row[1])) if row else (0, 0.0)

    # -- members ---------------------------------------------------------------------------
    def add_member(self, name: str) -> tuple[str, bool, bool]:
        """Create the login role ``name`` with a new random password and grant it into the
        members group, which alone may read and write the team's tables (the schema brought
        forward first and the tables closed to all others again, so it can read and write at
        once and nobody else can); return the password, False when the role existed already
        (its password is then set anew), and whether the database too is closed to all but
        the members (False: this role does not own it, so who may connect is its owner's
        say). The connecting role needs CREATEROLE and owns the tables (the team's
        administrator)."""
        import secrets

        from psycopg import sql

        self.ensure_schema()
        password = secrets.token_urlsafe(24)
        with self.conn.transaction(), self.conn.cursor() as cur:
            database_closed = close_to_members(cur)
            group = members_group(self.conn.info.dbname)
            if name == group:
                raise psycopg.errors.InvalidParameterValue(
                    f"{name!r} is the members group's own name, not a member's")
            cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,))
            existed = cur.fetchone() is not None
            verb = "ALTER" if existed else "CREATE"
            cur.execute(sql.SQL(verb + " ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(name), sql.Literal(password)))
            cur.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group),
                                                         sql.Identifier(name)))
        return password, not existed, database_closed


class Listener:
    """LISTEN on a space's channel, over a connection of its own."""

    def __init__(self, conn: psycopg.Connection[Any], team: str, repo_key: str) -> None:
        self.conn = conn
        conn.execute(f"LISTEN {channel(team, repo_key)}")

    def wait(self, timeout: float) -> bool:
        """Whether a notification arrived within ``timeout`` seconds."""
        return any(True for _ in self.conn.notifies(timeout=timeout, stop_after=1))

    def interrupt(self) -> None:
        """End a ``wait`` in progress on another thread now: its socket is shut down, so the
        wait wakes (and fails) at once instead of at its timeout. Any thread may call it."""
        try:
            fd = self.conn.pgconn.socket
            with socket.socket(fileno=os.dup(fd)) as sock:  # the dup alone is closed after
                sock.shutdown(socket.SHUT_RDWR)
        except Exception:
            pass

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass
