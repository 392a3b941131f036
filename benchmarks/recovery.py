"""Integrity check, backup and recovery on a real memory.db of N records.

Prints, for a throwaway project with a real daemon:
  * the start-up integrity check (``PRAGMA quick_check``) on memory.db;
  * an online backup (``lintaid backup``) while the daemon serves;
  * ``lintaid recover`` after three leaf pages of the records table are overwritten: its time
    and what it brought back (read from the damaged file, from the backup, lost).

    python benchmarks/recovery.py [--records 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lintaid_client import Memory, paths  # noqa: E402
from tests.damage import overwrite_pages, three_pages  # noqa: E402


def cli(root: Path, *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "lintaid", *args, "--project", str(root)],
                          capture_output=True, text=True, env={**os.environ,
                                                               "LINTAID_NO_WATCH": "1"})
    if proc.returncode != 0:
        raise SystemExit(f"lintaid {' '.join(args)} failed: {proc.stderr}")
    return time.perf_counter() - started, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    opts = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="lintaid-recovery-")) / "proj"
    root.mkdir()
    db = paths.memory_db_path(root)
    with Memory(project=root) as m:
        for start in range(0, opts.records, 1000):
            m.add_many([f"Service {i} timeout seconds: {i % 97}. Owner team {i % 13} reviews "
                        f"the runbook section {i} every quarter."
                        for i in range(start, min(start + 1000, opts.records))])
        cli(root, "backup")  # warm
        backup_s, _ = cli(root, "backup", "--json")
        info = json.loads(_)
    cli(root, "stop")
    conn = sqlite3.connect(db)
    started = time.perf_counter()
    conn.execute("PRAGMA quick_check(5)").fetchall()
    check_s = time.perf_counter() - started
    conn.close()
    for extra in sorted((paths.state_dir(root) / "backups").glob("memory-*.db"))[:-1]:
        extra.unlink()
    pages = three_pages(db)
    overwrite_pages(db, pages)
    recover_s, out = cli(root, "recover", "--json")
    report = json.loads(out)
    records = report["tables"]["records"]
    print(f"memory.db: {opts.records} records, {db.stat().st_size / 2**20:.1f} MiB; "
          f"{os.cpu_count()} cores")
    print(f"quick_check at start        {check_s * 1000:8.1f} ms")
    print(f"lintaid backup (CLI, online) {backup_s * 1000:7.1f} ms  (the copy itself "
          f"{info['seconds'] * 1000:.1f} ms, {info['bytes'] / 2**20:.1f} MiB)")
    print(f"lintaid recover (CLI)       {recover_s * 1000:8.1f} ms  (its own count: "
          f"{report['seconds'] * 1000:.0f} ms, rebuild of claims and index included)")
    print(f"  pages overwritten: {pages}")
    print(f"  records: {records['salvaged']} read from the damaged file, "
          f"{records['from_backup']} from the backup, "
          f"{opts.records - report['records']} lost; "
          f"{records['damaged_stretches']} damaged stretch(es)")


if __name__ == "__main__":
    main()
