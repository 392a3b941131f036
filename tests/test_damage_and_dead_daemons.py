"""What the daemon would refuse, said while it is down; a killed backup's leftovers; the CLI
facing a daemon that dies under it; supersession cycles on every path."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from lintaid.store.backup import backup_dir
from lintaid_client import paths
from tests.conftest import Served, daemon_process, invoke, lintaid_env, wait_for
from tests.damage import overwrite_pages, three_pages


def doctor(root: Path) -> tuple[int, dict]:
    result = invoke(root, "doctor", "--json")
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where ``seeded`` keeps the stores it seeded, one folder for each size."""
    return tmp_path_factory.mktemp("seeds")


def seeded(serve: Callable[..., Served], root: Path, n: int = 400,
           seeds: Path | None = None) -> None:
    """``n`` records added through a daemon, which is then stopped; everything in the file
    itself. With ``seeds``, the stores seeded once are copied in (memory.db, its backups and
    indexes: no record is added again), and the daemon is then started and stopped on them as
    on the stores it wrote, so the project's own files (log, endpoint) are its own."""
    kept = seeds / str(n) if seeds is not None else None
    state = paths.state_dir(root)
    if kept is not None and kept.exists():
        shutil.copytree(kept, state, dirs_exist_ok=True)
        serve(root).stop()
    else:
        served = serve(root)
        served.call("add", {"items": [{"content": f"Service {i} listens on port {9000 + i} "
                                       "and keeps its logs for thirty days."}
                                      for i in range(n)]})
        served.stop()
    conn = sqlite3.connect(paths.memory_db_path(root))  # everything in the file itself
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    if kept is not None and not kept.exists():
        kept.mkdir()
        for name in ("memory.db", "backups", "index"):
            if (state / name).is_dir():
                shutil.copytree(state / name, kept / name)
            else:
                shutil.copy2(state / name, kept / name)


def damage_header(db: Path) -> None:
    with open(db, "r+b") as fh:
        fh.write(b"this is no SQLite file")


def damage_leaves(db: Path) -> None:
    overwrite_pages(db, three_pages(db))


def damage_interior(db: Path) -> None:
    overwrite_pages(db, [2])  # the first page after the schema: a b-tree's root or inside


@pytest.mark.parametrize("damage", [damage_header, damage_leaves, damage_interior],
                         ids=["header", "leaf pages", "an early page"])
def test_doctor_fails_on_every_damage_that_keeps_the_daemon_from_starting(
        project: Path, serve: Callable[..., Served], damage: Callable[[Path], None],
        seeds: Path) -> None:
    seeded(serve, project, seeds=seeds)
    db = paths.memory_db_path(project)
    code, _report = doctor(project)
    assert code == 0
    damage(db)
    code, report = doctor(project)
    assert code == 1
    check = next(c for c in report["checks"] if c["name"] == "memory.db")
    assert not check["ok"] and "damaged" in check["detail"]
    assert "lintaid recover" in check["fix"]
    # ... and it is right: the daemon refuses that file.
    with pytest.raises(AssertionError, match="damaged"):
        serve(project)


def test_doctor_reads_the_right_file_whatever_the_projects_path_holds(
        tmp_path: Path, serve: Callable[..., Served]) -> None:
    """A project folder named with a URI's delimiters: memory.db is opened by its own path
    (a '#' once cut it short, and the doctor opened nothing, found no damage and said so)."""
    root = tmp_path / "odd #1 ?name=x%41"
    root.mkdir()
    paths.ensure_state_dir(root)
    seeded(serve, root, 20)
    assert doctor(root)[0] == 0
    damage_header(paths.memory_db_path(root))
    code, report = doctor(root)
    check = next(c for c in report["checks"] if c["name"] == "memory.db")
    assert code == 1 and not check["ok"] and "damaged" in check["detail"]


def test_a_killed_backups_temporary_file_is_named_then_removed_at_the_next_start(
        project: Path, serve: Callable[..., Served]) -> None:
    seeded(serve, project, 10)
    folder = backup_dir(project)
    folder.mkdir(exist_ok=True)
    leftover = folder / ".memory-20260101T000000.000Z.db.4242.1.tmp"
    leftover.write_bytes(b"\0" * (2 * 2**20))
    code, report = doctor(project)
    check = next(c for c in report["checks"] if c["name"] == "backups")
    assert check["warn"] and "unfinished" in check["detail"] and "2.0 MiB" in check["detail"]
    served = serve(project)
    assert not leftover.exists()
    assert served.call("ping")["pong"]
    assert not any(c["name"] == "backups" for c in doctor(project)[1]["checks"])


