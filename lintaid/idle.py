"""When an idle daemon rests, and when it stops.

Idle means no request (from a hook, the CLI, the MCP shim, the viewer; ``ping`` and
``status`` only look, so they do not count) and no pending work (``busy`` names it: the
writer's queue, requests still running, a workspace reconcile, spooled events). After
``rest_after_s`` of it the daemon lets go of what keeps waking it while nothing happens (the
Tantivy indexes: each open one polls its ``meta.json`` twice a second); after
``exit_after_s`` (0: never) it stops, the same way ``lintaid stop`` stops it. The next hook
event or command starts it again (the hooks spool the event meanwhile).

Only the request loop's thread calls ``due``; ``touch`` may come from any thread.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import time
from collections.abc import Callable
from typing import Final, Literal

REST_AFTER_S: Final = 60.0
BUSY_RECHECK_S: Final = 10.0  # while work is pending, look again this often
RETIRE_GRACE_S: Final = 0.25  # between hiding the socket and stopping: answer what came

Due = Literal["rest", "retire", "stop"]
OBSERVING_OPS: Final = frozenset({"ping", "status"})


class Idle:
    def __init__(self, exit_after_s: float, busy: Callable[[], str | None], *,
                 rest_after_s: float = REST_AFTER_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.exit_after_s = max(0.0, exit_after_s)
        self.rest_after_s = rest_after_s
        self.busy = busy
        self._clock = clock
        self._last = clock()
        self._rested = False
        self._recheck: float | None = None  # work was pending: look again then
        self._stop_at: float | None = None  # retiring: stop then
        self.resting = False  # the indexes were let go (reopened by the next use)

    def touch(self) -> None:
        """A request came (any thread)."""
        self._last = self._clock()
        self._rested = self.resting = False

    def request(self, op: str) -> None:
        if op not in OBSERVING_OPS:
            self.touch()

    def timeout(self) -> float | None:
        """Seconds until ``due`` has something to say; None when nothing is ever due."""
        if self._stop_at is not None:
            return max(0.0, self._stop_at - self._clock())
        marks = [m for m in (self._recheck,
                             None if self._rested else self._last + self.rest_after_s,
                             self._last + self.exit_after_s if self.exit_after_s else None)
                 if m is not None]
        return max(0.0, min(marks) - self._clock()) if marks else None

    def due(self) -> Due | None:
        """What is due now: ``rest`` (let go of the indexes), ``retire`` (hide the socket,
        answer what is in flight), then ``stop``; None when nothing is."""
        left = self.timeout()
        if left is None or left > 0:
            return None
        now = self._clock()
        if self._stop_at is not None:
            return "stop"
        if self.busy() is not None:  # pending work counts as activity
            self._last, self._recheck = now, now + BUSY_RECHECK_S
            self._rested = self.resting = False
            return None
        self._recheck = None
        if self.exit_after_s and now >= self._last + self.exit_after_s:
            self._stop_at = now + RETIRE_GRACE_S
            return "retire"
        if not self._rested and now >= self._last + self.rest_after_s:
            self._rested = self.resting = True
            return "rest"
        return None

    def stops_at(self) -> float | None:
        """When (wall clock) the daemon stops if nothing comes before; None: never."""
        if not self.exit_after_s:
            return None
        left = self._last + self.exit_after_s - self._clock()
        return time.time() + max(0.0, left)


def release_free_memory() -> None:
    """Hand the heap's free pages back to the system (glibc's ``malloc_trim``; elsewhere
    nothing): what the closed indexes and writers freed stays in the process otherwise."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        pass
