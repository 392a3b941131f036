"""The single-instance lock: one daemon per project, taken before binding anything.

Kept tiny and import-light so a second daemon started by a racing hook exits before it
loads the stores.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class AlreadyRunning(Exception):
    """Another process holds the project's daemon lock."""


def acquire(path: Path) -> int:
    """Take the lock (non-blocking) and return its fd; the kernel drops it if we die."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise AlreadyRunning(f"another lintaid daemon holds {path}") from None
    return fd


def release(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
