"""The single-instance lock: one daemon per project, taken before binding anything.

Defined once for both sides: the daemon holds it for its life; the hook shim only asks
whether someone holds it (a daemon running or starting). Standard library only, so a second
daemon started by a racing hook exits before it loads the stores.
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


def is_held(path: Path) -> bool:
    """True when some process holds the lock at ``path`` (without taking it for long)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
