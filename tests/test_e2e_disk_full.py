"""A full disk: writes fail with a clear error, nothing stored is lost, the daemon keeps serving,
and it writes again once space is back. The project lives on a real, tiny tmpfs."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from lintaid_client import connection, paths
from tests.conftest import daemon_process, run_cli, run_hook, run_json, wait_for
from tests.transcripts import stop_payload, write_transcript


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {proc.stderr.strip()}")
    try:
        root = mount / "proj"
        root.mkdir()
        paths.ensure_state_dir(root)
        yield root
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(root: Path) -> Path:
    filler = root.parent / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass  # ENOSPC: the disk is full
    finally:
        os.close(fd)
    return filler


def found(root: Path, query: str) -> list[str]:
    with connection.Connection(root) as conn:
        return [h["id"] for h in conn.call("search", {"query": query}, timeout=30)["results"]]


@pytest.mark.slow
def test_a_full_disk_fails_writes_clearly_and_loses_nothing(small_disk: Path) -> None:
    root = small_disk
    daemon = daemon_process(root)
    try:
        kept = run_json(root, "add", "The archive job keeps 30 days of snapshots.")["id"]
        # Acknowledged means in memory.db; the index (derived) takes it in a moment later.
        # Fill the disk only then, so the search below reads an index that holds it.
        wait_for(lambda: kept in found(root, "archive job snapshots"))
        filler = fill(root)
        failed = 0
        for i in range(5):
            proc = run_cli(root, "add", f"note {i} " + "x" * 20000, check=False)
            if proc.returncode != 0:
                failed += 1
                assert "full" in proc.stderr.lower() or "space" in proc.stderr.lower()
        assert failed, "expected writes to fail on a full disk"
        transcript = write_transcript(root.parent.parent / "t.jsonl", [
            ("user", "Check the archive job."), ("assistant", "The archive job is healthy.")],
            cwd=str(root))
        assert run_hook(root, "Stop", stop_payload(transcript, cwd=str(root))) == {}
        assert connection.ping(root, timeout=2.0)["pong"] is True
        assert kept in found(root, "archive job snapshots")
        os.unlink(filler)
        again = run_json(root, "add", "Space is back: the archive job writes again.")["id"]
        assert again in found(root, "space archive")
        assert kept in found(root, "snapshots")
    finally:
        daemon.stop()
