"""A hostile teammate: a third member, Mallory, writes raw rows into the team's table with her
own role (what anyone holding a member's credentials can do), against two daemons on two
clones of one repository and a real PostgreSQL server.

Every row a local write could not have been is refused alone into the quarantine, the cursor
moves past it, and the daemons go on answering; the server refuses a row that claims another
member, and every change or deletion of a row; a decision naming a record that was never
shared changes nothing. A login role on the server that is no member cannot connect to the
team's database, nor read or write its tables where it is let in, before or after an upgrade
from schema 2.
"""

# ruff: noqa: F811  (the fixtures of test_team.py are imported, then named as parameters)
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from lintaid.team import pg as team_pg
from tests import pgserver
from tests.conftest import Served, wait_for
from tests.redaction_corpus import AWS_SECRET, GHP
from tests.test_secrets_at_rest import assert_nothing_secret, secret_piece
from tests.test_team import (  # noqa: F401  (fixtures)
    WAIT,
    add,
    add_member,
    clones,
    delivered,
    doctor,
    holds,
    pair,
    pg,
    team_db,
    team_status,
)
from tests.test_viewer import open_viewer


@pytest.fixture
def mallory(pair: tuple[Served, Served], pg: pgserver.PgServer,
            team_db: str) -> Iterator[Any]:
    """Mallory's own connection, as her role: she needs no lintaid to write rows."""
    import psycopg

    alice, _bob = pair
    conn = psycopg.connect(add_member(alice, pg, team_db, "mallory"), autocommit=True)
    try:
        yield conn
    finally:
        conn.close()


def write(conn: Any, space: tuple[str, str], *, kind: str = "record", member: str = "mallory",
          event_id: str | None = None, record_id: str = "mmallory1",
          other_id: str | None = None, stamp: str | None = None, body: str = "{}",
          machine: str = "m-box") -> None:
    """One raw row, as Mallory writes it: every column as text, cast by the server."""
    n = next(_ids)
    stamp = stamp or repr(time.time())
    conn.execute(
        "INSERT INTO lintaid_events(team, repo_key, event_id, kind, origin, member, machine,"
        " stamp, record_id, other_id, body) VALUES (%s, %s, %s, %s, 'o-mallory', %s, %s,"
        " %s::float8, %s, %s, %s::jsonb)",
        (space[0], space[1], event_id or f"evil-{n}", kind, member, machine, stamp,
         record_id, other_id, body))
    conn.execute("SELECT pg_notify(%s, '')", (team_pg.channel(*space),))


def _counter() -> Iterator[int]:
    n = 0
    while True:
        n += 1
        yield n


_ids = _counter()


def record(content: Any = "A note from Mallory.", **fields: Any) -> str:
    return json.dumps({"content": content, "kind": "note", **fields})


def nested(depth: int, opener: str = "[", closer: str = "]") -> str:
    return '{"content": "deep", "kind": "note", "paths": ' + opener * depth + closer * depth + "}"


