"""The daemon's life cycle: lock, stores, bind, status file, serve, orderly stop.

Start order: the lock is taken by the caller (``lock.acquire``) before this module is even
imported; then stores open (the index is rebuilt here if needed), the writer starts, the
socket binds, and only then is ``daemon.json`` written, so a status file always names a
daemon that can answer. Stop order is the reverse, and the status file goes first.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import psutil

from lintaid.logs import get_logger
from lintaid_client import paths, protocol
from lintaid_client import spool as spool_files

from . import __version__, logs
from .board import KEEP_DAYS as BOARD_KEEP_DAYS
from .board import Board
from .capture.git import git_state
from .files import write_atomic
from .hooks import HookDispatcher, InjectConfig
from .idle import Idle, release_free_memory
from .integrations import registry
from .lint import load_config as load_staleness
from .notify import Notifier
from .ops import Services
from .pause import PauseState
from .policy.kinds import kind_terms
from .policy.staleness import StalenessConfig
from .recovery import RecoveryError, RecoveryReport, recover_project
from .search import Reader
from .server import Server
from .spool_drain import SpoolDrainer
from .store.backup import Retention, remove_leftovers, rolling_backups, total_bytes
from .store.integrity import Damaged
from .store.memory import MemoryStore
from .team.tier import TeamTier
from .warm import Warmer
from .writer import Writer

log = get_logger("lintaid.daemon")
SWITCH_INTERVAL_S = 0.001


@cache
def _version(dist: str) -> str:
    """An installed distribution's version, looked up once (importlib.metadata, imported
    here: it costs a start some 20 ms, and only ``status`` asks)."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


IDLE_EXIT_S = 1800.0
"""30 minutes: longer than the pauses inside a working session (reading, a review, a call),
so the prompts after one find the daemon up; a start takes a second or two, during which the
hooks spool their events and inject nothing."""


@dataclass
class Config:
    inject_top_k: int = 3
    inject_max_bytes: int = 8000
    inject_max_tokens: int = 600  # a prompt's block, estimated (SessionStart: max bytes)
    watch_workspace: bool = True
    log_level: str = "info"
    log_stderr: bool = False
    backup_interval_s: float = 3600.0  # a rolling backup this often, while there were writes
    backups: Retention = Retention()  # which rolling backups stay
    idle_exit_s: float = IDLE_EXIT_S  # stop after this long without requests or work; 0: never
    staleness: StalenessConfig | None = None  # None: read .lint-ai/staleness.toml and env
    board_keep_days: float = BOARD_KEEP_DAYS  # bulletin board posts older than this expire
    http_port: int | None = None  # serve the HTTP API from the start on it (0: a free port)

    @classmethod
    def from_env(cls) -> Config:
        cfg = cls()
        if os.environ.get("LINTAID_NO_WATCH") == "1":
            cfg.watch_workspace = False
        cfg.log_level = os.environ.get("LINTAID_LOG_LEVEL", cfg.log_level)
        cfg.backup_interval_s = max(1.0, _env_number(
            "LINTAID_BACKUP_INTERVAL_S", cfg.backup_interval_s))
        cfg.idle_exit_s = max(0.0, _env_number("LINTAID_IDLE_EXIT_S", cfg.idle_exit_s))
        cfg.board_keep_days = max(0.0, _env_number("LINTAID_BOARD_KEEP_DAYS",
                                                   cfg.board_keep_days))
        port = os.environ.get("LINTAID_HTTP_PORT", "").strip()
        if port.isdigit() and int(port) <= 65535:
            cfg.http_port = int(port)
        cfg.backups = Retention(
            keep=max(1, int(_env_number("LINTAID_BACKUP_KEEP", cfg.backups.keep))),
            max_bytes=max(0, int(_env_number("LINTAID_BACKUP_MAX_MB",
                                             cfg.backups.max_bytes / 2**20) * 2**20)))
        return cfg


def _env_number(name: str, default: float) -> float:
    """A number from the environment; the default when unset or not a number."""
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


class StartError(Exception):
    """The daemon could not start; the message says why in one line."""


