"""The single writer: the only thread that mutates the stores.

Jobs queue up; the writer takes everything waiting (up to ``max_batch``) and runs it in one
SQLite transaction, each job in its own savepoint, so a burst of 50 captures costs one commit.
A job's future resolves right after that commit, so an acknowledged write is durable; each
committed batch has a token (``"<instance>.<n>"``, set as ``future.token``).

Derived policy state (claims, relations, statuses, staleness: most of a write's cost) is
brought in step after the acknowledgement, on this thread, in a transaction of its own
(``lintaid.derivation.derive_memory``): the jobs note the records they change in
``pending_derivation`` in their own transaction, and the derivation clears them in its. When
more jobs are waiting once a batch committed, they run first (up to ``max_deferred`` batches)
and one derivation pass then covers them all, in commit order (waiting background work does
not defer it). The index is brought in step by the store's indexer after each derivation
commits; ``wait_visible(token)`` lets a reader wait, off the request loop, until that batch
is derived and searchable, and ``wait_derived(token)`` until it is derived (without a token:
every batch committed so far). A read that waits for neither may see a committed record in
the brief window before its derivation commits (no claims yet, an older record it supersedes
still current).

A derivation that fails (its transaction rolled back) fails no acknowledged job: its records
stay pending and the next batch's derivation takes them again. A daemon killed between the two
transactions leaves them pending on disk, and the next start derives them before it serves
(``ensure_memory``), as it re-derives state derived under older rules. Memory is derived
against the workspace's decision documents once they are linked (``link_documents``).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from lintaid.logs import get_logger
from lintaid_client import protocol

from .derivation import derive_memory, ensure_memory, link_documents
from .store.memory import MemoryStore
from .store.workspace import WorkspaceStore

T = TypeVar("T")
Job = tuple[Callable[[], Any], "Future[Any]", bool]  # the job, its future, whether it may be recalled

log = get_logger("lintaid.writer")


class Writer:
    def __init__(self, store: MemoryStore, *, max_batch: int = 256,
                 max_deferred: int = 4) -> None:
        self.store = store
        self.max_batch = max_batch
        self.max_deferred = max_deferred  # job batches one derivation pass may wait behind
        self._jobs: deque[Job] = deque()  # what people and agents wait for
        self._background: deque[Job] = deque()  # catching up: team pulls, file re-indexing
        self._ready = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="lintaid-writer", daemon=True)
        self._visible = threading.Condition()
        self._committed = 0  # batches whose jobs committed (acknowledged)
        self._recall_committed = 0  # the last batch holding a write injection may recall
        self._derived = 0  # the last batch whose derivation committed
        self._indexed = 0  # the last batch derived and then indexed
        self._derive_due = False  # a batch committed since the last derivation pass (writer)
        self.instance = os.urandom(4).hex()  # tokens of an earlier daemon never wait here
        self._after_commit: list[Callable[[], None]] = []
        self._stopped = threading.Event()
        self.documents: WorkspaceStore | None = None  # read and replaced on the writer thread

    def start(self) -> None:
        ensure_memory(self.store)  # nothing else writes yet: run here, before serving
        self._thread.start()

    def link_documents(self, documents: WorkspaceStore | None) -> Future[int]:
        """Derive memory against ``documents``' claims from this job on (None: none), and
        derive again the memory chains they take part in, or took part in, unless memory is
        in step with them already (the future's result counts the chains). Once the store
        is closed (the daemon stopping) memory is derived without it."""
        def job() -> int:
            self.documents = documents
            return link_documents(self.store, documents)
        return self.submit(job)

    def add_flusher(self, flush: Callable[[], None]) -> None:
        """Run ``flush`` on the writer thread after every derivation pass, once what the
        batches before it changed is committed and derived (e.g. another index)."""
        self._after_commit.append(flush)

    def submit(self, job: Callable[[], T], *, recall: bool = True,
               background: bool = False) -> Future[T]:
        """Queue ``job`` to run on the writer thread; its future resolves after the commit of
        its batch's jobs, before their derivation (``wait_visible``, ``wait_derived``).

        ``recall``: the job may change what injection recalls (a prompt's own record does
        not), so injection waits for it to be searchable. ``background``: catching-up work
        (pulled teammates' records, re-indexed files) that a batch takes one job at a time,
        after everything a hook or a person is waiting for, so a hook's write never queues
        behind a backlog.
        """
        future: Future[T] = Future()
        with self._ready:
            if self._stopping or self._stopped.is_set():
                future.set_exception(protocol.Unavailable("the daemon is stopping"))
                return future
            (self._background if background else self._jobs).append((job, future, recall))
            self._ready.notify()
        return future

    def run(self, job: Callable[[], T], timeout: float | None = 60) -> T:
        """Submit ``job`` and wait for its result and then its derivation (within
        ``timeout`` each): for callers that read the store on their own thread next."""
        future = self.submit(job)
        result = future.result(timeout)
        self.wait_derived(getattr(future, "token", None), timeout=timeout)
        return result

    @property
    def depth(self) -> int:
        return len(self._jobs) + len(self._background)

    @property
    def underived(self) -> int:
        """Batches acknowledged whose derivation has not committed yet (a failed pass's
        stay counted until a later pass derives them)."""
        with self._visible:
            return self._committed - self._derived

    def token(self, generation: int) -> str:
        return f"{self.instance}.{generation}"

    def _target(self, token: str | None, recall_only: bool) -> int | None:
        """The batch to wait for (under ``_visible``); None for another instance's token."""
        if token is None:
            return self._recall_committed if recall_only else self._committed
        instance, _, number = token.partition(".")
        if instance != self.instance or not number.isdigit():
            return None
        return min(int(number), self._committed)

    def wait_visible(self, token: str | None = None, *, timeout: float = 5.0,
                     recall_only: bool = False) -> bool:
        """Block until ``token``'s batch (default: every batch committed so far, or with
        ``recall_only`` every one injection may recall) is derived and then in the index, so
        a search sees its records with their claims and the records they supersede retired;
        False on timeout. A token of another daemon instance never waits: a daemon derives
        what was pending and brings its index in step with the database before it serves."""
        with self._visible:
            target = self._target(token, recall_only)
            if target is None:
                return True
            return self._visible.wait_for(lambda: self._indexed >= target, timeout)

    def wait_derived(self, token: str | None = None, *,
                     timeout: float | None = 5.0) -> bool:
        """Block until ``token``'s batch (default: every batch committed so far) is derived
        (not necessarily indexed yet): what a read of memory.db's rows and derived tables
        needs. Returns at once when nothing is pending; False on timeout."""
        with self._visible:
            target = self._target(token, False)
            if target is None:
                return True
            return self._visible.wait_for(lambda: self._derived >= target, timeout)

    def stop(self, timeout: float = 30.0) -> None:
        """Finish every queued job, then stop; later submissions are refused."""
        if not self._thread.is_alive():
            return
        with self._ready:
            self._stopping = True
            self._ready.notify()
        self._thread.join(timeout)
        self._stopped.set()

    def _next_batch(self, block: bool) -> list[Job] | None:
        """What the next transaction runs: every waiting job (up to ``max_batch``) and at
        most one background job, waiting for one when ``block``; empty when nothing waits
        (not blocking); None once stopping with nothing left."""
        with self._ready:
            while block and not (self._jobs or self._background or self._stopping):
                self._ready.wait()
            batch: list[Job] = []
            while self._jobs and len(batch) < self.max_batch:
                batch.append(self._jobs.popleft())
            if self._background and len(batch) < self.max_batch:
                batch.append(self._background.popleft())
            return None if not batch and self._stopping else batch

    def _run(self) -> None:
        deferred = 0  # job batches committed since the last derivation pass, beyond the first
        while True:
            batch = self._next_batch(block=not self._derive_due)
            if batch:
                self._run_batch(batch)
                if self._derive_due and deferred < self.max_deferred and self._jobs:
                    # Acknowledge the jobs people wait for first; derive them together.
                    # Background work never defers it: a pass over a backlog of pulled
                    # batches would hold a hook's write back for longer.
                    deferred += 1
                    continue
            if self._derive_due:
                self._derive()
                deferred = 0
            elif batch is None:
                break
        self._stopped.set()

    def _run_batch(self, batch: list[Job]) -> None:
        """Run the jobs in one transaction and resolve their futures once it commits."""
        outcomes: list[tuple[Future[Any], bool, Any]] = []
        try:
            with self.store.transaction():
                for job, future, _recall in batch:
                    if not future.set_running_or_notify_cancel():
                        continue
                    try:
                        with self.store.savepoint():
                            outcomes.append((future, True, job()))
                    except Exception as err:  # one bad job must not sink the batch
                        outcomes.append((future, False, err))
        except Exception as err:  # the commit itself failed (disk full, I/O error)
            log.error("batch_failed", error=str(err), jobs=len(batch))
            for _job, future, _recall in batch:
                if future.running():
                    future.set_exception(err)
            return
        with self._visible:
            self._committed += 1
            generation = self._committed
            if any(recall for _job, _future, recall in batch):
                self._recall_committed = generation
        self._derive_due = True
        token = self.token(generation)
        for future, ok, value in outcomes:
            future.token = token  # type: ignore[attr-defined]
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def _derive(self) -> None:
        """Derive, in one transaction, every record the batches committed so far left
        pending; then the flushers, and the index. A failure is logged: the records stay
        pending (the next batch's pass takes them again) and their batches' tokens keep
        waiting; what the jobs wrote stays acknowledged and durable, and is indexed."""
        self._derive_due = False
        generation = self._committed  # only this thread moves it
        derived = True
        try:
            with self.store.transaction():
                documents = self.documents
                derive_memory(self.store, None if documents is None or documents.closed
                              else documents)
        except Exception as err:  # disk full, I/O error, a rule that raised
            derived = False
            log.error("derivation_failed", error=str(err), batch=generation,
                      note="the records stay pending; the next batch derives them again")
        else:
            with self._visible:
                self._derived = generation
                self._visible.notify_all()
        try:
            for flush in self._after_commit:
                flush()
        except Exception as err:  # the rows are durable; pending rows replay at next start
            log.error("index_flush_failed", error=str(err))
        self.store.request_index((lambda: self._mark_indexed(generation)) if derived
                                 else _nothing)

    def _mark_indexed(self, generation: int) -> None:
        with self._visible:
            self._indexed = max(self._indexed, generation)
            self._visible.notify_all()


def _nothing() -> None:
    """After an index pass that follows a failed derivation: no batch became visible."""
