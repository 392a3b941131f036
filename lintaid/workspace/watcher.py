"""File-system events to debounced batches, on threads that survive their own failures.

Three kinds of thread:
- watchdog's own (emitter, dispatcher): our handler only turns an event into a small tuple and
  ``put_nowait``s it, inside try/except, because a raising handler kills watchdog's dispatch
  thread for good. ``.git/`` and ``.lint-ai/`` are dropped right there (our own database writes
  live in ``.lint-ai/`` and would otherwise feed back as events).
- one worker: blocks on the queue (no polling), waits for a quiet period (~200 ms, capped at
  ~1 s from the first event), then hands the batch to ``on_batch``. Work that must not interleave
  with batches (a reconcile) is queued through ``run_on_worker``.
- one supervisor: checks that the observer, its emitters and the worker are alive, and
  restarts what died (a restarted observer may have missed events, so ``on_restart`` follows):
  every 2 s while events come, and ever less often while none do (twice as long each time,
  up to a minute: an idle daemon is not woken for it); the first event after such a pause
  wakes it.

inotify limits (ENOSPC/EMFILE) at schedule time fall back to polling with a warning;
``LINTAID_WATCHER=polling`` forces polling.
"""

from __future__ import annotations

import errno
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from lintaid.logs import get_logger

from .ignore import ALWAYS_EXCLUDED

T = TypeVar("T")

QUIET_S: Final = 0.2
CAP_S: Final = 1.0
SUPERVISE_S: Final = 2.0
SUPERVISE_QUIET_S: Final = 60.0  # the longest pause between checks while no event comes
POLL_INTERVAL_S: Final = 1.0
QUEUE_MAX: Final = 100_000
EVENT_TYPES: Final = [
    FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent, FileClosedEvent,
    DirCreatedEvent, DirDeletedEvent, DirMovedEvent,
]
_WANTED: Final = frozenset({"created", "modified", "deleted", "moved", "closed"})
_LIMIT_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EMFILE, errno.ENFILE})
_STOP: Final = object()

log = get_logger("lintaid.workspace")


@dataclass
class Batch:
    """Relative posix paths touched since the last batch."""

    files: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)
    overflow: bool = False  # the queue overflowed: events were lost, rescan everything

    def add(self, is_dir: bool, rel: str) -> None:
        (self.dirs if is_dir else self.files).add(rel)


@dataclass
class _Call:
    fn: Callable[[], Any]
    future: Future[Any]


class _Handler(FileSystemEventHandler):
    """Enqueue only. Never raises: an exception here would kill watchdog's dispatcher."""

    def __init__(self, root: str, put: Callable[[tuple[bool, str]], None],
                 on_event: Callable[[], None]) -> None:
        super().__init__()
        self._prefix = root.rstrip(os.sep) + os.sep
        self._put = put
        self._on_event = on_event

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            if event.event_type not in _WANTED:
                return
            if event.is_directory and event.event_type in ("modified", "closed"):
                return  # a folder's mtime moving says nothing a file event does not
            queued = False
            for raw in (event.src_path, getattr(event, "dest_path", "")):
                rel = self._relative(raw)
                if rel:
                    self._put((event.is_directory, rel))
                    queued = True
            if queued:
                self._on_event()
        except Exception:  # see the class docstring: never let it reach watchdog
            pass

    def _relative(self, raw: str | bytes) -> str | None:
        path = os.fsdecode(raw) if raw else ""
        if not path.startswith(self._prefix):
            return None
        rel = path[len(self._prefix):]
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        if not rel or any(part in ALWAYS_EXCLUDED for part in rel.split("/")):
            return None
        return rel