def hostile_rows(shared: str, bob_private: str, alice_private: str) -> list[dict[str, Any]]:
    """Rows no local write could have made; each must be refused alone."""
    big = "x" * (300 * 1024)
    rows: list[dict[str, Any]] = [
        # times: the local API takes only finite times within 1970-9999
        *({"stamp": s, "body": record(f"Stamped {s}.")} for s in
          ("-1e300", "1e300", "NaN", "Infinity", "-Infinity", "-1", "253402300800",
           "9.3e18")),
        {"stamp": repr(time.time() + 3 * 86400),
         "body": record("More than a day ahead of every clock.")},
        # bodies that are not a map, or nest without end
        *({"body": b} for b in ("[1, 2, 3]", '"a string"', "42", "null", "true",
                                '[{"content": "x"}]')),
        {"body": nested(5000)},
        {"body": nested(5000, '{"a": ', "}").replace('"a": }', '"a": 1}')},
        {"body": nested(40)},
        # the text: too large, missing, not text, blank
        {"body": json.dumps({"content": "y" * (8 * 1024 * 1024), "kind": "note"})},
        {"body": record(big)},
        {"body": json.dumps({"kind": "note"})},
        *({"body": record(c)} for c in (7, ["a", "b"], {"a": 1}, None, "", "   ", True)),
        # kinds: of the record and of the event
        *({"body": json.dumps({"content": "Kind test.", "kind": k})} for k in
          ("prompt", "file", 7, None, "x" * 5000)),
        {"kind": "bogus"}, {"kind": ""}, {"kind": "r" * 5000},
        # columns beyond any local limit
        {"event_id": "e" * 5000}, {"record_id": "m" * 5000}, {"record_id": ""},
        {"machine": "m" * 5000},
        # record fields of the wrong shape
        {"body": record(paths="not-a-list")}, {"body": record(paths=[1, 2])},
        {"body": record(paths=["p"] * 2000)}, {"body": record(paths=["p" * 10000])},
        {"body": record(tools={"a": 1})}, {"body": record(file_hashes=["x"])},
        {"body": record(file_hashes={"a.py": 5})}, {"body": record(branch=["main"])},
        {"body": record(valid_at="yesterday")}, {"body": record(valid_at="NaN")},
        {"body": record(expires_at=1e300)}, {"body": record(valid_at=-5)},
        {"body": record(session_id="s" * 5000)},
        # decisions with broken bodies
        {"kind": "expire", "record_id": shared, "body": json.dumps({"at": "soon"})},
        {"kind": "expire", "record_id": shared, "body": json.dumps({"at": 1e300})},
        {"kind": "expire", "record_id": shared, "body": "{}"},
        {"kind": "forget", "record_id": shared, "body": json.dumps({"reason": ["x"]})},
        {"kind": "forget", "record_id": shared, "body": json.dumps({"reason": "r" * 5000})},
        {"kind": "restore", "record_id": shared, "body": json.dumps({"reason": 7})},
        {"kind": "link", "record_id": shared, "body": "{}"},  # no newer record
        {"kind": "link", "record_id": shared, "other_id": shared},  # itself
        {"kind": "reject", "record_id": shared, "other_id": "mx",
         "body": json.dumps({"confidence": 5})},
        # what was never shared cannot be named from outside
        {"kind": "forget", "record_id": bob_private, "body": json.dumps({"reason": "gone"})},
        {"kind": "forget", "record_id": alice_private},
        {"kind": "expire", "record_id": bob_private, "body": json.dumps({"at": 1.0})},
        {"kind": "link", "record_id": bob_private, "other_id": shared},
        {"kind": "link", "record_id": shared, "other_id": alice_private},
    ]
    return rows


