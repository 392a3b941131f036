"""Judging what a SessionStart will ask about before a session starts.

A SessionStart names the memories most likely out of date, which means judging up to
``MAX_VERIFY_CANDIDATES`` records' staleness, and the evidence for that is what costs: read
fresh it is about half of the hook's time at 100,000 records. The store keeps evidence until
its next write (``store.cache``), so the daemon judges once the writes have settled
(``quiet_s`` after the last commit), off every request's path: the next session to start finds
the evidence kept and reads the same answer. A write during the wait waits again, so a burst
of captures costs one judgement; with nothing written the thread sleeps (no timer).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final

from .logs import get_logger

QUIET_S: Final = 2.0
log = get_logger("lintaid.warm")


class Warmer:
    def __init__(self, compute: Callable[[], Any], quiet_s: float = QUIET_S) -> None:
        self.compute = compute
        self.quiet_s = quiet_s
        self._poked = threading.Event()
        self._stopping = False
        self.warmed = threading.Event()  # set after each judgement (for tests)
        self._thread = threading.Thread(target=self._run, name="lintaid-warm", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def poke(self) -> None:
        """A commit happened (the writer's thread): judge again once writes settle."""
        self._poked.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping = True
        self._poked.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            self._poked.wait()
            while not self._stopping:  # until quiet_s pass with no commit
                self._poked.clear()
                if not self._poked.wait(self.quiet_s):
                    break
            if self._stopping:
                return
            try:
                self.compute()
            except Exception as err:  # a closing store, a damaged file: the hook reads fresh
                log.info("warm_skipped", error=type(err).__name__)
            self.warmed.set()
