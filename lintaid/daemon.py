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
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil
import structlog

from lintaid_client import paths, protocol
from lintaid_client import spool as spool_files

from . import __version__, logs
from .capture.git import git_state
from .hooks import HookDispatcher, InjectConfig
from .integrations import registry
from .lint import load_config as load_staleness
from .notify import Notifier
from .ops import Services
from .pause import PauseState
from .policy.staleness import StalenessConfig
from .search import Reader
from .server import Server
from .spool_drain import SpoolDrainer
from .store.memory import MemoryStore
from .writer import Writer

log = structlog.get_logger("lintaid.daemon")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass
class Config:
    inject_top_k: int = 5
    inject_max_bytes: int = 8000
    watch_workspace: bool = True
    log_level: str = "info"
    log_stderr: bool = False
    staleness: StalenessConfig | None = None  # None: read .lint-ai/staleness.toml and env

    @classmethod
    def from_env(cls) -> Config:
        cfg = cls()
        if os.environ.get("LINTAID_NO_WATCH") == "1":
            cfg.watch_workspace = False
        cfg.log_level = os.environ.get("LINTAID_LOG_LEVEL", cfg.log_level)
        return cfg


def _write_private(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` atomically (temp file, fsync, rename), mode 0600."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, target)


class StartError(Exception):
    """The daemon could not start; the message says why in one line."""


def start_reason(err: BaseException) -> str:
    """Why a start failed, in one line a person can act on."""
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
        self.workspace: Any = None
        self.store: MemoryStore
        self.writer: Writer
        self.reader: Reader
        self.inject_reader: Reader
        self.server: Server | None = None

    # -- life cycle ----------------------------------------------------------------------
    def request_shutdown(self) -> None:
        self._stop.set()
        if self.server is not None:
            self.server.wake()

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.request_shutdown())

    def run(self) -> int:
        """Start, serve until asked to stop, stop; StartError (one line) if it cannot start."""
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
        try:
            self.server.serve(self._stop.is_set)
        finally:
            self._shutdown()
        return 0

    def _start(self) -> None:
        os.umask(0o077)  # everything under .lint-ai is private: 0700 folders, 0600 files
        paths.ensure_state_dir(self.root)
        logs.configure(paths.log_path(self.root), level=self.config.log_level,
                       stderr=self.config.log_stderr)
        endpoint = paths.socket_endpoint(self.root)
        staleness = self.config.staleness or load_staleness(self.root)
        self.store = MemoryStore(self.root)
        self.writer = Writer(self.store)
        self.writer.start()
        self.reader = Reader(memory=self.store, wait_visible=self.writer.wait_visible,
                             staleness=staleness)
        # Injection reads the same, except that expired records stay out until reconfirmed.
        self.inject_reader = replace(self.reader, hide_expired=not staleness.inject_expired)
        self.pause_state = PauseState(paths.pause_path(self.root))
        hooks = HookDispatcher(self.root, self.inject_reader, self.store, self.writer.submit,
                               InjectConfig(self.config.inject_top_k,
                                            self.config.inject_max_bytes),
                               paused=self.pause_state.paused)
        services = Services(reader=self.reader, writes=self.store, submit=self.writer.submit,
                            hooks=hooks, control=self, provenance=self.provenance)
        self.server = Server(services, endpoint)
        self.server.bind()
        self._write_status(endpoint)
        log.info("started", pid=self.pid, endpoint=endpoint, root=str(self.root),
                 index_rebuilt=self.store.index.rebuilt, version=self.version)
        self.drainer = SpoolDrainer(self.root, hooks.handle)
        self.drainer.start()
        if self.config.watch_workspace:
            self._start_workspace()

    def _abort_start(self) -> None:
        """Undo what a failed start opened, in reverse order; the first reason is the one
        to tell, so later failures here are ignored."""
        closers = [self.server.close if self.server else None,
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
            self.workspace = Workspace(self.root, submit=self.writer.submit, excluded=excluded)
            self.writer.add_flusher(self.workspace.flush)
            self.reader.workspace = self.inject_reader.workspace = self.workspace
            self.workspace.start()
        except Exception as err:  # memory must keep working even if the watcher cannot
            log.error("workspace_failed", error=str(err), exc_info=err)
            self.workspace = None
            self.reader.workspace = self.inject_reader.workspace = None

    def _shutdown(self) -> None:
        log.info("stopping")
        self.notifier.stopping()
        self._remove_status()
        self.drainer.stop()
        if self.workspace is not None:
            self.workspace.stop()
        assert self.server is not None
        self.server.drain()
        self.writer.stop()
        self.server.close()
        self.store.close()
        log.info("stopped")

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

    # -- status ----------------------------------------------------------------------------
    def _write_status(self, endpoint: str) -> None:
        _write_private(paths.endpoint_file(self.root), endpoint + "\n")
        data = {
            "pid": self.pid,
            "create_time": psutil.Process(self.pid).create_time(),
            "endpoint": endpoint,
            "protocol": protocol.VERSION,
            "version": self.version,
            "started_at": self.started_at,
            "root": str(self.root),
        }
        _write_private(paths.status_path(self.root), json.dumps(data))

    def _remove_status(self) -> None:
        """Remove the status file, but only while it still names this process."""
        target = paths.status_path(self.root)
        try:
            if json.loads(target.read_text()).get("pid") == self.pid:
                target.unlink()
        except (OSError, ValueError):
            pass

    def status(self) -> dict[str, Any]:
        proc = psutil.Process(self.pid)
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
            # Which search runs: lexical only (no semantic extra ships; see the README).
            "search": {"mode": "lexical", "indexes": "per user",
                       "users": len(self.store.index.users())},
            "clients": {name: client.installed(self.root)
                        for name, client in registry.CLIENTS.items()},
            "pause": self.pause_state.to_dict(),
            "versions": {
                "lintaid": self.version,
                "protocol": protocol.VERSION,
                "python": ".".join(map(str, __import__("sys").version_info[:3])),
                "pyzmq": _version("pyzmq"),
                "tantivy": _version("tantivy"),
            },
        }
        if self.workspace is not None:
            result["workspace"] = self.workspace.status()
        return result