@pytest.mark.slow
def test_the_cli_returns_clearly_when_the_daemon_dies_under_a_long_operation(
        project: Path, tmp_path: Path) -> None:
    """An import of 20,000 rows, the daemon killed while it works: the CLI says the daemon
    went away (exit 3), within seconds, instead of waiting out its deadline."""
    rows = [{"type": "header", "format": "lintaid-export", "version": 1}]
    rows += [{"type": "record", "id": f"mrow{i:06d}", "content": f"Imported fact {i}: the "
              f"queue {i} drains every {i % 60 + 1} minutes.", "kind": "note",
              "source": "import", "created_at": 1_700_000_000 + i} for i in range(20_000)]
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    daemon = daemon_process(project)
    env = lintaid_env(LINTAID_NO_AUTOSTART="1")
    proc = subprocess.Popen([sys.executable, "-m", "lintaid", "import", str(big), "--project",
                             str(project)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        log = paths.log_path(project)
        # Kill it once the import is under way (its first batches are committed).
        wait_for(lambda: log.exists() and '"op": "import"' in log.read_text()
                 or _records(project) > 0, timeout=60, interval=0.05)
        os.kill(daemon.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        daemon.stop()
    assert proc.returncode == 3, (out, err)
    assert "went away" in err and "import" in err


def _records(root: Path) -> int:
    from lintaid_client import connection, protocol

    try:
        with connection.Connection(root) as conn:
            return int(conn.call("status", timeout=1)["memory"]["records"])
    except protocol.LintaidError:
        return 0


def test_supersession_cycles_are_refused_on_every_path(served: Served, tmp_path: Path) -> None:
    x = served.call("add", {"content": "The deploy window is Friday."})["id"]
    y = served.call("add", {"content": "The deploy window is Tuesday."})["id"]
    z = served.call("add", {"content": "The deploy window is Monday."})["id"]
    assert served.cli("supersede", x, "--by", y).exit_code == 0
    # directly back, and round through a third
    back = served.cli("supersede", y, "--by", x)
    assert back.exit_code == 1 and "already supersedes" in back.stderr
    assert served.cli("supersede", y, "--by", z).exit_code == 0
    around = served.cli("supersede", z, "--by", x)
    assert around.exit_code == 1 and "already supersedes" in around.stderr
    # the Python client, and an import naming the reverse link
    with served.memory() as m, pytest.raises(Exception, match="already supersedes"):
        m.supersede(y, new_id=x)
    link = {"type": "link", "new_id": y, "old_id": z, "at": 1_700_000_000}
    (tmp_path / "cycle.jsonl").write_text(json.dumps(
        {"type": "header", "format": "lintaid-export", "version": 1}) + "\n"
        + json.dumps(link) + "\n")
    result = served.json("import", str(tmp_path / "cycle.jsonl"))
    assert result["counts"] == {"link": {"SKIP": 1}}
    assert "already supersedes" in result["skipped"][0]
    # the fact is still there: the newest record stands
    statuses = {rid: served.call("get", {"id": rid})["status"] for rid in (x, y, z)}
    assert statuses == {x: "superseded", y: "superseded", z: "current"}


@pytest.mark.slow
def test_acknowledged_writes_lost_with_the_wal_are_found_and_recovered(project: Path) -> None:
    """Writes acknowledged while the WAL held them (adds, an edit, a supersede, a forget, a
    restore),
    the daemon killed, the WAL deleted: the next start finds them from the index, writes
    back what its stored copy holds (the same ids, text, times and links; the forget is
    done again), derives and indexes them again, and says so (log, status, doctor)."""
    from lintaid_client import connection

    def found(conn: connection.Connection, query: str) -> list[str]:
        return [h["id"] for h in conn.call("search", {"query": query})["results"]]

    daemon = daemon_process(project)
    try:
        with connection.Connection(project) as conn:
            kept = conn.call("add", {"content": "Checkpointed: the queue has 4 workers."})["id"]
            old = conn.call("add", {"content": "The cache lives on redis-1."})["id"]
            gone = conn.call("add", {"content": "The lab printer is pr-lab-7."})["id"]
            back = conn.call("add", {"content": "The wiki lives at wiki-int-3."})["id"]
            conn.call("forget", {"id": back})
            wait_for(lambda: found(conn, "printer pr-lab-7") and not found(conn, "wiki-int-3"))
        db = paths.memory_db_path(project)
        probe = sqlite3.connect(db)  # everything so far in the file itself
        try:
            probe.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            probe.close()
        with connection.Connection(project) as conn:
            lost = [conn.call("add", {"content": f"Acknowledged note {i}: port {8000 + i}.",
                                      "metadata": {"tag": f"t{i}"}})["id"] for i in range(5)]
            conn.call("update", {"id": kept, "content": "Checkpointed: the queue has 9 workers."})
            newer = conn.call("supersede", {"old_id": old,
                                            "content": "The cache moved to redis-2."})["new_id"]
            conn.call("forget", {"id": gone, "reason": "printer retired"})
            conn.call("restore", {"id": back})
            wait_for(lambda: all(found(conn, f"port {8000 + i}") for i in range(5))
                     and found(conn, "wiki-int-3")
                     and found(conn, "9 workers") and not found(conn, "printer pr-lab-7")
                     and conn.call("get", {"id": old})["status"] == "superseded")
            before = {rid: conn.call("get", {"id": rid}) for rid in lost}
        os.kill(daemon.pid, signal.SIGKILL)
    finally:
        daemon.stop()
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    probe = sqlite3.connect(db)
    try:  # what SQLite alone would leave: none of the acknowledged writes
        assert probe.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 4
    finally:
        probe.close()
    again = daemon_process(project)
    try:
        status = json.loads(subprocess.run(
            [sys.executable, "-m", "lintaid", "status", "--json", "--project", str(project)],
            capture_output=True, text=True, env=lintaid_env(), check=True).stdout)
        missing = status["integrity"]["missing_acknowledged"]
        # (``old`` itself did not change: the link it lost comes back with ``newer``)
        assert sorted(missing["ids"]) == sorted([*lost, kept, newer, gone, back])
        assert missing["recovered"] == {"added": 6, "changed": 2, "links": 1,
                                        "forgotten_again": 1}
        assert missing["unrecovered"] == 0
        assert "acknowledged_writes_missing" in paths.log_path(project).read_text()
        with connection.Connection(project) as conn:
            for i, rid in enumerate(lost):  # the same record: id, text, metadata, time
                wait_for(lambda i=i: found(conn, f"port {8000 + i}"))
                came = conn.call("get", {"id": rid})
                assert {k: came[k] for k in ("content", "metadata", "created_at")} == {
                    k: before[rid][k] for k in ("content", "metadata", "created_at")}
            assert "9 workers" in conn.call("get", {"id": kept})["content"]
            assert conn.call("get", {"id": old})["status"] == "superseded"
            assert conn.call("get", {"id": newer})["status"] == "current"
            assert gone not in found(conn, "printer")
            assert back in found(conn, "wiki")  # the restore is done again too
            # written after the recovery: newer than everything it brought back
            later = conn.call("add", {"content": "Written after the recovery."})["id"]
            assert conn.call("get", {"id": later})["created_at"] > max(
                b["created_at"] for b in before.values())
            trail = conn.call("audit", {"id": lost[0]})["results"]
            assert [(r["event"], r["actor"]) for r in trail] == [
                ("RECOVER", "lintaid:recovery")]  # the add's own row went with the WAL
        code, report = doctor(project)
        check = next(c for c in report["checks"] if c["name"] == "acknowledged writes")
        assert check["ok"] and check["warn"] and "9 acknowledged write(s)" in check["detail"]
        assert "all written back from the index" in check["detail"]
    finally:
        again.stop()
    # The daemon down (an idle exit, a stop): the doctor still says so, from memory.db.
    code, report = doctor(project)
    check = next(c for c in report["checks"] if c["name"] == "acknowledged writes")
    assert "9 acknowledged write(s)" in check["detail"]
