"""Start a project's daemon in the background, and tell why it could not start.

Standard library only (no pyzmq): the hook shim's spooling child uses it too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from . import lock, paths

EXIT_LOCKED = 4
"""How ``lintaid start --foreground`` exits when another daemon holds the project's lock: not
a failed start (that daemon may be stopping, see ``connection.ensure_daemon``)."""

def daemon_command(root: Path) -> list[str]:
    return [sys.executable, "-m", "lintaid", "start", "--foreground", "--project", str(root)]


def spawn_daemon(root: Path) -> subprocess.Popen[bytes]:
    """Start the daemon detached from this process (new session, no inherited stdio).

    Its stderr goes to ``logs/start.err`` (private), so why a start failed can be told.
    """
    paths.ensure_state_dir(root)
    err_path = paths.start_error_path(root)
    err_fd: int = subprocess.DEVNULL
    try:
        err_path.parent.mkdir(mode=0o700, exist_ok=True)
        err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:
        pass  # a read-only or full disk: the log may still say why
    try:
        # Its log has a file of its own (rotated); stderr is kept for why a start failed.
        env = {**os.environ, "LINTAID_LOG_STDERR": "0"}
        env.pop("NOTIFY_SOCKET", None)  # never answer for a service manager we were not
        return subprocess.Popen(
            daemon_command(root), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=err_fd, start_new_session=True, close_fds=True, cwd=str(root), env=env)
    finally:
        if err_fd != subprocess.DEVNULL:
            os.close(err_fd)


RETRY_FAILED_START_S = 30.0


def start_detached(root: Path) -> None:
    """Start the daemon unless one is running or starting (its lock is held), or a start
    failed moments ago: a damaged memory.db must not cost every agent event a doomed start
    (the event is spooled either way; ``lintaid start`` always tries)."""
    if lock.is_held(paths.lock_path(root)) or _failed_recently(root):
        return
    try:
        spawn_daemon(root)
    except OSError as err:
        print(f"lintaid: could not start the daemon: {err}", file=sys.stderr)


def _failed_recently(root: Path) -> bool:
    try:
        st = paths.start_error_path(root).stat()
    except OSError:
        return False
    if not (st.st_size > 0 and 0 <= time.time() - st.st_mtime < RETRY_FAILED_START_S):
        return False
    reason = start_failure(root) or ""
    return not reason.startswith(lock.HELD_BY_ANOTHER)  # lost a race to start: no failure


def start_failure(root: Path) -> str | None:
    """The last line a daemon that could not start wrote on stderr, if any."""
    try:
        lines = paths.start_error_path(root).read_text(errors="replace").strip().splitlines()
    except OSError:
        return None
    return lines[-1].removeprefix("lintaid: ") if lines else None
