"""Online backups of memory.db: on request, on a schedule, at a clean stop; private, rolling,
checked, and usable as they are."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from lintaid.store.backup import Retention
from lintaid_client import Memory, paths
from tests.conftest import (
    Served,
    lintaid_env,
    run_cli,
    run_json,
    start_daemon,
    stop_daemon,
    wait_for,
)


def rolling(root: Path) -> list[Path]:
    return sorted((paths.state_dir(root) / "backups").glob("memory-*.db"))


def records_in(db: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        return {r[0] for r in conn.execute("SELECT id FROM records")}
    finally:
        conn.close()


def test_backup_to_a_file_is_a_private_consistent_copy(daemon: Path, tmp_path: Path) -> None:
    with Memory(project=daemon) as m:  # 30 writes, each its own commit (not one CLI each)
        ids = {m.add(f"The heron pump {i} runs at {i} bar.")["results"][0]["id"]
               for i in range(30)}
    out = run_cli(daemon, "backup", "--to", "../copy.db").stdout  # relative to the caller
    target = (daemon / ".." / "copy.db").resolve()
    assert str(target) in out and target.stat().st_mode & 0o777 == 0o600
    assert not Path(str(target) + "-wal").exists()  # one self-contained file
    assert records_in(target) == ids
    # A folder, or a folder that does not exist, is one line naming the option.
    for bad in (str(tmp_path), str(tmp_path / "nowhere" / "x.db")):
        proc = run_cli(daemon, "backup", "--to", bad, check=False)
        assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1
        assert "--to" in proc.stderr and "Traceback" not in proc.stderr


def test_rolling_backups_keep_the_newest_five(daemon: Path) -> None:
    run_cli(daemon, "add", "The kestrel queue drains hourly.")
    made = [run_json(daemon, "backup")["path"] for _ in range(7)]
    kept = rolling(daemon)
    assert [str(p) for p in kept] == made[-5:]
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in kept)
    assert (paths.state_dir(daemon) / "backups").stat().st_mode & 0o777 == 0o700
    status = run_json(daemon, "status")["backups"]
    assert status["kept"] == 5 and status["newest"] == made[-1]


def test_rolling_backups_stay_within_their_size_cap(project: Path,
                                                   serve: Callable[..., Served]) -> None:
    served = serve(project)
    served.call("add", {"content": "The avocet sync runs at dawn."})
    size = Path(served.call("backup")["path"]).stat().st_size
    served.stop()
    # Room for about two and a half backups: the newest that fit stay, however many more
    # are kept. (A backup after the restart may be a page or two larger than the first, so
    # which fit is read from the sizes each backup reported.)
    cap = int(size * 2.5)
    served = serve(project, backups=Retention(keep=5, max_bytes=cap))
    made = [served.call("backup") for _ in range(4)]
    fit: list[str] = []
    for info in reversed(made):
        if fit and sum(m["bytes"] for m in made[-len(fit) - 1:]) > cap:
            break
        fit.insert(0, info["path"])
    assert 1 <= len(fit) <= 2
    assert [str(p) for p in rolling(project)] == fit
    status = served.call("status")["backups"]
    assert status["kept"] == len(fit) and status["bytes"] <= status["max_bytes"]
    served.stop()
    # A cap below one backup still keeps the newest: recovery needs one.
    served = serve(project, backups=Retention(keep=5, max_bytes=1))
    newest = served.call("backup")["path"]
    assert [str(p) for p in rolling(project)] == [newest]


def test_a_backup_is_made_on_schedule_while_there_are_writes(project: Path) -> None:
    env = lintaid_env(LINTAID_BACKUP_INTERVAL_S="1")
    start_daemon(project, env=env)
    try:
        with Memory(project=project) as m:
            rid = m.add("The osprey cache holds 64 entries.")["results"][0]["id"]
        first = wait_for(lambda: rolling(project), timeout=30)
        assert rid in records_in(first[-1])
        with Memory(project=project) as m:
            later = m.add("The osprey cache holds 128 entries.")["results"][0]["id"]
        wait_for(lambda: any(later in records_in(p) for p in rolling(project)), timeout=30)
    finally:
        stop_daemon(project, env=env)


def test_a_clean_stop_backs_up_only_after_writes(project: Path) -> None:
    start_daemon(project)
    rid = run_json(project, "add", "The plover job retries three times.")["id"]
    stop_daemon(project)
    first = rolling(project)
    assert len(first) == 1 and rid in records_in(first[0])
    start_daemon(project)  # no writes: the stop makes no new backup
    stop_daemon(project)
    assert rolling(project) == first


def test_the_python_client_backs_up_too(daemon: Path, tmp_path: Path) -> None:
    with Memory(project=daemon) as m:
        rid = m.add("The grebe feed refreshes every minute.")["results"][0]["id"]
        info = m.backup(tmp_path / "api.db")
    assert info["path"] == str(tmp_path / "api.db") and info["bytes"] > 0
    assert rid in records_in(tmp_path / "api.db")
