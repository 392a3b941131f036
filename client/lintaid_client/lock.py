"""The single-instance lock: one daemon per project, taken before binding anything.

Defined once for both sides: the daemon holds it for its life; the hook shim and the clients
only ask whether someone holds it (a daemon running or starting) — and asking never takes it,
so a probe can never make a starting daemon believe another one runs.

On Linux the lock is an open-file-description lock (``F_OFD_SETLK``) and the question is
``F_OFD_GETLK``, which reports a holder without locking. Elsewhere it is ``flock``; there the
question has to take the lock for an instant, so ``acquire`` retries for a moment before it
concludes that another daemon holds it. The kernel drops either lock when its holder dies.
Standard library only.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
import time
from pathlib import Path

_OFD = hasattr(fcntl, "F_OFD_SETLK")
# struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks), padding.
_FLOCK = "hhqqi4x"
RETRY_S = 0.5


HELD_BY_ANOTHER = "another lintaid daemon holds"


class AlreadyRunning(Exception):
    """Another process holds the project's daemon lock."""


def _request(kind: int) -> bytes:
    return struct.pack(_FLOCK, kind, os.SEEK_SET, 0, 0, 0)


def _try_lock(fd: int) -> bool:
    try:
        if _OFD:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _request(fcntl.F_WRLCK))
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        if err.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise
    return True


def acquire(path: Path, retry_s: float = RETRY_S) -> int:
    """Take the lock and return its fd; AlreadyRunning when another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + (0.0 if _OFD else retry_s)
    while not _try_lock(fd):
        if time.monotonic() >= deadline:
            os.close(fd)
            raise AlreadyRunning(f"{HELD_BY_ANOTHER} {path}")
        time.sleep(0.01)  # a flock probe holds the lock for microseconds
    return fd


def release(fd: int) -> None:
    try:
        if _OFD:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _request(fcntl.F_UNLCK))
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def is_held(path: Path) -> bool:
    """True when some process holds the lock at ``path`` (a daemon running or starting)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        if _OFD:
            answer = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, _request(fcntl.F_WRLCK))
            return bool(struct.unpack(_FLOCK, answer)[0] != fcntl.F_UNLCK)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except OSError:
        return False
    finally:
        os.close(fd)
