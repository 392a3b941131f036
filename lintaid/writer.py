"""The single writer: the only thread that mutates the stores.

Jobs queue up; the writer takes everything waiting (up to ``max_batch``) and runs it in one
SQLite transaction, each job in its own savepoint, so a burst of 50 captures costs one commit.
A job's future resolves only after that commit, so an acknowledged write is durable. The index
is then brought in step by the store's indexer; each committed batch has a token
(``"<instance>.<n>"``, set as ``future.token``), and ``wait_visible(token)`` lets a reader wait,
off the request loop, until that batch is searchable.

Derived policy state is brought in step inside each batch's transaction, after its jobs
(``lintaid.derivation``); state derived under older rules is re-derived before the writer
starts. Memory is derived against the workspace's decision documents once they are linked
(``link_documents``).
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
    def __init__(self, store: MemoryStore, *, max_batch: int = 256) -> None:
        self.store = store
        self.max_batch = max_batch
        self._jobs: deque[Job] = deque()  # what people and agents wait for
        self._background: deque[Job] = deque()  # catching up: team pulls, file re-indexing
        self._ready = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="lintaid-writer", daemon=True)
        self._visible = threading.Condition()
        self._committed = 0
        self._recall_committed = 0  # the last batch holding a write injection may recall
        self._indexed = 0
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
        """Run ``flush`` on the writer thread after every committed batch (e.g. another index)."""
        self._after_commit.append(flush)

    def submit(self, job: Callable[[], T], *, recall: bool = True,
               background: bool = False) -> Future[T]:
        """Queue ``job`` to run on the writer thread; its future resolves after the commit.

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
        return self.submit(job).result(timeout)

    @property
    def depth(self) -> int:
        return len(self._jobs) + len(self._background)

    def token(self, generation: int) -> str:
        return f"{self.instance}.{generation}"

    def wait_visible(self, token: str | None = None, *, timeout: float = 5.0,
                     recall_only: bool = False) -> bool:
        """Block until ``token``'s batch (default: every batch committed so far, or with
        ``recall_only`` every one injection may recall) is in the index; False on timeout.
        A token of another daemon instance never waits: a daemon brings its index in step
        with the database before it serves."""
        with self._visible:
            if token is None:
                target = self._recall_committed if recall_only else self._committed
            else:
                instance, _, number = token.partition(".")
                if instance != self.instance or not number.isdigit():
                    return True
                target = min(int(number), self._committed)
            return self._visible.wait_for(lambda: self._indexed >= target, timeout)

    def stop(self, timeout: float = 30.0) -> None:
        """Finish every queued job, then stop; later submissions are refused."""
        if not self._thread.is_alive():
            return
        with self._ready:
            self._stopping = True
            self._ready.notify()
        self._thread.join(timeout)
        self._stopped.set()

    def _next_batch(self) -> list[Job] | None:
        """What the next transaction runs: every waiting job (up to ``max_batch``) and at
        most one background job; None once stopping with nothing left."""
        with self._ready:
            while not (self._jobs or self._background or self._stopping):
                self._ready.wait()
            batch: list[Job] = []
            while self._jobs and len(batch) < self.max_batch:
                batch.append(self._jobs.popleft())
            if self._background and len(batch) < self.max_batch:
                batch.append(self._background.popleft())
            return batch or None

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            self._run_batch(batch)
        self._stopped.set()

    def _run_batch(self, batch: list[Job]) -> None:
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
                documents = self.documents
                derive_memory(self.store, None if documents is None or documents.closed
                              else documents)
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
        token = self.token(generation)
        for future, ok, value in outcomes:
            future.token = token  # type: ignore[attr-defined]
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)
        try:
            for flush in self._after_commit:
                flush()
        except Exception as err:  # the rows are durable; pending rows replay at next start
            log.error("index_flush_failed", error=str(err))
        self.store.request_index(lambda: self._mark_indexed(generation))

    def _mark_indexed(self, generation: int) -> None:
        with self._visible:
            self._indexed = max(self._indexed, generation)
            self._visible.notify_all()