def test_no_hostile_row_crashes_or_stalls_a_member(
        pair: tuple[Served, Served], mallory: Any, pg: pgserver.PgServer,
        team_db: str) -> None:
    alice, bob = pair
    shared = add(alice, "The job queue uses RabbitMQ.")
    wait_for(lambda: holds(bob, shared), WAIT)
    bob_private = add(bob, "Bob's staging box is db-staging-9.", private=True)
    alice_private = add(alice, "Alice keeps the release notes in her drafts.", private=True)
    status = team_status(alice)
    space = (status["team"], status["repo_key"])

    # The server itself: no row may claim another member, and none may be changed or deleted.
    import psycopg

    for forged in ("alice", "bob", "lintaid"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            write(mallory, space, member=forged, body=record(f"I am {forged}."))
    for sql in ("UPDATE lintaid_events SET member = 'mallory'", "DELETE FROM lintaid_events",
                "TRUNCATE lintaid_events"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            mallory.execute(sql)

    rows = hostile_rows(shared, bob_private, alice_private)
    assert len(rows) >= 50
    for row in rows:
        write(mallory, space, **row)
    # One well-formed row after all of them: it must arrive, so no pull stalled before it.
    write(mallory, space, event_id="mgood", record_id="mgood",
          body=record("The cache is Memcached, says Mallory.", branch="main"))
    last = pg_last_seq(pg, team_db)

    # A decision naming the other member's private record names nothing this store holds:
    # skipped there, as any event about a record not here; refused where the record is kept.
    elsewhere = {id(alice): [bob_private], id(bob): [alice_private]}
    for side in (alice, bob):
        not_here = sum(1 for row in rows if elsewhere[id(side)][0] in
                       (row.get("record_id"), row.get("other_id")))
        hit = wait_for(lambda s=side: holds(s, "mgood"), WAIT)
        assert hit["member"] == "mallory"  # the server's word for who wrote it
        wait_for(lambda s=side: team_status(s)["pull"]["cursor"] >= last, WAIT)
        # "behind" is measured after the pull that moved the cursor, a moment later.
        wait_for(lambda s=side: team_status(s)["pull"]["behind"] == 0, WAIT)
        quarantine = team_status(side)["quarantine"]
        assert quarantine["count"] == len(rows) - not_here >= 50
        assert all(q["member"] == "mallory" and q["reason"] for q in quarantine["newest"])
        # Still answering, and every search that could meet a hostile row is whole.
        assert side.call("ping")["pong"] is True
        for query in ("Stamped", "note Mallory", "deep", "Kind test", "RabbitMQ", "Memcached"):
            side.call("search", {"query": query})
        assert side.json("search", "Memcached")["results"][0]["id"] == "mgood"
        text = side.cli("team", "status").stdout
        assert f"quarantine  {quarantine['count']} pulled event(s)" in text
        assert "mallory" in text
        check = next(c for c in doctor(side)["checks"] if c["name"] == "team")
        assert check["warn"] and "quarantined" in check["detail"]
        page = open_viewer(side).get("/status")
        assert page.status == 200 and 'id="quarantine"' in page.body
        assert f"{quarantine['count']} pulled events refused" in page.body
    # What was never shared is untouched; the shared record was neither linked nor expired.
    assert holds(bob, bob_private)["status"] == "current"
    assert holds(alice, alice_private)["status"] == "current"
    assert holds(bob, shared)["status"] == "current"
    assert holds(bob, shared).get("expires_at") is None
    # Nothing out of range was stored: every created_at a member holds is a plain time.
    for side in (alice, bob):
        for hit in side.call("list", {"limit": 100})["results"]:
            assert 1.5e9 < hit["created_at"] < 2.6e9


def pg_last_seq(pg: pgserver.PgServer, db: str) -> int:
    with pg.admin(db) as conn:
        return int(conn.execute("SELECT max(seq) FROM lintaid_events").fetchone()[0])


def test_a_teammates_decisions_reach_shared_records_only_and_never_close_a_cycle(
        pair: tuple[Served, Served], mallory: Any) -> None:
    """Mallory, a member in good standing, may forget and supersede what the team shares (the
    team's own semantics); she cannot name a private record, nor make two records supersede
    each other, and a reason she sends is redacted like a local one."""
    alice, bob = pair
    older = add(alice, "The gateway uses httpx.")
    newer = add(alice, "The gateway uses requests instead of httpx.")
    wait_for(lambda: holds(bob, newer), WAIT)
    status = team_status(bob)
    space = (status["team"], status["repo_key"])
    # A link back over the explicit order closes a cycle: refused.
    alice.call("supersede", {"old_id": older, "new_id": newer})
    # the explicit order is on the server before Mallory's link (bob's view alone could come
    # from the inferred relation, and her link would then reach him first)
    wait_for(lambda: delivered(alice), WAIT)
    wait_for(lambda: holds(bob, older)["status"] == "superseded", WAIT)
    write(mallory, space, kind="link", record_id=newer, other_id=older)
    write(mallory, space, kind="forget", record_id=older,
          body=json.dumps({"reason": f"old; token {GHP}"}))
    wait_for(lambda: holds(bob, older) is None, WAIT)
    assert holds(bob, newer)["status"] == "current"  # no cycle was held
    assert team_status(bob)["quarantine"]["count"] == 1
    (refused,) = team_status(bob)["quarantine"]["newest"]
    assert "supersedes" in refused["reason"]
    trail = [e for e in bob.call("history", {"id": older})["results"]
             if e["actor"] == "team:mallory"]
    assert trail and GHP not in json.dumps(trail)


def test_a_refused_rows_excerpt_keeps_no_piece_of_a_secret_at_its_cut(
        pair: tuple[Served, Served], mallory: Any) -> None:
    """A refused row is kept in the quarantine as an excerpt of its body, shown by team
    status and the viewer: a secret that the excerpt's end cuts in two is redacted whole
    first, so not even its start is kept (cut first, the redactor no longer knew it)."""
    alice, bob = pair
    add(alice, "The job queue uses RabbitMQ.")
    status = team_status(bob)
    space = (status["team"], status["repo_key"])
    lines = [f"token {GHP}", f"The AWS secret access key is {AWS_SECRET}, keep it out."]
    for pad in range(250, 300, 3):  # the secrets' every position across the excerpt's end
        for line in lines:
            write(mallory, space, body=json.dumps([{"content": "." * pad + " " + line}]))
    rows = 2 * len(range(250, 300, 3))
    wait_for(lambda: team_status(bob)["quarantine"]["count"] == rows, WAIT)
    newest = bob.call("team_status")["quarantine"]
    assert newest["newest"] and all("body=" in q["excerpt"] for q in newest["newest"])
    assert secret_piece(json.dumps(newest).encode()) is None
    page = open_viewer(bob).get("/status")
    assert page.status == 200 and secret_piece(page.body.encode()) is None
    assert_nothing_secret(bob.root)


# -- outsiders: roles on the server that are not the team's ----------------------------------
def login_role(pg: pgserver.PgServer, name: str, *, connect_to: str | None = None) -> str:
    """A login role on the server that no one made a member (its password); ``connect_to``
    also grants it CONNECT on that database, as a database's owner may have."""
    password = "outsider-" + name
    with pg.admin() as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}'")
        if connect_to:
            conn.execute(f"GRANT CONNECT ON DATABASE {connect_to} TO {name}")
    return password


def as_role(pg: pgserver.PgServer, db: str, name: str, password: str) -> Any:
    import psycopg

    return psycopg.connect(host="127.0.0.1", port=pg.port, user=name, password=password,
                           dbname=db, autocommit=True)


def assert_reads_and_writes(conn: Any, member: str, space: tuple[str, str]) -> None:
    before = conn.execute("SELECT count(*) FROM lintaid_events").fetchone()[0]
    write(conn, space, member=member, machine=f"{member}-box")
    assert conn.execute("SELECT count(*) FROM lintaid_events").fetchone()[0] == before + 1


def assert_neither_reads_nor_writes(conn: Any, member: str, space: tuple[str, str]) -> None:
    import psycopg

    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("SELECT count(*) FROM lintaid_events")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        write(conn, space, member=member)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("SELECT max(version) FROM lintaid_schema")


def test_a_role_that_is_not_a_member_cannot_connect_read_or_write(
        pair: tuple[Served, Served], mallory: Any, pg: pgserver.PgServer,
        team_db: str) -> None:
    """Any login role on the server is not a member: where the administrator owns the
    database it cannot even connect, and let in by the database's owner it still reads no
    row and inserts none under its own name; a member still does both."""
    import psycopg

    alice, _bob = pair
    add(alice, "The billing service retries three times.")
    wait_for(lambda: delivered(alice), WAIT)
    status = team_status(alice)
    space = (status["team"], status["repo_key"])
    eve, trudy = f"eve_{team_db}", f"trudy_{team_db}"
    with pytest.raises(psycopg.OperationalError, match="permission denied for database"):
        as_role(pg, team_db, eve, login_role(pg, eve)).close()
    with as_role(pg, team_db, trudy, login_role(pg, trudy, connect_to=team_db)) as conn:
        assert_neither_reads_nor_writes(conn, trudy, space)
    assert_reads_and_writes(mallory, "mallory", space)
    assert [r[0] for r in server_rows_of(pg, team_db)].count("mallory") == 1
    assert trudy not in [r[0] for r in server_rows_of(pg, team_db)]


def server_rows_of(pg: pgserver.PgServer, db: str) -> list[tuple[Any, ...]]:
    with pg.admin(db) as conn:
        return list(conn.execute("SELECT member FROM lintaid_events ORDER BY seq").fetchall())


def schema_2_team(pg: pgserver.PgServer, db: str, members: list[str]) -> dict[str, str]:
    """A team set up by a lintaid of schema 2: its tables granted to PUBLIC, each member a
    role with CONNECT on the database (as add-member made them then); their passwords."""
    with team_pg.connect(pg.dsn(db), None) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE lintaid_schema (version integer PRIMARY KEY,"
                    " applied_at timestamptz NOT NULL DEFAULT now())")
        for version in (1, 2):
            step = team_pg.MIGRATIONS[version]
            assert isinstance(step, str)
            cur.execute(step)
            cur.execute("INSERT INTO lintaid_schema(version) VALUES (%s)", (version,))
        passwords = {}
        for name in members:
            passwords[name] = "old-" + name
            cur.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{passwords[name]}'")
            cur.execute(f"GRANT CONNECT ON DATABASE {db} TO {name}")
    return passwords


def test_a_team_of_schema_2_is_closed_to_outsiders_when_its_administrator_adds_a_member(
        pg: pgserver.PgServer, team_db: str) -> None:
    """Before, every role on the server read and wrote a team's rows; the administrator's
    next add-member brings the schema to 3: the members of before (one has written, one
    not yet) still read and write, the new one too, and an outsider cannot connect."""
    import psycopg

    carol, dave, erin, eve = (f"{n}_{team_db}" for n in ("carol", "dave", "erin", "eve"))
    space = ("default", "k-upgrade")
    old = schema_2_team(pg, team_db, [carol, dave])
    eve_password = login_role(pg, eve)
    with as_role(pg, team_db, carol, old[carol]) as conn:
        write(conn, space, member=carol)
    with as_role(pg, team_db, eve, eve_password) as conn:  # what was open before
        assert conn.execute("SELECT count(*) FROM lintaid_events").fetchone()[0] == 1

    server = team_pg.Server(team_pg.connect(pg.dsn(team_db), None), "", "", "")
    try:
        _first, created, database_closed = server.add_member(erin)
        assert created and database_closed and server.schema_version() == 3
        password, created, database_closed = server.add_member(erin)  # a new password only
        assert not created and database_closed
    finally:
        server.close()
    for name, secret in ((carol, old[carol]), (dave, old[dave]), (erin, password)):
        with as_role(pg, team_db, name, secret) as conn:
            assert_reads_and_writes(conn, name, space)
    with pytest.raises(psycopg.OperationalError, match="permission denied for database"):
        as_role(pg, team_db, eve, eve_password).close()


def test_where_the_administrator_does_not_own_the_database_its_tables_are_closed_still(
        pg: pgserver.PgServer, team_db: str) -> None:
    """A database the administrator's role does not own: who connects is its owner's say
    (add-member says so), but a role that is not a member reads and writes nothing."""
    db = f"{team_db}_theirs"
    with pg.admin() as conn:
        conn.execute(f"CREATE DATABASE {db}")  # the superuser's
    with pg.admin(db) as conn:
        conn.execute(f"GRANT CREATE ON SCHEMA public TO {pgserver.ROLE}")
    frank, eve = f"frank_{team_db}", f"eve_{team_db}"
    space = ("default", "k-theirs")
    server = team_pg.Server(team_pg.connect(pg.dsn(db), None), "", "", "")
    try:
        password, created, database_closed = server.add_member(frank)
        assert created and not database_closed
    finally:
        server.close()
    with as_role(pg, db, frank, password) as conn:
        assert_reads_and_writes(conn, frank, space)
    with as_role(pg, db, eve, login_role(pg, eve)) as conn:  # CONNECT is PUBLIC's here
        assert_neither_reads_nor_writes(conn, eve, space)
