"""Hook events from any agent client: turn them into records and injected context.

Transcript reading happens on a small preparation pool, never on the request loop; writes go
through the writer. The reply to a capture is sent only once its records are committed.
"""

from __future__ import annotations

import hashlib
import stat
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

import structlog

from lintaid_client import protocol

from ..capture import git
from ..capture.record import NewRecord
from ..ops import OpError
from ..search import SearchRequest, search
from . import claude_code

if TYPE_CHECKING:
    from ..daemon import Daemon

T = TypeVar("T")
U = TypeVar("U")
log = structlog.get_logger("lintaid.hooks")

PROVIDERS: dict[str, ModuleType] = {"claude-code": claude_code}
MAX_HASHED_FILE = 1024 * 1024


def then(future: Future[T], fn: Callable[[T], U]) -> Future[U]:
    """Return a future of ``fn(result)``, failing with the first future's error."""
    out: Future[U] = Future()

    def done(f: Future[T]) -> None:
        err = f.exception()
        if err is not None:
            out.set_exception(err)
            return
        try:
            out.set_result(fn(f.result()))
        except Exception as exc:
            out.set_exception(exc)

    future.add_done_callback(done)
    return out


class Hooks:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="lintaid-prepare")

    def close(self) -> None:
        self.pool.shutdown(wait=True)

    def handle(self, provider: str, event: str, payload: dict[str, Any], *,
               inject: bool = True) -> Future[dict[str, Any]]:
        adapter = PROVIDERS.get(provider)
        if adapter is None:
            raise OpError(protocol.BAD_REQUEST, f"unknown provider {provider!r}; known: {', '.join(PROVIDERS)}")
        output: dict[str, Any] = {}
        if inject and event in adapter.INJECT_EVENTS:
            output = self.inject(adapter, event, payload)
        if event in adapter.CAPTURE_EVENTS:
            prepared = self.pool.submit(self.prepare, adapter, event, payload)
            written = _flatten(then(prepared, self.write))
        else:  # prompt records are cheap to build: no transcript to read
            written = self.write(self.prepare(adapter, event, payload))
        return then(written, lambda ids: {"output": output, "captured": ids})

    def prepare(self, adapter: ModuleType, event: str, payload: dict[str, Any]) -> list[NewRecord]:
        records: list[NewRecord] = adapter.records_for_event(event, payload)
        for rec in records:
            rec.file_hashes = self.file_hashes(rec.paths, rec.cwd)
        return records

    def write(self, records: list[NewRecord]) -> Future[list[str]]:
        store = self.daemon.store

        def job() -> list[str]:
            return [store.put(rec, actor=f"hook:{rec.provider}")[0] for rec in records]

        if not records:
            done: Future[list[str]] = Future()
            done.set_result([])
            return done
        return self.daemon.writer.submit(job)

    def inject(self, adapter: ModuleType, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        query = adapter.query_for_event(event, payload)
        if not query:
            return {}
        top_k = self.daemon.config.inject_top_k
        result = search(self.daemon.searcher, SearchRequest(
            query=query, top_k=top_k * 3, exclude_kinds=["prompt"]))
        hits = spread_sessions(result["results"], top_k)
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else str(self.daemon.root)
        branch, revision = git.git_state(cwd)
        return adapter.format_injection(
            event, hits, current_branch=branch, current_revision=revision,
            cwd=cwd, query=query, max_records=self.daemon.config.inject_top_k,
            max_bytes=self.daemon.config.inject_max_bytes,
        )

    def file_hashes(self, rec_paths: list[str], cwd: str | None) -> dict[str, str]:
        """Hash each named file as it is now, so a later search can say it changed."""
        root = self.daemon.root
        out: dict[str, str] = {}
        for name in rec_paths[:50]:
            path = Path(name)
            if not path.is_absolute():
                path = Path(cwd or root) / path
            try:
                path = path.resolve()
                rel = path.relative_to(root)
                st = path.stat()
                if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_HASHED_FILE:
                    continue  # a FIFO or device must never block a capture
                out[str(rel)] = hashlib.sha256(path.read_bytes()).hexdigest()
            except (OSError, ValueError):
                continue
        return out


PER_SESSION = 2


def spread_sessions(hits: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """At most PER_SESSION hits from one agent session, so one long session whose every turn
    matches cannot crowd out every other session's memories; best first, order kept."""
    seen: dict[str, int] = {}
    out = []
    for hit in hits:
        session = hit.get("session_id") or hit["id"]
        if seen.get(session, 0) >= PER_SESSION:
            continue
        seen[session] = seen.get(session, 0) + 1
        out.append(hit)
        if len(out) == limit:
            break
    return out


def _flatten(future: Future[Future[T]]) -> Future[T]:
    out: Future[T] = Future()

    def outer(f: Future[Future[T]]) -> None:
        err = f.exception()
        if err is not None:
            out.set_exception(err)
            return
        inner = f.result()
        inner.add_done_callback(
            lambda g: out.set_exception(g.exception()) if g.exception() else out.set_result(
                g.result())
        )

    future.add_done_callback(outer)
    return out

