"""The workspace: project files kept searchable and policy-stated while the daemon runs.

Division of labour (the design's one-writer rule): the watcher's worker thread lists, stats,
reads, chunks and hashes files and extracts their policy text; it then submits one job per
batch to the single writer, which alone writes workspace.db and the workspace index. Reconciles
run on that same worker, so a reconcile and an event batch never race each other's reads.

With ``memory`` (the daemon's memory store), each such job also derives again the memory
chains whose decision documents' claims it changed (``lintaid.derivation.apply_files``); the
writer must read memory against this workspace's store (``Writer.link_documents``).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import threading
import time
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Final, TypeVar

from lintaid.derivation import DERIVED_VERSION, apply_files, rebuild_workspace
from lintaid.logs import get_logger
from lintaid.store.index import Terms
from lintaid.store.memory import MemoryStore
from lintaid.store.workspace import (
    ApplyResult,
    ChunkRow,
    FileUpdate,
    Fingerprint,
    WorkspaceStore,
)

from .chunking import chunk_file, decode
from .documents import is_document, link_candidates, policy_text
from .ignore import IgnoreRules
from .secrets import mostly_secrets, redact_keeping_lines
from .thirdparty import MIN_COPY_BYTES, REASONS, ThirdParty
from .watcher import Batch, Watcher

T = TypeVar("T")
Submit = Callable[..., "Future[Any]"]  # the writer's submit(job, *, background=...)

JOB_FILES: Final = 256  # files per writer job during a reconcile: keeps each job short
LOG_PATHS: Final = 20  # paths listed per category in a log line; counts are always complete
WAIT_S: Final = 600.0
HASH_CHUNK: Final = 1 << 20

log = get_logger("lintaid.workspace")


class Workspace:
    def __init__(self, root: Path, submit: Submit,
                 excluded: Iterable[Path | str] = (), memory: MemoryStore | None = None) -> None:
        self.root = root.resolve()
        self.submit = submit
        self.memory = memory
        self.rules = IgnoreRules(self.root, excluded=excluded)
        self.third_party = ThirdParty(self.root, self.rules.git)
        # Files left out as third-party at the last reconcile, by reason (``thirdparty``).
        self.skipped_third_party: dict[str, int] = dict.fromkeys(REASONS, 0)
        self.store = WorkspaceStore(self.root, derived_version=DERIVED_VERSION)
        self.ready = threading.Event()
        self.last_reconcile: dict[str, Any] = {}
        self.progress: dict[str, Any] = {"done": 0, "total": 0, "running": False}
        self.last_error: str | None = None
        self.watcher = Watcher(self.root, self._on_batch, on_restart=self._on_watcher_restart)
        self._stopped = False

    # -- life cycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Return at once; the watcher starts and the first reconcile runs in the background."""
        self.watcher.start()
        self.watcher.run_on_worker(self._initial_reconcile)

    def _initial_reconcile(self) -> None:
        try:
            self._reconcile(full=False, reason="start")
        except _Stopped:
            log.info("workspace_reconcile_aborted", reason="stopping")
        except Exception as err:
            self.last_error = str(err)
            log.error("workspace_reconcile_failed", error=str(err), exc_info=err)
        finally:
            self.ready.set()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self.watcher.stop()
        # The index writer belongs to the writer thread: close it there when the writer runs.
        try:
            self.submit(self.store.close).result(timeout=60)
        except Exception:  # the writer has stopped (or is stuck): close from here
            self.store.close()

    def flush(self) -> None:
        """Writer thread, after every committed batch: bring the index in step if needed."""
        if not self.store.closed and self.store.dirty:
            self.store.flush_index()

    # -- operations ---------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        counts = self.store.counts() if not self.store.closed else {}
        return {
            **counts,
            "ready": self.ready.is_set(),
            "watcher_mode": self.watcher.mode,
            "watcher_alive": self.watcher.alive,
            "watcher_restarts": self.watcher.restarts,
            "last_event_at": self.watcher.last_event_at,
            "queue_depth": self.watcher.queue_depth,
            "batches": self.watcher.batches,
            "reindexed": dict(self.last_reconcile),
            "progress": dict(self.progress),
            "git": self.rules.git,
            "max_file_bytes": self.rules.max_file_bytes,
            "third_party": dict(self.skipped_third_party),
            "error": self.last_error,
            "integrity": self.store.integrity,
            "recovered": self.store.recovered,
        }

    def reindex(self, full: bool = False) -> Future[dict[str, Any]]:
        """Reconcile with the files (or, ``full``, re-read and re-index them all).

        Returns a future; ``status()["progress"]`` counts files as the scan goes.
        """
        return self.watcher.run_on_worker(
            lambda: self._reconcile(full=bool(full), reason="reindex"))

    def search_hits(self, query: str, limit: int, *,
                    history: bool) -> tuple[list[dict[str, Any]], int]:
        if self.store.closed:
            return [], 0
        return self.store.search(query, limit, history=history)

    def terms(self, words: list[str]) -> Terms | None:
        """The query's words as the workspace index weighs them."""
        return None if self.store.closed else self.store.terms(words)

    def current_claims(self, limit: int) -> list[dict[str, Any]]:
        return [] if self.store.closed else self.store.current_claims(limit)

    def retired_since(self, since: float, limit: int) -> list[dict[str, Any]]:
        return [] if self.store.closed else self.store.retired_since(since, limit)

    def conflicts(self, limit: int) -> list[dict[str, Any]]:
        return [] if self.store.closed else self.store.conflicts(limit)

    def claims_by_id(self, claim_ids: Collection[str]) -> list[dict[str, Any]]:
        return [] if self.store.closed else self.store.claims_by_id(claim_ids)

    def pages(self) -> list[dict[str, Any]]:
        """The indexed documents, chunk by chunk (``WorkspaceStore.document_rows``)."""
        return [] if self.store.closed else self.store.document_rows()

    def file_states(self, paths: Iterable[str]) -> dict[str, dict[str, Any]]:
        return {} if self.store.closed else self.store.file_states(paths)

    def exists(self, rel: str) -> bool:
        """Whether ``rel`` (relative, posix) is a project file or folder: indexed, or on
        disk under the root (an image, a file the index leaves out) without leaving it."""
        norm = posixpath.normpath(rel) if rel else "."
        if norm == ".":
            return True
        if norm.startswith("../") or norm == ".." or posixpath.isabs(norm):
            return False
        if not self.store.closed and self.store.has_path(norm):
            return True
        try:
            (self.root / norm).resolve().relative_to(self.root)
        except (OSError, ValueError):
            return False
        return os.path.lexists(self.root / norm)

    def changed_since(self, file_hashes: dict[str, str]) -> list[str]:
        """Paths whose content now differs from the sha256 given (deleted files included).

        The stored hash is trusted only while size and mtime still match the disk; otherwise
        the file is hashed afresh, so a change the watcher has not processed yet still counts.
        """
        rels = {self._normalise(p): (p, h) for p, h in file_hashes.items()}
        stored = self.store.fingerprints_for([r for r in rels if r]) if rels else {}
        out = []
        for rel, (given, digest) in rels.items():
            if not rel:
                continue
            current = self._current_hash(rel, stored.get(rel))
            if current != digest:
                out.append(given)
        return sorted(out)

    # -- reconcile (worker thread) -------------------------------------------------------------------
    def _reconcile(self, *, full: bool, reason: str) -> dict[str, Any]:
        started = time.monotonic()
        stored = self.store.fingerprints()
        listed = self.rules.list_files()
        self.third_party.prepare(listed, self._digest)
        self.skipped_third_party = dict.fromkeys(REASONS, 0)
        seen: set[str] = set()
        hashed = 0
        futures: list[Future[ApplyResult]] = []
        updates: list[FileUpdate] = []
        self.progress = {"reason": reason, "done": 0, "total": len(listed), "running": True}
        for rel in listed:
            self.progress["done"] += 1
            if self._stopped:  # a partial scan must never be taken for the whole tree
                raise _Stopped
            st = self.rules.stat_file(rel)
            if st is None:
                continue
            if self._third_party_by_path(rel):
                continue  # left out, and removed if an older pass indexed it
            old = stored.get(rel)
            if (not full and old is not None and old.size == st.size
                    and old.mtime_ns == st.mtime_ns and not old.racy()):
                seen.add(rel)
                continue
            update = self._read(rel)
            hashed += 1
            if update is None:
                continue
            seen.add(rel)
            if (not full and old is not None and old.sha256 == update.sha256
                    and old.mtime_ns == update.mtime_ns and old.size == update.size):
                continue
            updates.append(update)
            if len(updates) >= JOB_FILES:
                futures.append(self._submit_apply(updates, []))
                updates = []
        removed = sorted(p for p in stored if p not in seen)
        # Always at least one job: it flushes a pending index.
        futures.append(self._submit_apply(updates, removed))
        if full:
            futures.append(self.submit(self._reindex_all_job, background=True))
        result = ApplyResult()
        for future in futures:
            outcome = future.result(timeout=WAIT_S)
            if isinstance(outcome, ApplyResult):
                result.merge(outcome)
            else:
                result.restated.extend(outcome)
        summary = {
            "reason": reason,
            "full": full,
            "files_listed": len(listed),
            "hashed": hashed,
            "added": len(result.added),
            "changed": len(result.changed),
            "removed": len(result.removed),
            "touched": len(result.touched),
            "restated": len(set(result.restated)),
            "seconds": round(time.monotonic() - started, 3),
            "at": time.time(),
        }
        self.last_reconcile = summary
        self.progress = {**self.progress, "running": False}
        log.info("workspace_reconciled", **summary,
                 added_paths=_head(result.added), changed_paths=_head(result.changed),
                 removed_paths=_head(result.removed))
        return {**summary, "added_paths": sorted(result.added),
                "changed_paths": sorted(result.changed), "removed_paths": sorted(result.removed)}

    def _reindex_all_job(self) -> list[str]:
        return rebuild_workspace(self.store, self.memory)

    def _submit_apply(self, updates: list[FileUpdate], removed: list[str]) -> Future[ApplyResult]:
        store, memory = self.store, self.memory
        # Background: re-reading files catches up; a hook's write never waits behind it.
        return self.submit(lambda: apply_files(store, updates, removed, memory),
                           background=True)

    # -- events (worker thread) -----------------------------------------------------------------------
    def _on_batch(self, batch: Batch) -> None:
        if self._stopped:
            return
        if batch.overflow or any(_is_ignore_file(p) for p in batch.files):
            # Lost events, or the ignore rules themselves changed: only a reconcile is exact.
            self._reconcile(full=False, reason="overflow" if batch.overflow else "ignore_rules")
            return
        candidates = set(batch.files)
        for folder in batch.dirs:
            candidates.update(self.store.paths_under(folder))
            if (self.root / folder).is_dir():
                candidates.update(self.rules.list_files(under=folder))
        if not candidates:
            return
        ignored = self.rules.ignored(candidates)
        self.third_party.prepare(sorted(set(candidates) - ignored), self._digest)
        stored = self.store.fingerprints_for(sorted(candidates))
        updates: list[FileUpdate] = []
        removed: list[str] = []
        for rel in sorted(candidates):
            update = None if rel in ignored else self._read(rel)
            old = stored.get(rel)
            if update is None:
                if old is not None:
                    removed.append(rel)  # deleted, moved away, now ignored, binary or too big
                continue
            if (old is not None and old.sha256 == update.sha256
                    and old.mtime_ns == update.mtime_ns and old.size == update.size):
                continue
            updates.append(update)
        if not updates and not removed:
            return
        result = self._submit_apply(updates, removed).result(timeout=WAIT_S)
        log.debug("workspace_updated", added=_head(result.added), changed=_head(result.changed),
                  removed=_head(result.removed), restated=_head(result.restated))

    def _on_watcher_restart(self) -> None:
        """Events may have been lost while a thread was down: reconcile on the worker."""
        if not self._stopped:
            self.watcher.run_on_worker(lambda: self._reconcile(full=False, reason="restart"))

    # -- files ------------------------------------------------------------------------------------------
    def _read(self, rel: str) -> FileUpdate | None:
        """The file's row, redacted; None when it cannot be indexed or is mostly secrets."""
        read_at = time.time()
        got = self.rules.read_file(rel)
        if got is None:
            return None
        st, data = got
        sha256 = hashlib.sha256(data).hexdigest()
        reason = self.third_party.reason(rel, data, sha256)
        if reason:
            self.skipped_third_party[reason] = self.skipped_third_party.get(reason, 0) + 1
            log.debug("workspace_third_party_skipped", path=rel, reason=reason)
            return None
        text = decode(data)
        redacted = redact_keeping_lines(text)
        if mostly_secrets(text, redacted):
            log.info("workspace_secret_file_skipped", path=rel)
            return None
        return file_update(rel, data, st.size, st.mtime_ns, read_at, text=redacted,
                           sha256=sha256)

    def _third_party_by_path(self, rel: str) -> bool:
        """Third-party by its path, its attributes or its folder (no read needed)."""
        tp = self.third_party
        reason = tp.by_path_or_folder(rel)
        if reason:
            self.skipped_third_party[reason] = self.skipped_third_party.get(reason, 0) + 1
        return bool(reason)

    def _digest(self, rel: str) -> str | None:
        got = self.rules.read_file(rel)
        if got is None or len(got[1]) < MIN_COPY_BYTES:
            return None
        return hashlib.sha256(got[1]).hexdigest()

    def _normalise(self, name: str) -> str:
        """A capture's path as a relative posix path under the root; "" when outside it."""
        path = Path(name)
        if path.is_absolute():
            try:
                path = path.relative_to(self.root)
            except ValueError:
                try:
                    path = path.resolve().relative_to(self.root)
                except (OSError, ValueError):
                    return ""
        norm = posixpath.normpath(path.as_posix())
        return "" if norm in (".", "..") or norm.startswith("../") else norm

    def _current_hash(self, rel: str, old: Fingerprint | None) -> str | None:
        path = self.root / rel
        try:
            st = os.stat(path)
        except OSError:
            return None  # deleted
        if old is not None and old.size == st.st_size and old.mtime_ns == st.st_mtime_ns \
                and not old.racy():
            return old.sha256
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as fh:
                while block := fh.read(HASH_CHUNK):
                    digest.update(block)
        except OSError:
            return None
        return digest.hexdigest()


