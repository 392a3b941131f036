"""What open pages wait on: a counter of committed writes.

The writer calls ``changed`` after every committed batch (``Writer.add_flusher``); each
live-update stream waits in ``wait`` for the counter to move, so a new capture reaches an
open timeline without polling the store.
"""

from __future__ import annotations

import threading


class Changes:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.generation = 0
        self.closed = False

    def changed(self) -> None:
        with self._cond:
            self.generation += 1
            self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> int:
        """The generation once it differs from ``seen``, the viewer stops, or ``timeout``
        seconds pass (whichever comes first)."""
        with self._cond:
            self._cond.wait_for(lambda: self.generation != seen or self.closed, timeout)
            return self.generation

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()
