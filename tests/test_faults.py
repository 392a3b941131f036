"""The fault suite: real daemons against damaged databases, a stepped clock and a squatted
socket folder. (A full disk: ``test_e2e_disk_full.py``; kill -9 mid-write:
``test_e2e_spine.py``.) Each test skips, saying why, only where the machine cannot stage it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from lintaid_client import Memory, launch, paths, spool
from tests.conftest import (
    lintaid_env,
    run_cli,
    run_hook,
    run_json,
    start_daemon,
    stop_daemon,
    wait_for,
)
from tests.damage import overwrite_pages, three_pages

WATCH = lintaid_env(LINTAID_NO_WATCH="0")


def fill(root: Path, n: int, *, word: str = "compressor") -> list[str]:
    """n memories through the Python client; their ids in order."""
    with Memory(project=root) as m:
        out = m.add_many([f"The {word} stage {i} keeps {i} snapshots. " + "padding " * 40
                          for i in range(n)])
    return [r["id"] for r in out["results"]]


# Enough rows for the records table to span some 20 leaf pages (``three_pages`` damages three
# at a quarter, a half and three quarters of the table); 20 more written later stay after them.
EARLY = 120


def log_events(root: Path) -> list[dict]:
    lines = paths.log_path(root).read_text().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


# -- memory.db damaged ------------------------------------------------------------------------
def test_a_damaged_memory_db_is_refused_with_one_line_naming_recover(project: Path) -> None:
    start_daemon(project)
    fill(project, EARLY)
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
    # The hooks do not pay for a doomed start on every event: not again within 30 s.
    err = paths.start_error_path(project)
    said = err.read_text()
    assert "memory.db is damaged" in said
    launch.start_detached(project)
    assert err.read_text() == said  # a start would have emptied it first
    os.utime(err, (time.time() - 60, time.time() - 60))
    launch.start_detached(project)  # later, it tries again
    wait_for(lambda: err.stat().st_mtime > time.time() - 30 and "damaged" in err.read_text(),
             timeout=30)


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
    early = fill(project, EARLY, word="albatross")
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
    assert not paths.start_error_path(project).exists()  # the old reason is not told again

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
        for i in (0, EARLY // 3, 2 * EARLY // 3, EARLY - 1):  # every part, damaged or not
            hits = run_json(project, "search", f"albatross stage {i} keeps {i}")["results"]
            assert i == 0 or hits[0]["id"] == early[i]
        assert run_json(project, "search", "cormorant stage 7")["results"][0]["id"] == late[7]
        assert forgotten not in {h["id"] for h in run_json(
            project, "search", "albatross stage 0 keeps 0", "--top-k", "100")["results"]}
        status = run_json(project, "status")
        assert status["memory"]["records"] == EARLY + 20
        assert status["integrity"]["memory"] == "ok"
    finally:
        stop_daemon(project)
    # A whole database: recover says so and changes nothing.
    again = run_cli(project, "recover")
    assert "nothing to recover" in again.stdout


# -- the wall clock stepped back ----------------------------------------------------------------
def test_a_clock_that_ran_fast_does_not_reverse_newer(project: Path) -> None:
    """Records written while the clock ran five minutes fast, then the clock corrected: what
    is written next is still the newer, across a restart of the daemon."""
    start_daemon(project)
    first = run_json(project, "add", "Connection pool size: 10.")["id"]
    stop_daemon(project)
    conn = sqlite3.connect(paths.memory_db_path(project))
    with conn:  # as if stamped by a clock five minutes fast
        conn.execute("UPDATE records SET created_at = created_at + 300")
        conn.execute("DELETE FROM meta WHERE key = 'derived_version'")  # derive again at start
    conn.close()
    start_daemon(project)
    try:
        second = run_json(project, "add", "Connection pool size: now 20.")["id"]
        assert run_json(project, "get", second)["status"] == "current"
        old = run_json(project, "get", first)
        assert old["status"] == "superseded" and old["superseded_by"] == second
        hits = run_json(project, "search", "connection pool size")["results"]
        assert [h["id"] for h in hits] == [second]
    finally:
        stop_daemon(project)


# -- a squatted socket folder -------------------------------------------------------------------
def test_a_squatted_socket_folder_falls_back_to_a_private_one(project: Path) -> None:
    if os.geteuid() != 0:
        print("skipped: staging another user's folder needs root")
        pytest.skip("staging a folder owned by another user needs root")
    base = Path(tempfile.mkdtemp(prefix="lq", dir="/tmp"))  # short: socket paths are limited
    tmp, home = base / "t", base / "h"
    env = lintaid_env(TMPDIR=str(tmp), HOME=str(home))
    env.pop("XDG_RUNTIME_DIR", None)
    try:
        tmp.mkdir()
        home.mkdir()
        squatted = tmp / f"lintaid-{os.getuid()}"
        squatted.mkdir(mode=0o777)
        os.chown(squatted, 65534, 65534)  # another user got there first
        added = run_cli(project, "add", "The puffin relay restarts nightly.", env=env)
        assert added.stdout.startswith("added: ")
        warning = f"{squatted} is not a private folder of this user"
        assert warning in added.stderr and "Traceback" not in added.stderr
        fallback = home / ".cache" / "lintaid" / "run"
        assert fallback.stat().st_mode & 0o777 == 0o700
        assert [p.suffix for p in fallback.iterdir()] == [".sock"]
        assert list(squatted.iterdir()) == []  # nothing of ours in the squatter's folder
        hits = run_json(project, "search", "puffin relay", env=env)["results"]
        assert hits and "puffin" in hits[0]["content"]
        out = run_hook(project, "UserPromptSubmit", {"session_id": "s", "prompt":
                          "When does the puffin relay restart?"}, env=env)
        assert "puffin relay" in out["hookSpecificOutput"]["additionalContext"]
        assert spool.pending(project) == []  # answered, not spooled
    finally:
        stop_daemon(project, env=env)
        subprocess.run(["rm", "-rf", str(base)], check=False)


# -- kill -9 mid-write ------------------------------------------------------------------------
def test_kill_9_mid_write_loses_no_acknowledged_add_and_leaves_a_whole_database(
        project: Path) -> None:
    import signal

    import zmq

    from lintaid_client import connection, protocol

    start_daemon(project)
    pid = connection.read_status(project)["pid"]
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(paths.endpoint(project))
    acked: set[str] = set()
    try:
        for i in range(400):  # pipelined: many writes in flight when the kill lands
            sock.send(protocol.pack(protocol.request(
                "add", {"content": f"The skua ledger entry {i} is settled."}, f"k{i}")))
        while len(acked) < 50 and sock.poll(20_000):
            reply = protocol.unpack(sock.recv())
            if reply.get("ok"):
                acked.add(reply["result"]["id"])
        os.kill(pid, signal.SIGKILL)
        while sock.poll(500):  # replies already on their way count as acknowledged too
            reply = protocol.unpack(sock.recv())
            if reply.get("ok"):
                acked.add(reply["result"]["id"])
    finally:
        sock.close(0)
        ctx.term()
    wait_for(lambda: not connection.ping(project, timeout=0.2), timeout=10)
    assert len(acked) >= 50
    start_daemon(project)  # the WAL is replayed; the integrity check passes
    try:
        status = run_json(project, "status")
        assert status["integrity"]["memory"] == "ok"
        stored = {h["id"] for h in run_json(project, "list", "--limit", "1000")["results"]}
        assert acked <= stored
    finally:
        stop_daemon(project)
    assert "nothing to recover" in run_cli(project, "recover").stdout
