"""The store's clock: "newer" means a later stamp from a hybrid logical clock.

A stamp is epoch seconds (a float, so it reads as a time and sorts as one) made of a physical
part in milliseconds and a logical counter below it: ``(ms + counter / 1000) / 1000``. Each
stamp is later than every stamp this clock made or saw before, even when the wall clock steps
back; it stays within a few milliseconds of the wall clock otherwise, and stamps from other
machines (the team tier) are comparable because their physical parts are. Wall time is for
display and time queries; the policy orders by stamps.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

COUNTER_LIMIT = 1000  # logical steps per millisecond before the physical part moves on


class HybridClock:
    def __init__(self, last: float = 0.0, wall: Callable[[], float] = time.time) -> None:
        self._wall = wall
        self._lock = threading.Lock()
        self._ms, self._counter = _split(last)

    def now(self) -> float:
        """A stamp later than every earlier one."""
        with self._lock:
            wall_ms = math.floor(self._wall() * 1000)
            if wall_ms > self._ms:
                self._ms, self._counter = wall_ms, 0
            else:
                self._counter += 1
                if self._counter >= COUNTER_LIMIT:
                    self._ms, self._counter = self._ms + 1, 0
            return _join(self._ms, self._counter)

    def observe(self, stamp: float) -> None:
        """Take in a stamp made elsewhere (a stored record, another machine): every later
        ``now()`` comes after it."""
        if not math.isfinite(stamp):
            return
        ms, counter = _split(stamp)
        with self._lock:
            if (ms, counter) > (self._ms, self._counter):
                self._ms, self._counter = ms, counter

    @property
    def last(self) -> float:
        with self._lock:
            return _join(self._ms, self._counter)


def _split(stamp: float) -> tuple[int, int]:
    micros = round(max(stamp, 0.0) * 1_000_000)
    return micros // 1000, micros % 1000


def _join(ms: int, counter: int) -> float:
    return (ms * 1000 + counter) / 1_000_000
