"""Drive a real ``Workspace`` in-process: a real Writer over a real MemoryStore, real watchdog.

Usage::

    with running_workspace(root) as ws:
        write(root / "a.md", "# Title\\n\\nzebrafrost\\n")
        ws.wait_searchable("zebrafrost", "a.md")
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lintaid.store.memory import MemoryStore
from lintaid.workspace.service import Workspace
from lintaid.writer import Writer
from tests.conftest import wait_for

JAN_2025 = 1735689600  # 2025-01-01T00:00:00Z
JAN_2026 = 1767225600  # 2026-01-01T00:00:00Z


def write(path: Path, text: str, *, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def age(root: Path, seconds: float = 3600) -> None:
    """Move every file's mtime into the past, so no fingerprint is "racy" (see Fingerprint)."""
    when = time.time() - seconds
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".lint-ai")]
        for name in filenames:
            os.utime(os.path.join(dirpath, name), (when, when), follow_symlinks=False)


@dataclass
class Running:
    ws: Workspace
    writer: Writer
    store: MemoryStore

    def search(self, query: str, *, limit: int = 10,
               history: bool = False) -> tuple[list[dict[str, Any]], int]:
        self.writer.wait_visible()
        return self.ws.search_hits(query, limit, history=history)

    def paths(self, query: str, **kwargs: Any) -> set[str]:
        return {hit["path"] for hit in self.search(query, **kwargs)[0]}

    def wait_searchable(self, query: str, path: str, timeout: float = 10.0, *,
                        history: bool = False) -> None:
        wait_for(lambda: path in self.paths(query, history=history), timeout)

    def wait_gone(self, query: str, path: str, timeout: float = 10.0) -> None:
        wait_for(lambda: path not in self.paths(query), timeout)


@contextmanager
def running_workspace(root: Path, *, ready_timeout: float = 60.0,
                      supervise_every: float | None = None) -> Iterator[Running]:
    """``supervise_every``: how often the watcher checks its threads (tests that kill one
    need not wait the production interval for the restart)."""
    store = MemoryStore(root)
    writer = Writer(store)
    writer.start()
    ws = Workspace(root, submit=writer.submit)
    if supervise_every is not None:
        ws.watcher.supervise_every = supervise_every
    writer.add_flusher(ws.flush)
    ws.start()
    try:
        assert ws.ready.wait(ready_timeout), "initial reconcile did not finish"
        yield Running(ws, writer, store)
    finally:
        ws.stop()
        writer.stop()
        store.close()
