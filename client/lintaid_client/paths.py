"""Where a project's state lives: root, state folder, socket. Defined once, used by both sides.

Standard library only: the hook shim imports this on every event.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Final

STATE_DIR_NAME: Final = ".lint-ai"


class ProjectError(Exception):
    """The project named (``--project``, ``LINTAID_PROJECT``) is not a usable folder."""
# Linux sun_path is 108 bytes with the NUL; macOS 104. Keep well below both.
IPC_PATH_MAX: Final = 100


def find_project_root(start: str | os.PathLike[str] | None = None) -> Path:
    """Return the project root for ``start`` (default: the working directory).

    ``LINTAID_PROJECT`` wins; then the nearest ancestor holding ``.lint-ai/``; then the git
    top-level; then ``start`` itself.
    """
    env = os.environ.get("LINTAID_PROJECT")
    if env:
        root = Path(env).expanduser().resolve()
        if not root.is_dir():
            raise ProjectError(f"LINTAID_PROJECT={env} is not a folder")
        return root
    here = Path(start or os.getcwd()).expanduser().resolve()
    for candidate in (here, *here.parents):
        if (candidate / STATE_DIR_NAME).is_dir():
            return candidate
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return here


def state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME


def ensure_state_dir(root: Path) -> Path:
    """Create ``<root>/.lint-ai/`` (private: 0700) with its own ``.gitignore`` so git never
    sees our files."""
    state = state_dir(root)
    state.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        if state.stat().st_mode & 0o077:
            os.chmod(state, 0o700)
    except OSError:
        pass  # not ours to change (a read-only tree): the daemon reports it
    ignore = state / ".gitignore"
    if not ignore.exists():
        fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write("*\n")
    return state


def status_path(root: Path) -> Path:
    return state_dir(root) / "daemon.json"


def lock_path(root: Path) -> Path:
    return state_dir(root) / "daemon.lock"


def spool_dir(root: Path) -> Path:
    return state_dir(root) / "spool"


def log_dir(root: Path) -> Path:
    return state_dir(root) / "logs"


def log_path(root: Path) -> Path:
    return log_dir(root) / "lintaid.log"


def start_error_path(root: Path) -> Path:
    """Where a daemon started in the background writes why it could not start."""
    return log_dir(root) / "start.err"


def memory_db_path(root: Path) -> Path:
    return state_dir(root) / "memory.db"


def workspace_db_path(root: Path) -> Path:
    return state_dir(root) / "workspace.db"


def index_dir(root: Path, name: str) -> Path:
    return state_dir(root) / "index" / name


def _private_dir(folder: Path) -> bool:
    """Create ``folder`` 0700 if absent; True when it is a real folder of ours, private."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return False
    if st.st_mode & 0o077:
        try:
            os.chmod(folder, 0o700)
        except OSError:
            return False
    return True


def socket_dir() -> Path:
    """Return the private (0700) folder the sockets live in, creating it if needed.

    ``$XDG_RUNTIME_DIR/lintaid``, else ``/tmp/lintaid-<uid>``. When that one is not ours
    (another user created it first, or it is a link), a private folder in the home directory
    is used instead, and a one-line warning says so on stderr.
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        folder = Path(runtime) / "lintaid"
    else:
        folder = Path(tempfile.gettempdir()) / f"lintaid-{os.getuid()}"
    if _private_dir(folder):
        return folder
    fallback = Path.home() / ".cache" / "lintaid" / "run"
    if _private_dir(fallback) and len(str(fallback)) < IPC_PATH_MAX - 22:
        print(f"lintaid: {folder} is not a private folder of this user; using {fallback}",
              file=sys.stderr)
        return fallback
    raise PermissionError(f"{folder} is not a private folder of this user, and "
                          f"{fallback} cannot be used either")


def project_key(root: Path) -> str:
    return hashlib.sha256(str(root).encode()).hexdigest()[:16]


def endpoint(root: Path) -> str:
    """Return the ``ipc://`` endpoint for the project: short, private, stable per root."""
    path = socket_dir() / f"{project_key(root)}.sock"
    if len(str(path)) > IPC_PATH_MAX:
        path = Path(tempfile.gettempdir()) / f"lintaid-{os.getuid()}" / f"{project_key(root)}.sock"
    return f"ipc://{path}"