class Watcher:
    def __init__(self, root: Path, on_batch: Callable[[Batch], None], *,
                 on_restart: Callable[[], None] | None = None, quiet: float = QUIET_S,
                 cap: float = CAP_S, supervise_every: float = SUPERVISE_S) -> None:
        self.root = root
        self.on_batch = on_batch
        self.on_restart = on_restart
        self.quiet = quiet
        self.cap = cap
        self.supervise_every = supervise_every
        self.mode = "polling" if os.environ.get("LINTAID_WATCHER") == "polling" else "inotify"
        self.last_event_at: float | None = None
        self.restarts = 0
        self.batches = 0
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=QUEUE_MAX)
        self._overflow = threading.Event()
        self._stop = threading.Event()
        self._events_seen = 0  # events since the supervisor last looked
        self._supervisor_waiting = False  # in a long pause: the next event wakes it
        self._supervise_now = threading.Event()
        self._lock = threading.Lock()  # observer (re)starts: supervisor vs worker vs stop
        self._observer: BaseObserver | None = None
        self._observer_wanted = False  # set once the worker first tried to start it
        self._worker: threading.Thread | None = None
        self._supervisor: threading.Thread | None = None
        self._handler = _Handler(str(root), self._enqueue, self._touch)

    # -- life cycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker (which then starts the observer) and the supervisor; return at once.

        Setting up watches walks the whole tree, so it happens on the worker, not the caller.
        """
        self._worker = self._spawn_worker()
        self.run_on_worker(self._start_observer).add_done_callback(self._log_start_failure)
        self._supervisor = threading.Thread(target=self._supervise, name="lintaid-ws-supervisor",
                                            daemon=True)
        self._supervisor.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the observer first (no new events), then the worker and the supervisor."""
        self._stop.set()
        self._supervise_now.set()
        with self._lock:
            observer, self._observer = self._observer, None
        _stop_observer(observer, timeout)
        try:
            self._queue.put(_STOP, timeout=1.0)
        except queue.Full:
            pass
        for thread in (self._worker, self._supervisor):
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout)
        # Refuse the calls still queued, instead of leaving their callers waiting.
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, _Call) and not item.future.done():
                item.future.set_exception(RuntimeError("the watcher has stopped"))

    def run_on_worker(self, fn: Callable[[], T]) -> Future[T]:
        """Run ``fn`` on the worker thread, between batches; the future holds its result."""
        future: Future[T] = Future()
        if self._stop.is_set():
            future.set_exception(RuntimeError("the watcher has stopped"))
            return future
        self._queue.put(_Call(fn, future))  # blocking put: a control call must not be lost
        return future

    def _log_start_failure(self, future: Future[Any]) -> None:
        err = future.exception()
        if err is not None and not self._stop.is_set():
            log.error("watcher_start_failed", error=str(err), exc_info=err)

    @property
    def queue_depth(self) -> int:
        return self._queue.qsize()

    @property
    def alive(self) -> bool:
        return self._worker is not None and self._worker.is_alive() and self._observer_alive()

    # -- handler side (watchdog threads) ---------------------------------------------------------
    def _enqueue(self, item: tuple[bool, str]) -> None:
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self._overflow.set()

    def _touch(self) -> None:
        self.last_event_at = time.time()
        self._events_seen += 1
        if self._supervisor_waiting:
            self._supervisor_waiting = False
            self._supervise_now.set()

    # -- observer -----------------------------------------------------------------------------------
    def _start_observer(self) -> None:
        with self._lock:
            self._observer_wanted = True
            if self._stop.is_set():
                return
            self._observer = self._make_observer()

    def _make_observer(self) -> BaseObserver:
        if self.mode != "polling":
            observer: BaseObserver | None = None
            try:
                observer = Observer()
                observer.schedule(self._handler, str(self.root), recursive=True,
                                  event_filter=EVENT_TYPES)
                observer.start()
                _check_all_watched(self.root)
                return observer
            except OSError as err:
                _stop_observer(observer, 5.0)
                if err.errno not in _LIMIT_ERRNOS:
                    raise
                log.warning("watcher_polling_fallback", error=str(err), errno=err.errno,
                            hint="raise fs.inotify.max_user_watches / max_user_instances")
                self.mode = "polling"
        observer = PollingObserver(timeout=POLL_INTERVAL_S)
        observer.schedule(self._handler, str(self.root), recursive=True, event_filter=EVENT_TYPES)
        observer.start()
        return observer

    def _observer_alive(self) -> bool:
        observer = self._observer
        if observer is None:
            return False
        return observer.is_alive() and all(e.is_alive() for e in list(observer.emitters))

    # -- worker -------------------------------------------------------------------------------------
    def _spawn_worker(self) -> threading.Thread:
        thread = threading.Thread(target=self._work, name="lintaid-ws-worker", daemon=True)
        thread.start()
        return thread

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if self._stop.is_set():  # stopping: drop events, refuse calls, reach _STOP soon
                if isinstance(item, _Call):
                    item.future.set_exception(RuntimeError("the watcher has stopped"))
                continue
            if isinstance(item, _Call):
                _run_call(item)
                continue
            batch = Batch()
            batch.add(*item)
            pending, stop_after = self._collect(batch)
            if self._overflow.is_set():
                self._overflow.clear()
                batch.overflow = True
            self.batches += 1
            try:
                self.on_batch(batch)
            except Exception as err:  # one bad batch must not end the watcher
                log.error("workspace_batch_failed", error=str(err), exc_info=err)
            if pending is not None:
                _run_call(pending)
            if stop_after:
                return

    def _collect(self, batch: Batch) -> tuple[_Call | None, bool]:
        """Gather events until ``quiet`` passes without one, or ``cap`` after the first."""
        deadline = time.monotonic() + self.cap
        while True:
            wait = min(self.quiet, deadline - time.monotonic())
            if wait <= 0:
                return None, False
            try:
                item = self._queue.get(timeout=wait)
            except queue.Empty:
                return None, False
            if item is _STOP:
                return None, True
            if isinstance(item, _Call):
                return item, False
            batch.add(*item)

    # -- supervisor ---------------------------------------------------------------------------------
    def _supervise(self) -> None:
        pause = self.supervise_every
        while not self._stop.is_set():
            self._supervisor_waiting = pause > self.supervise_every
            self._supervise_now.wait(pause)
            self._supervise_now.clear()
            if self._stop.is_set():
                return
            quiet = not self._events_seen
            self._events_seen = 0
            pause = (min(max(self.supervise_every, SUPERVISE_QUIET_S), pause * 2) if quiet
                     else self.supervise_every)
            try:
                self._check()
            except Exception as err:  # keep supervising; try again next round
                log.error("watcher_supervise_failed", error=str(err), exc_info=err)

    def _check(self) -> None:
        restarted = False
        if self._worker is not None and not self._worker.is_alive() and not self._stop.is_set():
            log.warning("watcher_worker_restarted")
            self._worker = self._spawn_worker()
            restarted = True
        with self._lock:
            if self._stop.is_set() or not self._observer_wanted:
                return
            if not self._observer_alive():
                log.warning("watcher_observer_restarted", mode=self.mode)
                _stop_observer(self._observer, 5.0)
                self._observer = None
                self._observer = self._make_observer()
                restarted = True
        if restarted:
            self.restarts += 1
            if self.on_restart is not None:
                self.on_restart()