def recover(root: Path) -> RecoveryReport:
    """``lintaid recover`` on the daemon's side: salvage a damaged memory.db (every readable
    row, then the newest backup) while no daemon serves; the caller holds the project's lock.
    Raises ``StartError`` with the one line that says why it could not."""
    try:
        return recover_project(root)
    except RecoveryError as err:
        raise StartError(str(err)) from err


def start_reason(err: BaseException) -> str:
    """Why a start failed, in one line a person can act on."""
    if isinstance(err, StartError):
        return str(err)
    if isinstance(err, OSError) and err.strerror:
        where = f": {err.filename}" if err.filename else ""
        return f"{err.strerror}{where}"
    return f"{type(err).__name__}: {err}".splitlines()[0]


class Daemon:
    """One project's daemon: it owns the stores, the writer, the reader pool and the loop.

    ``run`` serves until ``request_shutdown``; ``ready`` is set once the socket is bound and
    the status file written (tests run a daemon in a thread and wait on it).
    """

    def __init__(self, root: Path, config: Config | None = None) -> None:
        self.root = root
        self.config = config or Config.from_env()
        self.pid = os.getpid()
        self.version = __version__
        self.started_at = time.time()
        self.ready = threading.Event()
        self.notifier = Notifier.from_env()  # systemd's NOTIFY_SOCKET, when it started us
        self._stop = threading.Event()
        self.stop_reason: str | None = None  # "idle" once it stopped for want of work
        self._signals = False  # handlers installed (the main thread runs the daemon)
        self.idle = Idle(self.config.idle_exit_s, self._pending)
        self.workspace: Any = None
        self.store: MemoryStore
        self.writer: Writer
        self.reader: Reader
        self.inject_reader: Reader
        self.warmer: Warmer
        self.server: Server | None = None
        self.services: Services
        self.viewer: Any = None  # lintaid.viewer.server.Viewer once `lintaid ui` asked
        self.team: TeamTier | None = None
        self.board: Board | None = None
        self._viewer_lock = threading.Lock()
        # The agent clients' registrations, checked once after start (``_check_clients``):
        # None until then, else the problems found (hooks pointing at something missing).
        self.registrations: list[dict[str, Any]] | None = None
        self._clients_checked: threading.Thread | None = None

    # -- life cycle ----------------------------------------------------------------------
    def request_shutdown(self, reason: str = "requested") -> None:
        self.stop_reason = self.stop_reason or reason
        self._stop.set()
        if self.server is not None:
            self.server.wake()

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.request_shutdown())
        self._signals = True

    def run(self) -> int:
        """Start, serve until asked to stop, stop; StartError (one line) if it cannot start."""
        # The request loop shares the interpreter lock with the reader pool and the writer:
        # at the default 5 ms switch interval a ping waited behind several searches' Python
        # work in turn (p99 37 ms under load, ``benchmarks/loop.py``).
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        try:
            self._start()
        except Exception as err:
            reason = start_reason(err)
            log.error("start_failed", reason=reason, exc_info=err)
            self._abort_start()
            self.notifier.failed(reason)
            raise StartError(reason) from err
        self.ready.set()
        self.notifier.ready(f"serving {self.root}")
        assert self.server is not None
        if self._signals:
            # The loop sleeps without a timer, and a signal may land on any thread: its
            # byte in the loop's wake-up pipe brings the loop back to run the handler.
            signal.set_wakeup_fd(self.server.wake_fd, warn_on_full_buffer=False)
        try:
            self.server.serve(self._stop.is_set, self.idle.timeout, self._idle_due)
        finally:
            if self._signals:
                signal.set_wakeup_fd(-1)
            self._shutdown()
        return 0

    def _start(self) -> None:
        os.umask(0o077)  # everything under .lint-ai is private: 0700 folders, 0600 files
        paths.ensure_state_dir(self.root)
        logs.configure(paths.log_path(self.root), level=self.config.log_level,
                       stderr=self.config.log_stderr)
        endpoint = paths.socket_endpoint(self.root)
        staleness = self.config.staleness or load_staleness(self.root)
        try:
            self.store = MemoryStore(self.root, describe=kind_terms)
        except Damaged as err:
            raise StartError(f"{err}; the daemon will not run on it. Salvage it with: "
                             f"lintaid recover --project {self.root}") from err
        for name, size in remove_leftovers(self.root):  # of backups killed midway
            log.warning("backup_leftover_removed", file=name, bytes=size)
        self.writer = Writer(self.store)
        self.writer.start()
        self.reader = Reader(memory=self.store, wait_visible=self.writer.wait_visible,
                             staleness=staleness)
        # Injection reads the same, except that expired records stay out until reconfirmed.
        self.inject_reader = replace(self.reader, hide_expired=not staleness.inject_expired)
        # What the next SessionStart asks about, judged once the writes settle (warm.py).
        inject_reader = self.inject_reader
        self.warmer = Warmer(lambda: inject_reader.needs_verifying(None, limit=5))
        self.writer.add_flusher(self.warmer.poke)
        self.warmer.start()
        self.warmer.poke()
        self.pause_state = PauseState(paths.pause_path(self.root))
        self.board = Board(self.store.board, self.writer.submit,
                           lambda: self.store.take_time(None),
                           keep_days=self.config.board_keep_days)
        self.board.start()
        self.board.prune_now()  # posts that expired while no daemon ran
        hooks = HookDispatcher(self.root, self.inject_reader, self.store, self.writer.submit,
                               InjectConfig(self.config.inject_top_k,
                                            self.config.inject_max_bytes,
                                            self.config.inject_max_tokens),
                               paused=self.pause_state.paused, board_note=self.board.note)
        # The team tier pushes and pulls on threads of its own; nothing here waits on it.
        self.team = TeamTier(self.root, self.store, self.writer.submit, registry.names)
        self.team.start()
        self.writer.add_flusher(self.team.wake)
        if self.store.recovered:  # written back after WAL loss: derived, indexed, shared
            self.writer.submit(self.store.settle_recovered, recall=False)
        services = Services(reader=self.reader, writes=self.store, submit=self.writer.submit,
                            hooks=hooks, control=self, provenance=self.provenance,
                            team=self.team, board=self.board)
        self.services = services
        self.server = Server(services, endpoint, on_request=self.idle.request)
        self.server.bind()
        self._write_status(endpoint)
        log.info("started", pid=self.pid, endpoint=endpoint, root=str(self.root),
                 index_rebuilt=self.store.index.rebuilt, version=self.version)
        self.drainer = SpoolDrainer(self.root, hooks.handle)
        self.drainer.start()
        self._backups = threading.Thread(target=self._backup_loop, name="lintaid-backup",
                                         daemon=True)
        self._backups.start()
        self._clients_checked = threading.Thread(target=self._check_clients,
                                                 name="lintaid-registrations", daemon=True)
        self._clients_checked.start()
        if self.config.watch_workspace:
            self._start_workspace()
        else:  # memory derived against a workspace an earlier run read no longer is
            self._link_documents(None)
        if self.config.http_port is not None:
            try:
                self._serve_http(self.config.http_port or None)
            except Exception as err:  # memory serves on without it
                log.error("http_failed", port=self.config.http_port, error=str(err))

    def _abort_start(self) -> None:
        """Undo what a failed start opened, in reverse order; the first reason is the one
        to tell, so later failures here are ignored."""
        closers = [self.board.close if self.board else None,
                   self.team.stop if self.team else None,
                   getattr(getattr(self, "warmer", None), "stop", None),
                   self.server.close if self.server else None,
                   getattr(getattr(self, "writer", None), "stop", None),
                   getattr(getattr(self, "store", None), "close", None),
                   self._remove_status]
        for close in closers:
            try:
                if close is not None:
                    close()
            except Exception:
                pass

    def _start_workspace(self) -> None:
        from .workspace.service import Workspace

        try:
            # The agent clients' own configuration and transcripts are never project files.
            excluded = [path for client in registry.CLIENTS.values()
                        for path in client.config_files(self.root)]
            self.workspace = Workspace(self.root, submit=self.writer.submit, excluded=excluded,
                                       memory=self.store)
            self._link_documents(self.workspace.store)  # before the first reconcile
            self.writer.add_flusher(self.workspace.flush)
            self.reader.workspace = self.inject_reader.workspace = self.workspace
            self.workspace.start()
        except Exception as err:  # memory must keep working even if the watcher cannot
            log.error("workspace_failed", error=str(err), exc_info=err)
            self._link_documents(None)
            self.workspace = None
            self.reader.workspace = self.inject_reader.workspace = None

    def _link_documents(self, documents: Any) -> None:
        """Derive memory against ``documents`` (the workspace's store, or None) before the
        first request is answered; a failure is logged, memory keeps serving."""
        try:
            chains = self.writer.link_documents(documents).result(timeout=600)
            log.info("documents_linked", workspace=documents is not None, chains=chains)
        except Exception as err:
            log.error("documents_link_failed", error=str(err), exc_info=err)

    def _shutdown(self) -> None:
        log.info("stopping")
        self.notifier.stopping()
        self._remove_status()
        with self._viewer_lock:
            if self.viewer is not None:
                self._remove_owned(paths.http_path(self.root))
                self.viewer.stop()
                self.viewer = None
        self.drainer.stop()
        if self.workspace is not None:
            self.workspace.stop()
        if self.board is not None:  # waiting reads are answered now, with what there is
            self.board.close()
        assert self.server is not None
        self.server.drain()
        if self.team is not None:
            self.team.stop()
        self.warmer.stop()
        self.writer.stop()
        self.server.close()
        self._backups.join(60)
        if self._clients_checked is not None:
            self._clients_checked.join(60)
        if self.store.changed_since_backup() or not rolling_backups(self.root):
            self._rolling_backup("stop")
        self.store.close()
        log.info("stopped", reason=self.stop_reason)

    # -- idle (the request loop's thread) ---------------------------------------------------
    def _pending(self, asking: int = 0) -> str | None:
        """What work is still pending (None: none), so an idle daemon does not stop or rest
        under it: requests running (beyond the ``asking`` ones), the writer's queue, a
        workspace reconcile or events the watcher has not handed over, spooled events, the
        team tier's unpushed rows."""
        if self.server is not None and self.server.in_flight > asking:
            return "requests"
        if self.writer.depth:
            return "writer"
        ws = self.workspace
        if ws is not None and (not ws.ready.is_set() or ws.progress.get("running")
                               or ws.watcher.queue_depth):
            return "workspace"
        if spool_files.pending(self.root):
            self.drainer.wake()
            return "spool"
        if self.team is not None and self.team.config and self.store.outbox.depth()[0]:
            return "team"
        return None

    def _idle_due(self) -> None:
        due = self.idle.due()
        if due == "rest":
            self._rest()
        elif due == "retire":
            log.info("idle_exit", idle_s=self.config.idle_exit_s)
            assert self.server is not None
            self.server.retire()
        elif due == "stop":
            self.request_shutdown("idle")

    def _rest(self) -> None:
        """Let go of the indexes until they are used again: each open Tantivy index polls
        its ``meta.json`` twice a second on a thread of its own, while it stays open. On the
        store's indexer thread, which writes the memory indexes."""
        log.info("resting", idle_s=self.idle.rest_after_s)
        workspace = self.workspace

        def rest() -> None:
            self.store.index.rest()
            if workspace is not None:  # its writer's calls and this one take turns
                workspace.store.index.rest()
            release_free_memory()

        self.store.request_index(rest)  # not through the writer: no batch, no flushers

    # -- control (ops answered by the daemon itself) ---------------------------------------
    def provenance(self) -> tuple[str | None, str | None]:
        return git_state(str(self.root))

    def ping(self) -> dict[str, Any]:
        return {"pong": True, "pid": self.pid, "version": self.version,
                "protocol": protocol.VERSION}

    def reindex(self, full: bool) -> Future[dict[str, Any]]:
        if self.workspace is None:
            raise protocol.BadRequest("the workspace watcher is off for this daemon")
        future: Future[dict[str, Any]] = self.workspace.reindex(full=full)
        return future

    def pause(self, seconds: float | None, session_id: str | None) -> dict[str, Any]:
        return self.pause_state.pause(seconds, session_id)

    def resume(self, session_id: str | None) -> dict[str, Any]:
        return self.pause_state.resume(session_id)

    def _check_clients(self) -> None:
        """Once, after start, off the request path: renew this interpreter's hook launcher
        when one is installed, then check every agent client's registration without running
        it; ``status`` reports what points at something missing."""
        from .doctor import registrations
        from .integrations.hook_entries import renew_launcher

        try:
            renew_launcher()
            found = registrations(self.root)
        except Exception as err:  # a status line, never a reason for the daemon to fail
            log.error("registrations_check_failed", error=str(err), exc_info=err)
            return
        self.registrations = [{"name": c.name, "detail": c.detail, "fix": c.fix}
                              for c in found]
        if found:
            log.warning("registrations_broken", problems=self.registrations)

    # -- backups ---------------------------------------------------------------------------
    def _backup_loop(self) -> None:
        while not self._stop.wait(self.config.backup_interval_s):
            if self.store.changed_since_backup():
                self._rolling_backup("scheduled")

    def _rolling_backup(self, reason: str) -> None:
        """A rolling backup that never raises: a failed one is logged, older ones stay."""
        try:
            info = self.store.backup(retention=self.config.backups)
        except Exception as err:
            log.error("backup_failed", reason=reason, error=str(err))
            return
        log.info("backed_up", reason=reason, **info.to_dict())

    def backup(self, to: str | None) -> dict[str, Any]:
        """The ``backup`` op: a checked copy to ``to`` (absolute), or a rolling backup."""
        target: Path | None = None
        if to is not None:
            target = Path(to)
            if not target.is_absolute():
                raise protocol.BadRequest("'to' must be an absolute path", arg="to")
            if target.is_dir():
                raise protocol.BadRequest(f"'to' is a folder: {to}", arg="to")
            if not target.parent.is_dir():
                raise protocol.BadRequest(f"'to': no folder {target.parent}", arg="to")
        try:
            info = self.store.backup(target, self.config.backups)
        except Damaged as err:
            raise protocol.RemoteError(
                f"{err}; no backup was written. Salvage it with: lintaid recover --project "
                f"{self.root}", protocol.INTERNAL) from err
        log.info("backed_up", reason="requested", **info.to_dict())
        return info.to_dict()

    def ui(self, port: int | None) -> dict[str, Any]:
        """Start the web viewer on the loopback address (once per daemon), or find it."""
        viewer, started = self._serve_http(port)
        return {**viewer.to_dict(), "started": started}

    def http(self, port: int | None) -> dict[str, Any]:
        """Start the HTTP API (the viewer's server) on the loopback address, or find it."""
        viewer, started = self._serve_http(port)
        return {**self._http_info(viewer), "started": started}

    def _http_info(self, viewer: Any) -> dict[str, Any]:
        base = f"http://127.0.0.1:{viewer.port}"
        return {"url": base, "port": viewer.port, "openapi": f"{base}/openapi.json",
                "token_file": str(paths.http_token_path(self.root)), "pid": self.pid}

    def _serve_http(self, port: int | None) -> tuple[Any, bool]:
        """The daemon's one HTTP server (the viewer and the API), started once on the
        loopback address: (it, whether this call started it)."""
        with self._viewer_lock:
            if self.viewer is not None:
                if port is not None and port != self.viewer.port:
                    raise protocol.BadRequest(
                        f"the viewer already listens at 127.0.0.1:{self.viewer.port} "
                        f"({self.viewer.url}); it moves only with a new daemon "
                        "(lintaid stop)", arg="port")
                return self.viewer, False
            from .api.app import Api
            from .api.token import load_or_create
            from .viewer.server import Viewer

            writer = self.writer
            api = Api(self.services, load_or_create(paths.http_token_path(self.root)),
                      version=self.version, queued=lambda: writer.depth)
            viewer = Viewer(self.services, self.root, port, on_request=self.idle.touch,
                            api=api)
            try:
                viewer.start()
            except OSError as err:
                raise protocol.BadRequest(
                    f"cannot listen on 127.0.0.1:{port or 0}: {err.strerror or err}",
                    arg="port") from None
            self.writer.add_flusher(viewer.changed)
            self.viewer = viewer
            write_atomic(paths.http_path(self.root), json.dumps(self._http_info(viewer)))
            return viewer, True

    # -- status ----------------------------------------------------------------------------
    def _write_status(self, endpoint: str) -> None:
        write_atomic(paths.endpoint_file(self.root), endpoint + "\n")
        data = {
            "pid": self.pid,
            "create_time": psutil.Process(self.pid).create_time(),
            "endpoint": endpoint,
            "protocol": protocol.VERSION,
            "version": self.version,
            "started_at": self.started_at,
            "root": str(self.root),
        }
        write_atomic(paths.status_path(self.root), json.dumps(data))

    def _remove_status(self) -> None:
        """Remove the status file, but only while it still names this process."""
        self._remove_owned(paths.status_path(self.root))

    def _remove_owned(self, target: Path) -> None:
        """Remove a JSON file of this daemon's, but only while it still names this process."""
        try:
            if json.loads(target.read_text()).get("pid") == self.pid:
                target.unlink()
        except (OSError, ValueError):
            pass

    def status(self) -> dict[str, Any]:
        proc = psutil.Process(self.pid)
        users = len(self.store.index.users())
        result: dict[str, Any] = {
            "pid": self.pid,
            "root": str(self.root),
            "endpoint": self.server.endpoint if self.server else None,
            "uptime_s": round(time.time() - self.started_at, 1),
            "started_at": self.started_at,
            "rss_bytes": proc.memory_info().rss,
            "threads": proc.num_threads(),
            "requests": self.server.requests if self.server else 0,
            "writer_queue": self.writer.depth,
            "spool_depth": len(spool_files.pending(self.root)),
            "memory": self.store.counts(),
            # What injection gave and whether it was used (``lintaid stats``).
            "ledger": {"total": self.store.ledger.totals(),
                       "last_7_days": self.store.ledger.totals(time.time() - 7 * 86400)},
            # Which search runs: lexical only (no semantic extra ships; see the README).
            "search": {"mode": "lexical", "indexes": "per user", "users": users},
            "clients": {name: client.installed(self.root)
                        for name, client in registry.CLIENTS.items()},
            "registrations": self.registrations,
            "pause": self.pause_state.to_dict(),
            "viewer": self.viewer.to_dict() if self.viewer is not None else None,
            "http": self._http_info(self.viewer) if self.viewer is not None else None,
            "team": self.team.status() if self.team is not None and self.team.config else None,
            "versions": {
                "lintaid": self.version,
                "protocol": protocol.VERSION,
                "python": ".".join(map(str, __import__("sys").version_info[:3])),
                "pyzmq": _version("pyzmq"),
                "tantivy": _version("tantivy"),
            },
        }
        kept = rolling_backups(self.root)
        result["integrity"] = {"memory": self.store.integrity,
                               "missing_acknowledged": self.store.missing or None}
        result["backups"] = {"kept": len(kept), "newest": str(kept[-1]) if kept else None,
                             "newest_at": _mtime(kept[-1]) if kept else None,
                             "interval_s": self.config.backup_interval_s,
                             "bytes": total_bytes(kept), **self.config.backups.to_dict()}
        # When an idle daemon stops: ``stops_at`` (None: never), if nothing asks before.
        result["idle"] = {"exit_after_s": self.config.idle_exit_s,
                          "stops_at": self.idle.stops_at(), "pending": self._pending(asking=1),
                          "resting": self.idle.resting}
        indexes = {"memory": {"users": users,
                              "rebuilt_at_start": self.store.index.rebuilt,
                              "recreated_users": len(self.store.index.broken)}}
        if self.workspace is not None:
            result["workspace"] = self.workspace.status()
            indexes["workspace"] = {"rebuilt_at_start": self.workspace.store.index.rebuilt}
        # What ``lintaid doctor`` reports of the derived indexes: the daemon opened and checked
        # each one at start (and rebuilt what was missing, damaged or outdated).
        result["indexes"] = indexes
        return result
