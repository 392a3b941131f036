"""Where a project's state lives: root, state folder, socket. Defined once, used by both sides.

Standard library only: the hook shim imports this on every event.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Final

STATE_DIR_NAME: Final = ".lint-ai"
# Linux sun_path is 108 bytes with the NUL; macOS 104. Keep well below both.
IPC_PATH_MAX: Final = 100


def find_project_root(start: str | os.PathLike[str] | None = None) -> Path:
    """Return the project root for ``start`` (default: the working directory).

    ``LINTAID_PROJECT`` wins; then the nearest ancestor holding ``.lint-ai/``; then the git
    top-level; then ``start`` itself.
    """
    env = os.environ.get("LINTAID_PROJECT")
    if env:
        return Path(env).expanduser().resolve()
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
    """Create ``<root>/.lint-ai/`` with its own ``.gitignore`` so git never sees our files."""
    state = state_dir(root)
    state.mkdir(parents=True, exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
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


def memory_db_path(root: Path) -> Path:
    return state_dir(root) / "memory.db"


def workspace_db_path(root: Path) -> Path:
    return state_dir(root) / "workspace.db"


def index_dir(root: Path, name: str) -> Path:
    return state_dir(root) / "index" / name


def socket_dir() -> Path:
    """Return the private (0700) folder the sockets live in, creating it if needed."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        folder = Path(runtime) / "lintaid"
    else:
        folder = Path(tempfile.gettempdir()) / f"lintaid-{os.getuid()}"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = folder.stat()
    if st.st_uid != os.getuid():
        raise PermissionError(f"{folder} belongs to another user")
    if st.st_mode & 0o077:
        os.chmod(folder, 0o700)
    return folder


def project_key(root: Path) -> str:
    return hashlib.sha256(str(root).encode()).hexdigest()[:16]


def endpoint(root: Path) -> str:
    """Return the ``ipc://`` endpoint for the project: short, private, stable per root."""
    path = socket_dir() / f"{project_key(root)}.sock"
    if len(str(path)) > IPC_PATH_MAX:
        path = Path(tempfile.gettempdir()) / f"lintaid-{os.getuid()}" / f"{project_key(root)}.sock"
    return f"ipc://{path}"
