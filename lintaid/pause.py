"""Pause: while paused, hooks capture and inject nothing (they still answer at once).

The daemon holds the state and keeps it in ``.lint-ai/pause.json`` (private, written
atomically), so a restart keeps a pause until it runs out. A pause covers everything, or one
agent session; each has a start and, unless it lasts until ``resume``, an end. An event is
judged by the time it happened (a spooled event by when it was spooled), so what happened
before a pause is still captured when it is drained during one.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lintaid.logs import get_logger

from .files import write_atomic

log = get_logger("lintaid.pause")


@dataclass(frozen=True)
class Span:
    since: float
    until: float | None = None  # None: until resumed

    def covers(self, at: float) -> bool:
        return self.since <= at and (self.until is None or at < self.until)

    def over(self, now: float) -> bool:
        return self.until is not None and self.until <= now


class PauseState:
    """The pause of one project: everything, and per agent session. Thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._all: Span | None = None
        self._sessions: dict[str, Span] = {}
        self._load()

    # -- questions ---------------------------------------------------------------------------
    def paused(self, session_id: str | None, at: float | None = None) -> bool:
        """Whether an event of ``session_id`` at time ``at`` (default now) falls in a pause."""
        when = time.time() if at is None else at
        with self._lock:
            if self._all is not None and self._all.covers(when):
                return True
            span = self._sessions.get(session_id) if session_id else None
            return span is not None and span.covers(when)

    def to_dict(self, now: float | None = None) -> dict[str, Any]:
        """``{"paused": bool, "all": span | None, "sessions": {id: span}}``, ended spans left
        out; ``paused`` says whether everything is paused now."""
        now = time.time() if now is None else now
        with self._lock:
            whole = self._all if self._all is not None and not self._all.over(now) else None
            sessions = {sid: asdict(span) for sid, span in self._sessions.items()
                        if not span.over(now)}
        return {"paused": whole is not None,
                "all": asdict(whole) if whole else None, "sessions": sessions}

    # -- changes -----------------------------------------------------------------------------
    def pause(self, seconds: float | None, session_id: str | None = None,
              now: float | None = None) -> dict[str, Any]:
        now = time.time() if now is None else now
        span = Span(since=now, until=now + seconds if seconds else None)
        with self._lock:
            if session_id:
                self._sessions[session_id] = span
            else:
                self._all = span
            self._save(now)
        log.info("paused", session_id=session_id, until=span.until)
        return {"paused": True, "session_id": session_id, **asdict(span)}

    def resume(self, session_id: str | None = None,
               now: float | None = None) -> dict[str, Any]:
        """End the pause of ``session_id``, or every pause; ``resumed`` says whether one was
        in force."""
        now = time.time() if now is None else now
        with self._lock:
            if session_id:
                span = self._sessions.pop(session_id, None)
                was = span is not None and not span.over(now)
            else:
                live = [s for s in (self._all, *self._sessions.values())
                        if s is not None and not s.over(now)]
                was = bool(live)
                self._all, self._sessions = None, {}
            self._save(now)
        log.info("resumed", session_id=session_id, was_paused=was)
        return {"resumed": was, "session_id": session_id}

    # -- the file ------------------------------------------------------------------------------
    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            whole = data.get("all")
            self._all = Span(**whole) if whole else None
            self._sessions = {str(k): Span(**v) for k, v in (data.get("sessions") or {}).items()}
        except FileNotFoundError:
            return
        except (OSError, ValueError, TypeError, AttributeError) as err:
            log.error("pause_file_unreadable", path=str(self.path), error=str(err))
            self._all, self._sessions = None, {}

    def _save(self, now: float) -> None:
        """Write what is still in force, atomically (0600); remove the file when nothing is."""
        if self._all is not None and self._all.over(now):
            self._all = None
        self._sessions = {k: v for k, v in self._sessions.items() if not v.over(now)}
        if self._all is None and not self._sessions:
            self.path.unlink(missing_ok=True)
            return
        data = {"all": asdict(self._all) if self._all else None,
                "sessions": {k: asdict(v) for k, v in self._sessions.items()}}
        write_atomic(self.path, json.dumps(data))
