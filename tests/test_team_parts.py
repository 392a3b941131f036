"""The team tier's parts that need no server: the repository key, the password's places,
what the outbox notes and what leaves it. (``test_team.py`` runs the whole tier against a
real PostgreSQL server.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lintaid.capture.record import NewRecord
from lintaid.store.memory import MemoryStore
from lintaid.store.outbox import FORGET, LINK, RECORD
from lintaid.team import secret
from lintaid.team.apply import outgoing
from lintaid.team.config import TeamError, normalize_remote, repository_key


@pytest.mark.parametrize("url", [
    "git@github.com:Acme/Widgets.git", "https://github.com/acme/widgets",
    "ssh://git@github.com/acme/widgets.git", "https://bob@GitHub.com/acme/widgets.git/",
    "ssh://git@github.com:22/acme/widgets.git",
])
def test_one_repository_however_its_remote_is_spelled(url: str) -> None:
    assert normalize_remote(url) == "github.com/acme/widgets"


def test_the_repository_key_is_the_root_commit_in_every_clone(tmp_path: Path) -> None:
    def git(cwd: Path, *args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@e", "-c", "user.name=T", *args], cwd=cwd,
                       check=True, capture_output=True)

    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q")
    with pytest.raises(TeamError, match="--repo-key"):
        repository_key(origin)  # no commit, no remote
    git(origin, "commit", "-q", "--allow-empty", "-m", "first")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "clone"))
    git(tmp_path / "clone", "commit", "-q", "--allow-empty", "-m", "more")
    key = repository_key(origin)
    assert key.startswith("git:") and repository_key(tmp_path / "clone") == key
    assert repository_key(tmp_path / "clone", "remote") == f"remote:{normalize_remote(str(origin))}"
    assert repository_key(origin, "acme/widgets") == "key:acme/widgets"
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "commit", "-q", "--allow-empty", "-m", "another project")
    assert repository_key(other) != key


def test_a_password_goes_to_the_pgpass_file_and_is_found_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    passfile = tmp_path / "pgpass"
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    for name in ("PGPASSWORD", "LINTAID_TEAM_PASSWORD", "PGUSER", "PGHOST", "PGPORT"):
        monkeypatch.delenv(name, raising=False)
    passfile.write_text("otherhost:5432:db:alice:keep-me\n")
    params = {"host": "db.example.com", "port": "5433", "dbname": "team", "user": "alice"}
    assert secret.source(params)[0].startswith("none")
    where = secret.keep(params, "s3:cr\\et")
    assert str(passfile) in where and passfile.stat().st_mode & 0o077 == 0
    assert secret.source(params) == (f"the pgpass file {passfile}", None)
    secret.keep(params, "new")  # the entry for the same server is replaced, others kept
    lines = passfile.read_text().splitlines()
    assert lines == ["otherhost:5432:db:alice:keep-me", "db.example.com:5433:team:alice:new"]
    monkeypatch.setenv("PGPASSWORD", "x")
    assert secret.source(params) == ("the environment (PGPASSWORD)", None)
    monkeypatch.setenv("LINTAID_TEAM_PASSWORD", "y")
    assert secret.source(params) == ("the environment (LINTAID_TEAM_PASSWORD)", "y")


def test_the_outbox_notes_what_is_shared_and_only_that(tmp_path: Path) -> None:
    (tmp_path / ".lint-ai").mkdir()
    store = MemoryStore(tmp_path)
    try:
        with store.transaction():
            before, _ = store.put(NewRecord("Noted before joining.", "note", "cli"), "cli")
        store.outbox.enabled = True
        store.outbox.private_clients = frozenset({"cursor"})
        with store.transaction():
            shared, _ = store.put(NewRecord("The queue uses RabbitMQ.", "note", "cli"), "cli")
            newer, _ = store.put(NewRecord("The queue uses Kafka.", "note", "cli"), "cli")
            store.put(NewRecord("User prompt: hi", "prompt", "cc://s/prompt",
                                provider="claude-code"), "hook")
            store.put(NewRecord("Mine alone.", "note", "cli", private=True), "cli")
            store.put(NewRecord("Carol's row.", "note", "api", user_id="carol"), "api")
            store.put(NewRecord("Cursor saw this.", "capture", "cursor://s/outcome",
                                provider="cursor"), "hook")
            with store.outbox.quiet():
                pulled, _ = store.put(NewRecord("Bob said so.", "note", "team", member="bob",
                                                explicit_id="mbob1"), "team:bob")
            store.set_supersedes(newer, shared, "local", "cli")
            store.forget(pulled, "local", "wrong", "cli")  # a decision on Bob's record: shared
        rows = store.outbox.pending(100)
        assert [(r["kind"], r["target"]) for r in rows] == [
            (RECORD, shared), (RECORD, newer), (LINK, shared), (FORGET, pulled)]
        assert rows[2]["other"] == newer
        # Joining queues what the store held before; forgotten and pulled records stay out.
        with store.transaction():
            assert store.outbox.backfill() == 4  # before, shared, newer, and the link
            store.forget(newer, "local", None, "cli")
        out = outgoing(store.outbox.pending(100), origin="o1")
        sent = [(e.kind, e.record_id) for e in out.events]
        assert (RECORD, before) in sent and (RECORD, newer) not in sent
        assert out.withheld == 2  # newer was forgotten before it left, twice queued
        assert all(e.body.get("content") != "Bob said so." for e in out.events)
        with store.transaction():
            store.outbox.delivered(out.through)
        assert store.outbox.depth() == (0, None)
    finally:
        store.close()
