"""The team tier against a real PostgreSQL server: two daemons on two clones of one
repository (in this process, each on its own socket, SQLite and Tantivy), and a third
repository that must see nothing.

The server is a throwaway cluster (``tests/pgserver.py``); every test gets a database of its
own. Tests wait on conditions (``wait_for``), never on the clock.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lintaid_client import paths, protocol
from tests import pgserver
from tests.conftest import Served, wait_for
from tests.redaction_corpus import GHP
from tests.test_trust_review import rebuild

WAIT = 30.0  # a generous bound on each condition


@pytest.fixture(scope="session")
def pg() -> Iterator[pgserver.PgServer]:
    server = pgserver.start_server()
    if isinstance(server, str):
        pytest.skip(f"team tier tests need PostgreSQL: {server}")
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def team_db(pg: pgserver.PgServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """A fresh database; the daemons' environment: a pgpass file of the test's own, no
    keyring, short retry and poll intervals (bounds, not timings asserted)."""
    pg.start()  # a test that stopped it and failed left it down
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "pgpass"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    monkeypatch.setenv("LINTAID_TEAM_RETRY_MAX_S", "0.5")
    monkeypatch.setenv("LINTAID_TEAM_POLL_S", "5")
    for name in ("PGPASSWORD", "LINTAID_TEAM_PASSWORD", "PGUSER", "PGHOST", "PGPORT"):
        monkeypatch.delenv(name, raising=False)
    return pg.create_database()


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=T", *args],
                         cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def repository(path: Path, message: str = "first") -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text(f"# {message}\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", message)
    paths.ensure_state_dir(path)
    return path


def clone(source: Path, path: Path) -> Path:
    git(source.parent, "clone", "-q", str(source), str(path))
    paths.ensure_state_dir(path)
    return path


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path]:
    origin = repository(tmp_path / "origin")
    return clone(origin, tmp_path / "alice"), clone(origin, tmp_path / "bob")


def add_member(served: Served, pg: pgserver.PgServer, db: str, member: str) -> str:
    """The administrator makes ``member``'s role; the address it joins with."""
    invite = served.cli("team", "add-member", member, "--dsn", pg.dsn(db), "--json")
    assert invite.exit_code == 0, invite.stdout + invite.stderr
    dsn: str = invite.json()["dsn"]
    return dsn


def join(served: Served, pg: pgserver.PgServer, db: str, member: str,
         *extra: str) -> dict[str, Any]:
    """``member`` joins as the role of its own the administrator made for it."""
    dsn = add_member(served, pg, db, member)
    result = served.cli("team", "join", dsn, "--member", member, "--json", *extra)
    assert result.exit_code == 0, result.stdout + result.stderr
    data: dict[str, Any] = result.json()
    assert data["member"] == member
    data["invite"] = dsn
    return data


def team_status(served: Served) -> dict[str, Any]:
    data: dict[str, Any] = served.call("team_status")
    return data


def holds(served: Served, record_id: str) -> dict[str, Any] | None:
    try:
        hit: dict[str, Any] = served.call("get", {"id": record_id})
    except protocol.NotFound:
        return None
    return hit


def add(served: Served, text: str, **args: Any) -> str:
    rid: str = served.call("add", {"content": text, **args})["id"]
    return rid


def delivered(served: Served) -> bool:
    status = team_status(served)
    return status["state"] == "online" and status["push"]["pending"] == 0


def doctor(served: Served) -> dict[str, Any]:
    """``lintaid doctor --json`` (it exits 1 when something is broken)."""
    import json

    data: dict[str, Any] = json.loads(served.cli("doctor", "--json").stdout)
    return data


def server_rows(pg: pgserver.PgServer, db: str, sql: str = "SELECT kind, record_id, member,"
                " body FROM lintaid_events ORDER BY seq") -> list[tuple[Any, ...]]:
    with pg.admin(db) as conn:
        return list(conn.execute(sql).fetchall())


@pytest.fixture
def pair(clones: tuple[Path, Path], serve: Callable[..., Served], pg: pgserver.PgServer,
         team_db: str) -> tuple[Served, Served]:
    """Alice's and Bob's daemons on two clones of one repository, both in one team."""
    alice, bob = serve(clones[0]), serve(clones[1])
    join(alice, pg, team_db, "alice")
    join(bob, pg, team_db, "bob")
    return alice, bob


