"""Talk to a project's daemon: one DEALER socket with deadlines, a liveness probe, a detached start.

Imports only the standard library, pyzmq and msgpack (the hook shim's hot path).
Every socket has ``linger=0`` so a process never hangs on exit waiting for an absent peer.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import zmq

from . import launch, lock, paths, protocol


class Connection:
    """A DEALER connected to one project's daemon. Not thread-safe; one per thread."""

    def __init__(self, root: Path, *, context: zmq.Context[Any] | None = None) -> None:
        self.root = root
        self.endpoint = paths.endpoint(root)
        self._context = context or zmq.Context.instance()
        self._socket: zmq.Socket[Any] | None = None
        self._pid = os.getpid()
        self.last_token: str | None = None

    def _sock(self) -> zmq.Socket[Any]:
        if self._pid != os.getpid():  # a socket must never cross a fork
            self._socket = None
            self._context = zmq.Context()
            self._pid = os.getpid()
        if self._socket is None:
            sock = self._context.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.IMMEDIATE, 1)
            sock.connect(self.endpoint)
            self._socket = sock
        return self._socket

    def reset(self) -> None:
        """Drop the socket, so replies to abandoned requests can never be mistaken for new ones."""
        if self._socket is not None:
            self._socket.close(linger=0)
            self._socket = None

    def close(self) -> None:
        self.reset()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, op: str, args: dict[str, Any] | None = None, *, timeout: float = 5.0,
             after: str | None = None) -> Any:
        """Send one request and return its result; raise a LintaidError subclass on failure.

        DaemonUnavailable means nobody is bound to the endpoint (nothing was sent);
        DaemonTimeout means the request went out but no reply came before the deadline.
        ``after``: a token from an earlier write; a search answers only once that write is
        searchable. A write's own token is kept in ``last_token``.
        """
        deadline = time.monotonic() + timeout
        sock = self._sock()
        # IMMEDIATE: POLLOUT only once a peer is connected, so "down" and "slow" differ.
        connect_budget = min(timeout, 0.25)
        # Connected within a few milliseconds when a daemon listens; if not, ask the socket
        # file whether anyone is there at all before spending the rest of the budget.
        if not sock.poll(5, zmq.POLLOUT) and nobody_listens(self.endpoint):
            connect_budget = 0.0  # told at once, not after the budget
        if not sock.poll(int(connect_budget * 1000), zmq.POLLOUT):
            self.reset()
            raise protocol.DaemonUnavailable(f"no lintaid daemon answers at {self.endpoint}")
        message = protocol.request(op, args, after=after)
        data = protocol.pack(message)
        if len(data) > protocol.MAX_MESSAGE_BYTES:
            raise protocol.BadRequest("request larger than 8 MiB", protocol.TOO_LARGE)
        try:
            sock.send(data, zmq.NOBLOCK)
        except zmq.Again:
            # The daemon went away between the poll and the send: nothing was queued.
            self.reset()
            raise protocol.DaemonUnavailable(
                f"the lintaid daemon at {self.endpoint} went away") from None
        sent = time.monotonic()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.reset()
                raise protocol.DaemonTimeout(f"daemon did not answer {op!r} within {timeout:.2f}s")
            # A long wait looks once a second whether anyone is still there: a daemon killed
            # while it works (an import, a reindex, a backup) must not leave its caller
            # waiting out the whole deadline.
            if not sock.poll(int(min(remaining, 1.0) * 1000) + 1, zmq.POLLIN):
                if time.monotonic() - sent >= 1.0 and nobody_listens(self.endpoint):
                    self.reset()
                    raise protocol.DaemonGone(
                        f"the lintaid daemon at {self.endpoint} went away while it answered "
                        f"{op!r}: what it acknowledged before is kept, the rest was not done "
                        "(an import, a backup or a reindex may simply be run again)")
                continue
            try:
                reply = protocol.unpack(sock.recv(zmq.NOBLOCK))
            except (ValueError, zmq.Again):
                continue
            if isinstance(reply, dict) and reply.get("id") == message["id"]:
                if isinstance(reply.get("token"), str):
                    self.last_token = reply["token"]
                return protocol.raise_for_error(reply)


def read_status(root: Path) -> dict[str, Any] | None:
    """Return the daemon's status file as a dict, or None when absent or unreadable."""
    try:
        data = json.loads(paths.status_path(root).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def nobody_listens(endpoint: str) -> bool:
    """True when no process accepts connections on the ``ipc://`` endpoint (no socket file,
    or one left by a daemon that is gone); False when one does or it cannot be told.

    A DEALER cannot tell "nobody there" from "not connected yet" before its connect budget
    runs out; a plain connect can, at once: a start or an auto-start asks this first instead
    of spending a quarter second per probe while the daemon is still coming up, and a CLI
    command with no daemon says so without that wait."""
    path = endpoint.removeprefix("ipc://")
    if path == endpoint:
        return False
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(0.5)  # a stopped daemon's full backlog must not hold the caller
    try:
        sock.connect(path)
    except (FileNotFoundError, ConnectionRefusedError):
        return True
    except OSError:
        return False
    finally:
        sock.close()
    return False


def ping(root: Path, timeout: float = 0.5) -> dict[str, Any] | None:
    """Return the daemon's ping answer, or None when it does not answer in time (at once
    when nobody listens at its endpoint)."""
    with Connection(root) as conn:
        try:
            answer = conn.call("ping", timeout=timeout)
        except protocol.LintaidError:
            return None
    return answer if isinstance(answer, dict) else None


def _unwritable(state: Path) -> str | None:
    """Why nothing (not even the reason for a failed start) can be written in ``state``."""
    try:
        if os.statvfs(state).f_flag & os.ST_RDONLY:
            return f"{state} is on a read-only file system"
    except OSError:
        return None
    return None if os.access(state, os.W_OK) else f"{state} is not writable by this user"


def ensure_daemon(root: Path, *, timeout: float = 15.0) -> dict[str, Any]:
    """Return once the project's daemon answers ``ping``, starting it detached if needed."""
    answer = ping(root, timeout=0.5)
    if answer is not None:
        return answer
    try:
        proc = launch.spawn_daemon(root)
    except OSError as err:  # a read-only project tree, a full disk, no permission
        where = err.filename or paths.state_dir(root)
        raise protocol.DaemonUnavailable(
            f"the daemon could not start: cannot create {where}: {err.strerror or err}"
        ) from None
    deadline = time.monotonic() + timeout
    respawns = 3
    while time.monotonic() < deadline:
        answer = ping(root, timeout=0.5)
        if answer is not None:
            return answer
        if proc.poll() is not None:
            # It exited: another daemon holds the lock (it is starting: wait for it to
            # answer; or stopping, idle: start one once it is gone), or it failed (say why,
            # in one line).
            if lock.is_held(paths.lock_path(root)):
                time.sleep(0.05)
                continue
            answer = ping(root, timeout=1.0)
            if answer is not None:
                return answer
            if proc.returncode == launch.EXIT_LOCKED and respawns:  # the holder stopped
                respawns -= 1
                proc = launch.spawn_daemon(root)
                deadline = time.monotonic() + timeout
                continue
            reason = launch.start_failure(root) or _unwritable(paths.state_dir(root))
            if reason:
                raise protocol.DaemonUnavailable(f"the daemon could not start: {reason}")
            raise protocol.DaemonUnavailable(
                f"the daemon exited with code {proc.returncode}; see {paths.log_path(root)}"
            )
        time.sleep(0.05)
    raise protocol.DaemonUnavailable(f"the daemon did not answer within {timeout:.0f}s")
