"""Drain the spool: events the shims could not hand over, replayed through the normal path.

A spooled file is removed only after its records are committed. A failure that may pass (disk
full, the daemon stopping) leaves the file where it is and the drainer tries again later,
backing off; only a permanent one (a file that is not an event, an event the daemon refuses)
moves the file to ``spool/rejected/`` with the reason beside it, redacted, never silently lost.
Replays are harmless because record ids derive from content and provenance.

Between passes the drainer sleeps until a file lands in a spool folder (``FolderEvents``:
inotify on Linux; elsewhere it looks every ``POLL_SECONDS``), or until its backoff runs out.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from lintaid.logs import get_logger
from lintaid_client import protocol, spool
from lintaid_client.redact import redact, redact_value

from .folder_events import FolderEvents
from .ops import error_code

log = get_logger("lintaid.spool")
POLL_SECONDS = 0.25
MAX_BACKOFF_SECONDS = 30.0
WAIT_SECONDS = 120.0
MAX_ATTEMPTS = 5  # an event failing unexpectedly this often is set aside, not retried for ever

HandleHook = Callable[..., "Future[Any]"]


class SpoolDrainer:
    def __init__(self, root: Path, handle: HandleHook) -> None:
        self.root = root
        self.handle = handle
        self._stop = threading.Event()
        self._events: FolderEvents | None = None
        self._thread = threading.Thread(target=self._run, name="lintaid-spool", daemon=True)
        self.backoff = 0.0
        self.last_error: str | None = None
        self._attempts: dict[str, int] = {}  # failed replays per spool file

    def start(self) -> None:
        self._events = FolderEvents(spool.folders(self.root), POLL_SECONDS)
        self._thread.start()

    def wake(self) -> None:
        """Look at the spool now (any thread)."""
        if self._events is not None:
            self._events.wake()

    def stop(self) -> None:
        self._stop.set()
        self.wake()
        if self._thread.is_alive():
            self._thread.join(30)
        if self._events is not None:
            self._events.close()

    def _run(self) -> None:
        assert self._events is not None
        while not self._stop.is_set():
            try:
                self.drain_once()
            except Exception as err:  # keep draining on the next pass
                log.error("spool_drain_failed", error=str(err), exc_info=err)
            if self.backoff:  # what failed may pass: try again then, not at each new file
                self._stop.wait(self.backoff)
            else:
                self._events.wait(None)

    def drain_once(self) -> int:
        files = spool.pending(self.root)
        if not files:
            return 0
        futures = []
        for path in files:
            if self._stop.is_set():
                break
            try:
                message = spool.read(path)
                args = message["args"]
                spooled_at = message.get("spooled_at")
            except ValueError as err:  # not an event at all: no retry can change that
                self._reject(path, f"bad_request: not a spooled event ({err})")
                continue
            except OSError as err:  # unreadable for now (a full or failing disk)
                if self._transient(path, err):
                    return 0
                continue
            try:
                future = self.handle(str(args.get("provider")), str(args.get("event")),
                                     args.get("payload") or {}, inject=False,
                                     at=float(spooled_at) if isinstance(spooled_at, (int, float)) else None)
            except Exception as err:
                if self._transient(path, err):
                    return 0
                continue
            futures.append((path, future))
        done = 0
        for path, future in futures:
            try:
                future.result(timeout=WAIT_SECONDS)
            except Exception as err:
                if self._transient(path, err):
                    break
                continue
            path.unlink(missing_ok=True)
            self._attempts.pop(path.name, None)
            done += 1
        if done:
            self.backoff = 0.0
            self.last_error = None
            log.info("spool_drained", events=done)
        return done

    def _transient(self, path: Path, err: BaseException) -> bool:
        """Back off on a failure that may pass (True); reject the event otherwise.

        Events replay in order, so a transient failure holds the ones behind it; an event
        that keeps failing with an unexpected error (a bug, not the disk) is rejected after
        ``MAX_ATTEMPTS``, so it cannot hold the spool for ever.
        """
        code, message, _arg = error_code(err)
        attempts = self._attempts[path.name] = self._attempts.get(path.name, 0) + 1
        if code == protocol.INTERNAL and attempts >= MAX_ATTEMPTS:
            self._attempts.pop(path.name, None)
            self._reject(path, f"{code}: failed {attempts} times: {message}")
            return False
        if code in protocol.RETRYABLE or isinstance(err, TimeoutError):
            self.backoff = min(MAX_BACKOFF_SECONDS, max(1.0, self.backoff * 2))
            self.last_error = message
            log.warning("spool_retry_later", file=path.name, error=message,
                        backoff_s=self.backoff)
            return True
        self._reject(path, f"{code}: {message}")
        return False

    def _reject(self, path: Path, reason: str) -> None:
        """Keep a redacted copy and the reason for a person to look at."""
        rejected = path.parent / "rejected"
        rejected.mkdir(exist_ok=True, mode=0o700)
        try:
            try:
                kept = json.dumps(redact_value(spool.read(path))).encode()
            except (ValueError, TypeError):
                kept = redact(path.read_bytes().decode("utf-8", "replace")).encode()
            (rejected / path.name).write_bytes(kept)
            (rejected / (path.name + ".reason")).write_text(
                json.dumps({"reason": redact(reason)}) + "\n")
            path.unlink(missing_ok=True)
        except OSError:
            pass
        log.warning("spool_event_rejected", file=path.name, error=reason)
