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
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

import structlog

from lintaid_client import protocol

from .derivation import derive_memory, ensure_memory, link_documents
from .store.memory import MemoryStore
from .store.workspace import WorkspaceStore

T = TypeVar("T")
_STOP = object()

log = structlog.get_logger("lintaid.writer")


class Writer:
    def __init__(self, store: MemoryStore, *, max_batch: int = 256) -> None:
        self.store = store
        self.max_batch = max_batch
        self._queue: queue.Queue[Any] = queue.Queue()
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

    def submit(self, job: Callable[[], T], *, recall: bool = True) -> Future[T]:
        """Queue ``job`` to run on the writer thread; its future resolves after the commit.

        ``recall``: the job may change what injection recalls (a prompt's own record does
        not), so injection waits for it to be searchable.
        """
        future: Future[T] = Future()
        if self._stopped.is_set():
            future.set_exception(protocol.Unavailable("the daemon is stopping"))
            return future
        self._queue.put((job, future, recall))
        return future

    def run(self, job: Callable[[], T], timeout: float | None = 60) -> T:
        return self.submit(job).result(timeout)

    @property
    def depth(self) -> int:
        return self._queue.qsize()

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
        """Finish every queued job, then stop."""
        if not self._thread.is_alive():
            return
        self._queue.put(_STOP)
        self._thread.join(timeout)
        self._stopped.set()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                break
            batch = [first]
            stop_after = False
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stop_after = True
                    break
                batch.append(item)
            self._run_batch(batch)
            if stop_after:
                break
        self._stopped.set()
        # Refuse late submissions cleanly instead of leaving their futures pending forever.
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not _STOP:
                item[1].set_exception(protocol.Unavailable("the daemon is stopping"))

    def _run_batch(self, batch: list[tuple[Callable[[], Any], Future[Any], bool]]) -> None:
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
