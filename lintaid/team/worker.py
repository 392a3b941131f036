"""The replication threads: push the outbox, pull the teammates' events, never block a hook.

``lintaid-team`` connects, checks the server's schema, then loops: push every outbox row (in
batches; the rows are deleted once the server holds them), pull every event after the cursor
(applied by a writer job that moves the cursor in the same transaction), then wait for a wake
(a local write noted in the outbox, a NOTIFY from the server) or the poll interval. When the
server cannot be reached it says so in ``status``, retries with a growing delay (at most
``retry_max_s``), and local capture, search and injection go on untouched: they never wait on
this thread. ``lintaid-team-listen`` holds a second connection in LISTEN and turns each
notification into a wake.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from lintaid.logs import get_logger
from lintaid.store.memory import MemoryStore

from . import apply, pg, secret
from .config import TeamConfig

log = get_logger("lintaid.team")

Submit = Callable[..., "Future[Any]"]
ONLINE, OFFLINE, REFUSED, STARTING, STOPPED = "online", "offline", "refused", "starting", "stopped"


def _env_float(name: str, default: float, low: float) -> float:
    try:
        return max(low, float(os.environ.get(name, default)))
    except ValueError:
        return default


@dataclass(frozen=True)
class Settings:
    poll_s: float = 30.0  # pull this often even when no NOTIFY came (one may be missed)
    retry_max_s: float = 30.0  # the longest wait between two tries while the server is away
    push_batch: int = 500
    pull_batch: int = 100  # per writer job: small enough that a hook's write never waits long

    @classmethod
    def from_env(cls) -> Settings:
        return cls(poll_s=_env_float("LINTAID_TEAM_POLL_S", 30.0, 0.1),
                   retry_max_s=_env_float("LINTAID_TEAM_RETRY_MAX_S", 30.0, 0.05),
                   pull_batch=int(_env_float("LINTAID_TEAM_PULL_BATCH", cls.pull_batch, 1)))


class Worker:
    def __init__(self, config: TeamConfig, store: MemoryStore, submit: Submit,
                 settings: Settings | None = None) -> None:
        self.config = config
        self.store = store
        self.submit = submit
        self.settings = settings or Settings.from_env()
        self.params = pg.parse_dsn(config.dsn)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._server: pg.Server | None = None
        self._listener: pg.Listener | None = None  # the LISTEN thread's, while it has one
        self._threads: list[threading.Thread] = []
        self.stats: dict[str, Any] = {
            "state": STARTING, "connected": False, "last_error": None, "last_error_at": None,
            "offline_since": None, "schema": None, "pushed": 0, "withheld": 0,
            "last_push_at": None, "pulled": 0, "skipped": 0, "refused": 0,
            "last_pull_at": None, "behind": None, "pull_lag_s": None, "last_event_lag_s": None,
            "password_source": None,
        }

    # -- life cycle --------------------------------------------------------------------------
    def start(self) -> None:
        for name, target in (("lintaid-team", self._run), ("lintaid-team-listen", self._listen)):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout: float = 15.0) -> None:
        self._stop.set()
        self._wake.set()
        listener = self._listener
        if listener is not None:  # waiting on the server: woken now, not at its timeout
            listener.interrupt()
        for thread in self._threads:
            thread.join(timeout)
        self._close()
        self._set(state=STOPPED, connected=False)

    def _set(self, **values: Any) -> None:
        with self._lock:
            self.stats.update(values)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return dict(self.stats)

    # -- the loop ----------------------------------------------------------------------------
    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                server = self._connect()
                self._wake.clear()
                busy = self._push(server)
                busy = self._pull(server) or busy
                self._measure(server)
                failures = 0
                # stop() sets _stop before _wake: a wake that the clear() above swallowed
                # came with _stop already set, so looking at it now never sleeps through one.
                if not busy and not self._stop.is_set():
                    self._wake.wait(self.settings.poll_s)
            except (pg.SchemaTooNew, pg.SchemaNeedsOwner) as err:
                self._fail(REFUSED, str(err))
                self._stop.wait(self.settings.poll_s)
            except Exception as err:  # the server away, or a bug: local memory goes on
                if not isinstance(err, (pg.Error, OSError, TimeoutError)):
                    log.error("team_cycle_failed", error=str(err), exc_info=err)
                self._fail(OFFLINE, pg.describe(err))
                delay = min(self.settings.retry_max_s, 0.25 * 2 ** min(failures, 16))
                failures += 1
                self._stop.wait(delay)

    def _connect(self) -> pg.Server:
        if self._server is not None:
            return self._server
        where, password = secret.source(self.params)
        self._set(password_source=where)
        conn = pg.connect(self.config.dsn, password)
        server = pg.Server(conn, self.config.name, self.config.repo_key, self.config.origin)
        try:
            version = server.ensure_schema()
        except BaseException:
            server.close()
            raise
        self._server = server
        was = self.snapshot()
        if was["state"] != ONLINE:
            log.info("team_online", team=self.config.name, repo_key=self.config.repo_key,
                     offline_for_s=round(time.time() - was["offline_since"], 1)
                     if was["offline_since"] else None)
        self._set(state=ONLINE, connected=True, schema=version, offline_since=None)
        return server

    def _fail(self, state: str, message: str) -> None:
        self._close()
        now = time.time()
        was = self.snapshot()
        if was["state"] != state or was["last_error"] != message:
            log.warning("team_" + state, error=message)
        self._set(state=state, connected=False, last_error=message, last_error_at=now,
                  offline_since=was["offline_since"] or now)

    def _close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()

    # -- push and pull -----------------------------------------------------------------------
    def _push(self, server: pg.Server) -> bool:
        rows = self.store.outbox.pending(self.settings.push_batch)
        if not rows:
            return False
        out = apply.outgoing(rows, self.config.origin)
        server.push(out.events, self.config.machine)
        through, outbox = out.through, self.store.outbox
        self.submit(lambda: outbox.delivered(through), recall=False).result(120)
        with self._lock:
            self.stats["pushed"] += len(out.events)
            self.stats["withheld"] += out.withheld
            self.stats["last_push_at"] = time.time()
        return len(rows) >= self.settings.push_batch

    def _pull(self, server: pg.Server) -> bool:
        key = self.config.cursor_key
        cursor = int(self.store.outbox.state(key) or 0)
        rows, new_cursor, fetched = server.pull(cursor, self.settings.pull_batch)
        if new_cursor == cursor:
            return False
        store = self.store
        # recall=False: a prompt's injection waits for local writes to be searchable, never
        # for a teammate's batch (it is searchable a moment later); background: a hook's own
        # write goes first, never behind a backlog of pulled records.
        done = self.submit(lambda: apply.apply(store, rows, key, new_cursor),
                           recall=False, background=True).result(120)
        now = time.time()
        with self._lock:
            self.stats["pulled"] += done.applied
            self.stats["skipped"] += done.skipped
            self.stats["refused"] += done.refused
            self.stats["last_pull_at"] = now
            if rows:
                self.stats["last_event_lag_s"] = round(now - rows[-1].pushed_at, 3)
        return fetched >= self.settings.pull_batch

    def _measure(self, server: pg.Server) -> None:
        cursor = int(self.store.outbox.state(self.config.cursor_key) or 0)
        behind, waited = server.behind(cursor)
        self._set(behind=behind, pull_lag_s=round(waited, 3) if behind else 0.0)

    # -- LISTEN ------------------------------------------------------------------------------
    def _listen(self) -> None:
        listener: pg.Listener | None = None
        while not self._stop.is_set():
            if listener is None:
                if self.snapshot()["state"] != ONLINE:
                    self._stop.wait(0.2)
                    continue
                try:
                    _where, password = secret.source(self.params)
                    listener = pg.Listener(pg.connect(self.config.dsn, password),
                                           self.config.name, self.config.repo_key)
                except Exception:
                    self._stop.wait(1.0)
                    continue
                self._listener = listener
                self._wake.set()  # what was pushed while nobody listened
                if self._stop.is_set():  # stop() came before it could interrupt this one
                    break
            try:
                if listener.wait(0.5):
                    self._wake.set()
            except Exception:
                self._listener = None
                listener.close()
                listener = None
        self._listener = None
        if listener is not None:
            listener.close()