# -- propagation ---------------------------------------------------------------------------------
def test_a_note_propagates_both_ways_with_its_provenance(pair: tuple[Served, Served]) -> None:
    alice, bob = pair
    first = add(alice, "We moved the job queue to RabbitMQ.")
    hit = wait_for(lambda: holds(bob, first), WAIT)
    assert hit["content"] == "We moved the job queue to RabbitMQ."
    assert hit["member"] == "alice" and hit["machine"]
    assert hit["branch"] == "main" and hit["revision"]
    second = add(bob, "The deploy job runs on Fridays only.")
    assert wait_for(lambda: holds(alice, second), WAIT)["member"] == "bob"
    # Each side's own record stays its own (no member), and nothing came back twice.
    assert holds(alice, first)["member"] is None
    assert alice.record_count() == bob.record_count() == 2
    found = bob.json("search", "RabbitMQ")["results"]
    assert [h["id"] for h in found][:1] == [first]


def test_prompts_private_records_and_other_users_rows_never_leave(
        pair: tuple[Served, Served], pg: pgserver.PgServer, team_db: str) -> None:
    alice, bob = pair
    session = {"session_id": "s-alice", "transcript_path": "/nonexistent"}
    alice.hook("UserPromptSubmit", {**session, "prompt": "please rename the queue module"})
    secret_note = add(alice, "The staging database is on host db-staging-7.", private=True)
    api_row = add(alice, "Carol prefers tabs over spaces.", user_id="carol")
    private = alice.cli("add", "The release checklist lives in my notebook.", "--private",
                        "--json").json()["id"]
    alice.cli("team", "private", "cursor")
    shared = add(alice, "The job queue uses RabbitMQ.")
    wait_for(lambda: holds(bob, shared), WAIT)
    wait_for(lambda: delivered(alice), WAIT)
    rows = server_rows(pg, team_db)
    sent = {r[1] for r in rows}
    assert shared in sent
    assert not sent & {secret_note, api_row, private}
    assert all(r[3].get("kind") != "prompt" for r in rows)
    assert "rename the queue module" not in repr(rows)
    for rid in (secret_note, private):
        assert holds(bob, rid) is None
    assert team_status(alice)["private_clients"] == ["cursor"]


def test_forget_and_supersede_cross_members(pair: tuple[Served, Served]) -> None:
    alice, bob = pair
    old = add(alice, "The gateway uses httpx.")
    wait_for(lambda: holds(bob, old), WAIT)
    # Bob supersedes Alice's record with text of his own: both sides retire it.
    new = bob.call("supersede", {"old_id": old, "content": "The gateway uses aiohttp."})["new_id"]
    assert wait_for(lambda: (holds(alice, old) or {}).get("status") == "superseded", WAIT)
    assert holds(alice, new)["status"] == "current"
    assert holds(alice, old)["superseded_by"] == new
    history = alice.call("history", {"id": old})["results"]
    assert any(ev["actor"] == "team:bob" for ev in history)
    # Alice forgets Bob's record: gone on both sides, and the older one is believed again.
    alice.call("forget", {"id": new, "reason": "we never switched"})
    wait_for(lambda: holds(bob, new) is None, WAIT)
    assert wait_for(lambda: (holds(bob, old) or {}).get("status") == "current", WAIT)
    # Forgotten stays forgotten: the same text stated again is not stored again.
    assert bob.call("add", {"content": "The gateway uses aiohttp."})["event"] == "FORGOTTEN"