def _inotify_watch_count() -> int | None:
    """Watches this process holds, from the kernel's own accounting (None off Linux)."""
    total = 0
    try:
        fds = os.listdir("/proc/self/fdinfo")
    except OSError:
        return None
    for fd in fds:
        try:
            with open(f"/proc/self/fdinfo/{fd}") as fh:
                total += sum(1 for line in fh if line.startswith("inotify wd:"))
        except OSError:
            continue
    return total


def _check_all_watched(root: Path) -> None:
    """Raise ENOSPC when some folder got no watch.

    watchdog swallows a failed watch on a subfolder (only the root's failure is raised), so a
    watch limit reached halfway would leave folders silently unwatched: count instead.
    """
    held = _inotify_watch_count()
    if held is None:
        return
    folders = sum(1 for _ in os.walk(root))
    if held < folders:
        raise OSError(errno.ENOSPC, f"inotify watch limit reached ({held} of {folders} folders)")


def _run_call(call: _Call) -> None:
    if not call.future.set_running_or_notify_cancel():
        return
    try:
        call.future.set_result(call.fn())
    except BaseException as err:  # delivered to the caller, never kills the worker
        call.future.set_exception(err)


def _stop_observer(observer: BaseObserver | None, timeout: float) -> None:
    if observer is None:
        return
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout)
    except Exception as err:  # a broken observer must not block shutdown
        log.warning("watcher_stop_failed", error=str(err))
