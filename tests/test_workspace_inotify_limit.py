"""A real inotify watch limit: the watcher falls back to polling and keeps indexing.

The limit is the kernel's own (``fs.inotify.max_user_watches``), lowered for the length of the
test and restored after; where it cannot be changed the test is skipped with the reason.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import pytest

from lintaid.workspace import watcher as watcher_module
from tests.workspace_harness import running_workspace, write

LIMIT = Path("/proc/sys/fs/inotify/max_user_watches")


@pytest.fixture
def tiny_watch_limit():
    try:
        before = LIMIT.read_text().strip()
        LIMIT.write_text("1\n")
    except OSError as err:
        pytest.skip(f"cannot lower {LIMIT} here: {err}")
    try:
        if not _limit_enforced():
            pytest.skip("this kernel (or sandbox) does not enforce fs.inotify.max_user_watches")
        yield
    finally:
        LIMIT.write_text(before + "\n")


def _limit_enforced() -> bool:
    """Add three watches under a limit of one: does the kernel refuse the extra ones?"""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init()
    if fd < 0:
        return False
    try:
        dirs = ["/", "/tmp", os.getcwd()]
        results = [libc.inotify_add_watch(fd, d.encode(), 0x2) for d in dirs]
        return any(r < 0 for r in results)
    finally:
        os.close(fd)


def test_watch_limit_falls_back_to_polling(tmp_path: Path, tiny_watch_limit: None,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watcher_module, "POLL_INTERVAL_S", 0.1)  # poll often: a shorter test
    root = tmp_path / "tree"
    for n in range(20):
        write(root / f"pkg{n}" / "mod.py", f"NAME = 'module {n}'\n")
    with running_workspace(root) as run:
        assert run.ws.status()["watcher_mode"] == "polling"
        write(root / "pkg3" / "mod.py", "NAME = 'lynxfeather'\n")
        run.wait_searchable("lynxfeather", "pkg3/mod.py", timeout=15)