def test_two_peoples_statements_conflict_unless_one_corrects_the_other(
        pair: tuple[Served, Served]) -> None:
    alice, bob = pair
    first = add(alice, "The job queue uses RabbitMQ.")
    wait_for(lambda: holds(bob, first), WAIT)
    second = add(bob, "The job queue uses Kafka.")  # newer, no correction: a disagreement
    for side in (alice, bob):
        wait_for(lambda s=side: holds(s, second), WAIT)
        assert wait_for(lambda s=side: holds(s, first)["status"] == "conflicted", WAIT)
        assert holds(side, second)["status"] == "conflicted"
    # A correction cue settles it, for both, by the same policy as a local one.
    third = add(bob, "The job queue uses Kafka now instead of RabbitMQ.")
    for side in (alice, bob):
        wait_for(lambda s=side: holds(s, third), WAIT)
        assert wait_for(lambda s=side: holds(s, first)["status"] == "superseded", WAIT)
    # One person's newer statement of one named setting retires their own older one without
    # a cue (a newer same-kind source), on both sides alike (two people's statements leave
    # both conflicted, above).
    mine = add(alice, "Gateway timeout retry attempts: 2.")
    later = add(alice, "Gateway timeout retry attempts: 3.")
    assert holds(alice, mine)["status"] == "superseded"
    assert holds(alice, later)["status"] == "current"
    wait_for(lambda: holds(bob, later), WAIT)
    for side in (alice, bob):
        assert wait_for(lambda s=side: holds(s, mine)["status"] == "superseded", WAIT)
        assert holds(side, later)["status"] == "current"
        pairs = [(i["newer"]["record_id"], i["older"]["record_id"], i["kind"])
                 for i in side.json("review")["results"]]
        assert (later, mine, "supersedes") not in pairs  # settled: nothing waits for a person


def review_ids(served: Served) -> list[str]:
    return [item["id"] for item in served.json("review")["results"]]


def test_review_decisions_and_restores_reach_the_other_member(
        pair: tuple[Served, Served]) -> None:
    """One two-member setup, four steps: a conflict reaches both; Alice rejects it and Bob
    holds the rejection (through a restart and a full rebuild); Alice accepts another and Bob
    hides the older record; Alice forgets then restores a record and Bob shows it again."""
    alice, bob = pair
    dan = add(alice, "Dan owns the payments service.")
    wait_for(lambda: holds(bob, dan), WAIT)
    eve = add(bob, "Eve owns the payments service.")
    wait_for(lambda: holds(alice, eve), WAIT)
    # The conflict waits on both sides, under one id: it names the same pair everywhere.
    (item,) = wait_for(lambda: review_ids(alice), WAIT)
    assert wait_for(lambda: review_ids(bob), WAIT) == [item]

    out = alice.cli("review", "reject", item, "--reason", "both own it; token " + GHP)
    assert out.exit_code == 0, out.stderr
    wait_for(lambda: review_ids(bob) == [], WAIT)
    for rid in (dan, eve):
        assert holds(bob, rid)["status"] == "current"
    trail = [e for e in bob.json("audit")["results"] if e["event"] == "REJECT"]
    assert {e["memory_id"] for e in trail} == {dan, eve}
    assert all(e["actor"] == "team:alice" and GHP not in e["detail"]["reason"]
               for e in trail)
    rebuild(bob)  # stopped, every derived table derived again, started
    assert review_ids(bob) == []
    assert [holds(bob, rid)["status"] for rid in (dan, eve)] == ["current", "current"]

    # An acceptance travels as the link it makes: Bob hides the older record too.
    carol = add(alice, "Carol owns the billing service.")
    wait_for(lambda: holds(bob, carol), WAIT)
    frank = add(bob, "Frank owns the billing service.")
    wait_for(lambda: holds(alice, frank), WAIT)
    (billing,) = wait_for(lambda: review_ids(alice), WAIT)
    assert alice.json("review", "accept", billing)["older_id"] == carol
    assert wait_for(lambda: holds(bob, carol)["status"] == "superseded", WAIT)
    assert holds(bob, carol)["superseded_by"] == frank
    assert holds(bob, frank)["status"] == "current" and review_ids(bob) == []

    # A forget and the restore that lifts it.
    alice.call("forget", {"id": dan})
    wait_for(lambda: holds(bob, dan) is None, WAIT)
    alice.call("restore", {"id": dan, "reason": "it was right"})
    assert wait_for(lambda: holds(bob, dan), WAIT)["status"] == "current"
    events = [(e["event"], e["actor"]) for e in bob.call("history", {"id": dan})["results"]]
    assert events[-2:] == [("FORGET", "team:alice"), ("RESTORE", "team:alice")]
    # Bob's own restore of a record he forgot reaches Alice the same way.
    bob.call("forget", {"id": eve})
    wait_for(lambda: holds(alice, eve) is None, WAIT)
    bob.call("restore", {"id": eve})
    assert wait_for(lambda: holds(alice, eve), WAIT)["status"] == "current"
    assert alice.record_count() == bob.record_count() == 4