def file_update(rel: str, data: bytes, size: int, mtime_ns: int, read_at: float, *,
                text: str | None = None, sha256: str | None = None) -> FileUpdate:
    """One file's row for the store: its chunks, frontmatter, policy text and links, all from
    the redacted ``text`` (redacted here from ``data`` when not given)."""
    if text is None:
        text = redact_keeping_lines(decode(data))
    chunked = chunk_file(rel, text)
    policy = policy_text(rel, text, chunked.frontmatter)
    # Only a file that takes part may link: a code file's frontmatter retires nothing.
    links = tuple(link_candidates(rel, chunked.frontmatter)) if policy is not None else ()
    kind = "decision" if policy is not None else "document" if is_document(rel) else "code"
    return FileUpdate(
        path=rel, size=size, mtime_ns=mtime_ns,
        sha256=sha256 or hashlib.sha256(data).hexdigest(),
        chunks=[ChunkRow(c.chunk_id, c.start_line, c.end_line, c.heading, c.text, c.sha256)
                for c in chunked.chunks],
        frontmatter=chunked.frontmatter, policy_text=policy, links=links, read_at=read_at,
        kind=kind,
    )


class _Stopped(Exception):
    """The workspace is stopping: abandon a reconcile before it submits a partial picture."""


def _is_ignore_file(rel: str) -> bool:
    return rel.rsplit("/", 1)[-1] in (".gitignore", ".gitattributes")


def _head(items: list[str]) -> list[str]:
    return sorted(items)[:LOG_PATHS]
