"""The fault suite: real daemons against damaged databases, a stepped clock and a squatted
socket folder. (A full disk: ``test_e2e_disk_full.py``; kill -9 mid-write:
``test_e2e_spine.py``.) Each test skips, saying why, only where the machine cannot stage it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from lintaid_client import Memory, paths
from tests.conftest import lintaid_env, run_cli, run_json, start_daemon, stop_daemon, wait_for
from tests.damage import overwrite_pages, three_pages

WATCH = lintaid_env(LINTAID_NO_WATCH="0")


def fill(root: Path, n: int, *, word: str = "compressor") -> list[str]:
    """n memories through the Python client; their ids in order."""
    with Memory(project=root) as m:
        out = m.add_many([f"The {word} stage {i} keeps {i} snapshots. " + "padding " * 40
                          for i in range(n)])
    return [r["id"] for r in out["results"]]


def log_events(root: Path) -> list[dict]:
    lines = paths.log_path(root).read_text().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


# -- memory.db damaged ------------------------------------------------------------------------
def test_a_damaged_memory_db_is_refused_with_one_line_naming_recover(project: Path) -> None:
    start_daemon(project)
    fill(project, 400)
    stop_daemon(project)
    overwrite_pages(paths.memory_db_path(project), three_pages(paths.memory_db_path(project)))

    started = run_cli(project, "start", check=False)
    assert started.returncode != 0
    message = started.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert "memory.db is damaged" in message
    assert f"lintaid recover --project {project}" in message
    # A command that starts the daemon on demand says the same, in one line.
    added = run_cli(project, "add", "The compressor runs nightly.", check=False)
    assert added.returncode != 0 and "lintaid recover" in added.stderr
    assert len(added.stderr.strip().splitlines()) == 1
    assert run_cli(project, "status", check=False).returncode != 0
    assert any(e["event"] == "start_failed" and "lintaid recover" in e["reason"]
               for e in log_events(project))


# -- workspace.db damaged -----------------------------------------------------------------------
def test_a_damaged_workspace_db_is_set_aside_and_rebuilt_from_the_files(project: Path) -> None:
    docs = project / "docs"
    docs.mkdir()
    for i in range(60):
        (docs / f"note{i}.md").write_text(f"# Note {i}\n\n" + f"The heron valve {i} opens. " * 60)
    (docs / "target.md").write_text("# Target\n\nThe kingfisher gauge reads forty.\n")
    start_daemon(project, env=WATCH)
    wait_for(lambda: run_json(project, "status", env=WATCH)["workspace"]["ready"], timeout=60)
    stop_daemon(project, env=WATCH)
    db = paths.workspace_db_path(project)
    overwrite_pages(db, three_pages(db, "chunks"))
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(db).execute("PRAGMA quick_check").fetchall()

    start_daemon(project, env=WATCH)
    try:
        status = wait_for(lambda: (s := run_json(project, "status", env=WATCH))["workspace"][
            "ready"] and s, timeout=60)
        recovered = status["workspace"]["recovered"]
        assert recovered and Path(recovered["moved_to"]).exists()
        assert status["workspace"]["files"] == 61
        hits = run_json(project, "search", "kingfisher gauge", "--store", "workspace",
                        env=WATCH)["results"]
        assert hits and hits[0]["path"] == "docs/target.md"
        text = run_cli(project, "status", env=WATCH).stdout
        assert "workspace.db was damaged" in text and "rebuilt from the files" in text
        assert any(e["event"] == "workspace_db_damaged" for e in log_events(project))
    finally:
        stop_daemon(project, env=WATCH)
    # The next start finds a whole database: nothing is set aside again.
    start_daemon(project, env=WATCH)
    try:
        assert run_json(project, "status", env=WATCH)["workspace"]["recovered"] is None
    finally:
        stop_daemon(project, env=WATCH)


def test_recover_brings_back_every_readable_row_and_the_backups_rows(project: Path) -> None:
    db = paths.memory_db_path(project)
    start_daemon(project)
    early = fill(project, 400, word="albatross")
    stop_daemon(project)  # a clean stop leaves a rolling backup holding ``early``
    backups = sorted((paths.state_dir(project) / "backups").glob("memory-*.db"))
    assert len(backups) == 1 and backups[0].stat().st_mode & 0o777 == 0o600
    start_daemon(project)
    late = fill(project, 20, word="cormorant")
    forgotten = early[0]
    run_cli(project, "forget", forgotten)
    stop_daemon(project)
    for extra in sorted((paths.state_dir(project) / "backups").glob("memory-*.db"))[1:]:
        extra.unlink()  # as if the daemon had stopped before its next backup
    overwrite_pages(db, three_pages(db))  # three leaves among the early rows
    damaged_bytes = db.read_bytes()
    assert run_cli(project, "start", check=False).returncode != 0

    report = json.loads(run_cli(project, "recover", "--json").stdout)

    assert report["needed"] and "malformed" in report["damage"]
    records = report["tables"]["records"]
    assert records["salvaged"] > 0 and records["from_backup"] > 0
    assert records["damaged_stretches"] >= 1
    assert Path(report["damaged_copy"]).read_bytes() == damaged_bytes  # kept as it was
    assert report["backup"] == str(backups[0])
    start_daemon(project)
    try:
        listed = {h["id"] for h in run_json(project, "list", "--limit", "1000")["results"]}
        assert listed == set(early[1:]) | set(late)  # nothing lost, the forgotten one stays so
        for i in (0, 133, 266, 399):  # rows from every part of the table, damaged or not
            hits = run_json(project, "search", f"albatross stage {i} keeps {i}")["results"]
            assert i == 0 or hits[0]["id"] == early[i]
        assert run_json(project, "search", "cormorant stage 7")["results"][0]["id"] == late[7]
        assert forgotten not in {h["id"] for h in run_json(
            project, "search", "albatross stage 0 keeps 0", "--top-k", "100")["results"]}
        status = run_json(project, "status")
        assert status["memory"]["records"] == 420 and status["integrity"]["memory"] == "ok"
    finally:
        stop_daemon(project)
    # A whole database: recover says so and changes nothing.
    again = run_cli(project, "recover")
    assert "nothing to recover" in again.stdout