def test_newer_by_stamp_not_by_arrival(pair: tuple[Served, Served],
                                       pg: pgserver.PgServer) -> None:
    """Written while the server is down, Alice's note and Bob's later correction of it reach
    Bob in the other order (his correction is in his store before her note arrives): the
    stamps, not the arrival, say which is newer."""
    alice, bob = pair
    pg.stop()
    try:
        old = add(alice, "The gateway uses httpx.")
        correction = add(bob, "The gateway uses requests instead of httpx.")
    finally:
        pg.start()
    for side in (alice, bob):
        wait_for(lambda s=side: holds(s, old) and holds(s, correction), WAIT)
        assert wait_for(lambda s=side: holds(s, old)["status"] == "superseded", WAIT)
        assert holds(side, correction)["status"] == "current"
        assert holds(side, correction)["created_at"] > holds(side, old)["created_at"]


# -- faults ---------------------------------------------------------------------------------------
def test_server_outage_local_memory_goes_on_and_everything_arrives_after(
        pair: tuple[Served, Served], pg: pgserver.PgServer) -> None:
    alice, bob = pair
    warm = add(alice, "The cache is Redis.")
    wait_for(lambda: holds(bob, warm), WAIT)
    pg.stop()
    try:
        ids = [add(alice, f"Outage note {n}: the worker pool has {n} threads.")
               for n in range(5)]
        # Capture, search and injection go on, locally, at once.
        alice.hook("Stop", {"session_id": "s1", "transcript_path": "/nonexistent"})
        assert alice.json("search", "worker pool threads")["results"]
        answer = alice.hook("UserPromptSubmit", {"session_id": "s1", "prompt":
                                                 "how many threads has the worker pool?",
                                                 "transcript_path": "/nonexistent"})
        assert "worker pool" in str(answer)
        status = wait_for(lambda: (s := team_status(alice))["state"] == "offline" and s, WAIT)
        assert status["push"]["pending"] >= 5 and status["last_error"]
        assert status["offline_since"]
        text = alice.cli("team", "status").stdout
        assert "offline" in text and "waiting in the outbox" in text
        assert "offline" in alice.cli("status").stdout
        check = next(c for c in doctor(alice)["checks"] if c["name"] == "team")
        assert check["warn"] and "offline" in check["detail"] and check["fix"]
    finally:
        pg.start()
    for rid in ids:
        wait_for(lambda r=rid: holds(bob, r), WAIT)
    wait_for(lambda: delivered(alice), WAIT)
    assert team_status(alice)["last_error"]  # kept for the record, with its time
    assert team_status(alice)["offline_since"] is None


