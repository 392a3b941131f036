"""Drain the spool: events the shims could not hand over, replayed through the normal path.

A spooled file is removed only after its records are committed; a file that cannot be read
as an event is moved to ``spool/rejected/`` (kept, logged), never silently lost. Replays are
harmless because record ids derive from content and provenance.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from lintaid_client import protocol, spool
from lintaid_client.redact import redact, redact_value

if TYPE_CHECKING:
    from .integrations.hooks import Hooks

log = structlog.get_logger("lintaid.spool")
POLL_SECONDS = 0.25


class SpoolDrainer:
    def __init__(self, root: Path, hooks: Hooks) -> None:
        self.root = root
        self.hooks = hooks
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lintaid-spool", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.drain_once()
            except Exception as err:  # keep draining on the next tick
                log.error("spool_drain_failed", error=str(err), exc_info=err)
            self._stop.wait(POLL_SECONDS)

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
                future = self.hooks.handle(
                    str(args.get("provider")), str(args.get("event")), args.get("payload") or {},
                    inject=False,
                )
            except Exception as err:
                self._reject(path, err)
                continue
            futures.append((path, future))
        done = 0
        for path, future in futures:
            try:
                future.result(timeout=60)
            except Exception as err:
                self._reject(path, err)
                continue
            path.unlink(missing_ok=True)
            done += 1
        if done:
            log.info("spool_drained", events=done)
        return done

    def _reject(self, path: Path, err: BaseException) -> None:
        """Keep a redacted copy for a person to look at; secrets must not stay on disk."""
        rejected = path.parent / "rejected"
        rejected.mkdir(exist_ok=True, mode=0o700)
        try:
            raw = path.read_bytes()
            try:
                kept = protocol.pack(redact_value(protocol.unpack(raw)))
            except (ValueError, TypeError):
                kept = redact(raw.decode("utf-8", "replace")).encode()
            (rejected / path.name).write_bytes(kept)
            path.unlink(missing_ok=True)
        except OSError:
            pass
        log.warning("spool_event_rejected", file=path.name, error=str(err))
