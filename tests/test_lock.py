"""The one-daemon-per-project lock: asking whether it is held never takes it, and racing
starters all end up talking to the one daemon that won."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lintaid_client import Memory, lock, paths
from tests.conftest import lintaid_env, stop_daemon

PROBE = """
import sys
from pathlib import Path
from lintaid_client import lock
target, stop = Path(sys.argv[1]), Path(sys.argv[2])
print("ready", flush=True)
while not stop.exists():
    lock.is_held(target)
"""


def test_probing_never_makes_an_acquire_fail(tmp_path: Path) -> None:
    target = tmp_path / "daemon.lock"
    stop = tmp_path / "stop"
    probes = [subprocess.Popen([sys.executable, "-c", PROBE, str(target), str(stop)],
                               stdout=subprocess.PIPE, text=True) for _ in range(4)]
    try:
        for probe in probes:
            assert probe.stdout is not None and probe.stdout.readline() == "ready\n"
        refused = 0
        for _ in range(300):
            try:
                fd = lock.acquire(target, retry_s=0.0)
            except lock.AlreadyRunning:
                refused += 1
                continue
            assert lock.is_held(target)
            lock.release(fd)
        assert refused == 0
    finally:
        stop.touch()
        for probe in probes:
            probe.wait(30)
            if probe.stdout is not None:
                probe.stdout.close()


def test_a_held_lock_is_seen_and_a_second_holder_refused(tmp_path: Path) -> None:
    target = tmp_path / "daemon.lock"
    assert not lock.is_held(target)
    fd = lock.acquire(target)
    try:
        assert lock.is_held(target)
        with pytest.raises(lock.AlreadyRunning):
            lock.acquire(target, retry_s=0.05)
    finally:
        lock.release(fd)
    assert not lock.is_held(target)


@pytest.mark.slow
def test_racing_autostarts_all_reach_the_one_daemon(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    for key, value in lintaid_env().items():
        monkeypatch.setenv(key, value)
    results: list[object] = []

    def add(n: int) -> None:
        try:
            with Memory(root, timeout=30) as mem:
                results.append(mem.add(f"racing note {n}")["results"][0]["event"])
        except Exception as err:  # the assertion below shows which start failed and why
            results.append(err)

    threads = [threading.Thread(target=add, args=(n,)) for n in range(6)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert results == ["ADD"] * 6
        assert lock.is_held(paths.lock_path(root))
    finally:
        stop_daemon(root)