def test_a_member_offline_for_long_catches_up(pair: tuple[Served, Served],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    alice, bob = pair
    bob.stop()
    # Bob comes back to nearly five pulls' worth (four full batches and part of a fifth), in
    # one of Alice's pushes: 120 events, pulled 25 at a time.
    monkeypatch.setenv("LINTAID_TEAM_PULL_BATCH", "25")
    items = [{"content": f"Service {n} listens on port {9000 + n}."} for n in range(120)]
    ids = [r["id"] for r in alice.call("add", {"items": items})["results"]]
    wait_for(lambda: delivered(alice), WAIT)
    bob.start()
    wait_for(lambda: all(holds(bob, rid) for rid in (ids[0], ids[-1])), WAIT * 2)
    wait_for(lambda: team_status(bob)["pull"]["behind"] == 0, WAIT)
    assert bob.record_count() == 120


def test_replays_store_nothing_twice(pair: tuple[Served, Served], pg: pgserver.PgServer,
                                     team_db: str) -> None:
    alice, bob = pair
    ids = [add(alice, f"Replay note {n}.") for n in range(3)]
    wait_for(lambda: delivered(alice) and all(holds(bob, r) for r in ids), WAIT)
    before = server_rows(pg, team_db, "SELECT count(*) FROM lintaid_events")[0][0]
    # Alice leaves and joins again: everything she holds is queued and pushed once more.
    assert alice.json("team", "leave")["undelivered"] == 0
    again = join(alice, pg, team_db, "alice")
    assert again["queued"] >= 3
    wait_for(lambda: delivered(alice), WAIT)
    assert server_rows(pg, team_db, "SELECT count(*) FROM lintaid_events")[0][0] == before
    # Bob leaves and joins again: his cursor starts over, every event is pulled again.
    bob.json("team", "leave")
    join(bob, pg, team_db, "bob")
    wait_for(lambda: team_status(bob)["pull"]["cursor"] >= before, WAIT)
    assert bob.record_count() == 3
    assert alice.record_count() == 3


def test_a_third_repository_sees_nothing(pair: tuple[Served, Served], tmp_path: Path,
                                         serve: Callable[..., Served],
                                         pg: pgserver.PgServer, team_db: str) -> None:
    alice, bob = pair
    other = serve(repository(tmp_path / "other", "another project"))
    joined = join(other, pg, team_db, "carol")
    assert joined["repo_key"] != team_status(alice)["repo_key"]
    shared = add(alice, "The job queue uses RabbitMQ.")
    theirs = add(other, "The job queue uses SQS.")
    wait_for(lambda: holds(bob, shared), WAIT)
    wait_for(lambda: delivered(other) and delivered(alice), WAIT)
    wait_for(lambda: team_status(other)["pull"]["behind"] == 0, WAIT)
    assert holds(other, shared) is None and other.record_count() == 1
    assert holds(alice, theirs) is None and holds(bob, theirs) is None


def test_a_newer_server_schema_stops_writing_with_a_clear_message(
        pair: tuple[Served, Served], pg: pgserver.PgServer, team_db: str) -> None:
    alice, _bob = pair
    with pg.admin(team_db) as conn:
        conn.execute("INSERT INTO lintaid_schema(version) VALUES (99)")
    alice.stop()
    alice.start()
    status = wait_for(lambda: (s := team_status(alice))["state"] == "refused" and s, WAIT)
    assert "version 99" in status["last_error"] and "upgrade" in status["last_error"]
    before = server_rows(pg, team_db, "SELECT count(*) FROM lintaid_events")[0][0]
    add(alice, "Written while the server is too new.")
    assert team_status(alice)["push"]["pending"] == 1
    assert server_rows(pg, team_db, "SELECT count(*) FROM lintaid_events")[0][0] == before
    check = next(c for c in doctor(alice)["checks"] if c["name"] == "team")
    assert not check["ok"] and "version 99" in check["detail"]


# -- joining and the password ---------------------------------------------------------------------
def test_the_password_never_lands_in_the_state_folder(
        clones: tuple[Path, Path], serve: Callable[..., Served], pg: pgserver.PgServer,
        team_db: str, tmp_path: Path) -> None:
    alice = serve(clones[0])
    joined = join(alice, pg, team_db, "alice")
    assert "pgpass" in joined["password_kept_in"]
    assert "pgpass" in joined["password_source"]
    mine = pgserver.password_of(joined["invite"])  # the member's own, made by add-member
    assert mine != pg.password and mine in (tmp_path / "pgpass").read_text()
    assert (tmp_path / "pgpass").stat().st_mode & 0o077 == 0
    add(alice, "Gateway timeout retry attempts: 2.")
    wait_for(lambda: delivered(alice), WAIT)
    alice.stop()  # logs flushed, backups made
    state = paths.state_dir(clones[0])
    leaked = [p for p in state.rglob("*") if p.is_file()
              and any(pw.encode() in p.read_bytes() for pw in (pg.password, mine))]
    assert leaked == []
    assert "password" not in (state / "team.json").read_text()


def test_join_refuses_what_cannot_work_and_changes_nothing(
        clones: tuple[Path, Path], tmp_path: Path, serve: Callable[..., Served],
        pg: pgserver.PgServer, team_db: str) -> None:
    alice = serve(clones[0])
    wrong = pg.dsn(team_db).replace(pg.password, "not-the-password")
    result = alice.cli("team", "join", wrong)
    assert result.exit_code != 0 and "password authentication failed" in result.stderr
    assert "nothing was changed" in result.stderr
    assert "not-the-password" not in result.stderr
    assert not (paths.state_dir(clones[0]) / "team.json").exists()
    assert alice.call("team_status") == {"joined": False, "problem": None}
    empty = tmp_path / "empty"
    empty.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=empty, check=True)
    paths.ensure_state_dir(empty)
    bare = serve(empty)
    result = bare.cli("team", "join", pg.dsn(team_db))
    assert result.exit_code != 0 and "--repo-key" in result.stderr
    assert bare.cli("team", "join", pg.dsn(team_db), "--repo-key", "acme/empty",
                    "--json").json()["repo_key"] == "key:acme/empty"
    assert alice.cli("team", "join", "host=127.0.0.1 port=notaport").exit_code != 0
