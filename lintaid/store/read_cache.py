"""Values read from memory.db that stay true until its next transaction.

The store counts its transactions (``generation``: one step as a transaction begins and one as
it ends, so a value read while one is open is never kept past it). A value is kept with the
generation it was read at and given out only while the generation is the same: any write
(a capture, a forget, a team pull, derivation) makes every kept value go. What is kept is
bounded (``limit`` values per kind); a kind that overflows starts again empty.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any


class ReadCache:
    def __init__(self, generation: Callable[[], int], limit: int = 20_000) -> None:
        self._generation = generation
        self.limit = limit
        self._lock = threading.Lock()
        self._at = -1  # the generation the kept values were read at
        self._kinds: dict[str, dict[Any, Any]] = {}

    def now(self) -> int:
        """The generation to read at: pass it to ``keep`` with what was read."""
        return self._generation()

    def found(self, kind: str, keys: Iterable[Any]) -> dict[Any, Any]:
        """The kept values among ``keys`` that are still true."""
        with self._lock:
            if self._at != self._generation():
                return {}
            kept = self._kinds.get(kind, {})
            return {k: kept[k] for k in keys if k in kept}

    def keep(self, kind: str, generation: int, values: Mapping[Any, Any]) -> None:
        """Keep ``values`` read at ``generation``, unless the store has moved on since."""
        with self._lock:
            if generation != self._generation():
                return
            if self._at != generation:
                self._at, self._kinds = generation, {}
            kept = self._kinds.setdefault(kind, {})
            if len(kept) + len(values) > self.limit:
                kept.clear()
            kept.update(values)

    def clear(self) -> None:
        with self._lock:
            self._at, self._kinds = -1, {}
