"""Wait until a file lands in one of a few folders, without a timer.

On Linux an inotify descriptor (through libc, no thread of its own) watches the folders for
files moved or written into them (a folder that does not exist yet: its nearest existing
parent, for its creation; the watches are renewed after every event); ``wait`` sleeps in
``select`` on it and on a pipe that ``wake`` writes to. Elsewhere, or when nothing can be
watched, ``wait`` comes back every ``poll_s`` instead, so nothing is missed, only noticed
later.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import sys
from pathlib import Path
from typing import Final

IN_CLOSE_WRITE: Final = 0x008
IN_MOVED_TO: Final = 0x080
IN_CREATE: Final = 0x100
IN_DELETE_SELF: Final = 0x400
IN_MOVE_SELF: Final = 0x800
IN_NONBLOCK: Final = os.O_NONBLOCK
IN_CLOEXEC: Final = 0o2000000


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:
        return None


class FolderEvents:
    """``wait(timeout)``: True when something may have landed (or ``wake`` was called)."""

    def __init__(self, folders: list[Path], poll_s: float) -> None:
        self.poll_s = poll_s
        self._wake_r, self._wake_w = os.pipe()
        for fd in (self._wake_r, self._wake_w):
            os.set_blocking(fd, False)
        self._fd = -1
        self._folders = folders
        self._libc = _libc()
        if self._libc is not None:
            self._fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        self.watching = self._watch()

    def _watch(self) -> bool:
        """(Re)add a watch on each folder, or on its nearest existing parent; False when
        one cannot be watched at all."""
        if self._libc is None or self._fd < 0:
            return False
        mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF
        for folder in self._folders:
            target = folder
            while not target.is_dir() and target.parent != target:
                target = target.parent
            if self._libc.inotify_add_watch(self._fd, os.fsencode(target), mask) < 0:
                return False
        return True

    def wait(self, timeout: float | None) -> bool:
        """Sleep until a file may have landed, ``wake``, or ``timeout`` (None: no limit,
        while watching; ``poll_s`` when not)."""
        if not self.watching:
            timeout = self.poll_s if timeout is None else min(timeout, self.poll_s)
        fds = [self._wake_r] + ([self._fd] if self._fd >= 0 and self.watching else [])
        try:
            ready = select.select(fds, [], [], timeout)[0]
        except InterruptedError:
            return True
        if self._wake_r in ready:
            _drain(self._wake_r)
        if self._fd in ready:
            self._read_events()
            self.watching = self._watch()  # a folder made, or one gone: watch what is there
        return bool(ready) or not self.watching

    def _read_events(self) -> None:
        while True:
            try:
                if not os.read(self._fd, 65536):
                    return
            except (BlockingIOError, InterruptedError):
                return

    def wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass  # full: a wake-up is due anyway (or closed: stopping)

    def close(self) -> None:
        for fd in (self._fd, self._wake_r, self._wake_w):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._fd = -1


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except (BlockingIOError, InterruptedError):
        pass
