"""Request ids for the HTTP API: a change sent again with the same ``Idempotency-Key`` is
answered as the first time, not made twice (a client that lost the answer may retry).

The key names one request: the same key with another method, path or body is refused (422),
and the same key while the first request still runs is answered 409 (retry once it has). Only
answers that were made are kept (2xx): a refusal or a failure changed nothing, so a retry runs
again. Kept in the daemon's memory, the newest ``size`` keys for ``ttl_s``: a daemon that
restarts forgets them.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

MAX_KEY_BYTES: Final = 200
KEPT: Final = 10_000
TTL_S: Final = 24 * 3600.0


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes


@dataclass
class _Entry:
    fingerprint: str
    at: float
    answer: Answer | None = None  # None: the first request is still running


class Replays:
    def __init__(self, size: int = KEPT, ttl_s: float = TTL_S) -> None:
        self.size = size
        self.ttl_s = ttl_s
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def fingerprint(method: str, path: str, query: str, body: bytes) -> str:
        digest = hashlib.sha256()
        for part in (method.encode(), path.encode(), query.encode()):
            digest.update(len(part).to_bytes(8, "big") + part)
        digest.update(body)
        return digest.hexdigest()

    def begin(self, key: str, fingerprint: str) -> Answer | str | None:
        """None: run the request (then ``finish`` or ``abandon`` it); an ``Answer``: the one
        to send again; ``"running"`` or ``"other"``: the key is held by a request still
        running, or by another request."""
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.answer is not None and now - entry.at > self.ttl_s:
                del self._entries[key]
                entry = None
            if entry is None:
                self._entries[key] = _Entry(fingerprint, now)
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
                return None
            if entry.fingerprint != fingerprint:
                return "other"
            if entry.answer is None:
                return "running"
            return entry.answer

    def finish(self, key: str, answer: Answer) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                entry.answer, entry.at = answer, time.monotonic()

    def abandon(self, key: str) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.answer is None:
                del self._entries[key]
