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


def join(served: Served, pg: pgserver.PgServer, db: str, member: str,
         *extra: str) -> dict[str, Any]:
    result = served.cli("team", "join", pg.dsn(db), "--member", member, "--json", *extra)
    assert result.exit_code == 0, result.stdout + result.stderr
    data: dict[str, Any] = result.json()
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
