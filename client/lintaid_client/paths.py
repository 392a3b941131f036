"""Where a project's state lives: root, state folder, files, socket — as ``pathlib.Path``.

The knowledge itself is ``locate`` (one definition, light enough for the hook shim); this is
its face for the daemon, the CLI and the clients.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from . import locate
from .locate import ProjectError

STATE_DIR_NAME: Final = locate.STATE_DIR_NAME
IPC_PATH_MAX: Final = locate.IPC_PATH_MAX

__all__ = ["ProjectError"]


def find_project_root(start: str | os.PathLike[str] | None = None) -> Path:
    """The project root for ``start`` (default: the working directory); see ``locate``."""
    return Path(locate.find_root(os.fspath(start) if start is not None else None))


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


def http_token_path(root: Path) -> Path:
    """The HTTP API's bearer token (mode 0600), made on the first start and kept."""
    return state_dir(root) / "http-token"


def http_path(root: Path) -> Path:
    """Where the HTTP API listens (``{"url", "port", ...}``), while it does."""
    return state_dir(root) / "http.json"


def lock_path(root: Path) -> Path:
    return state_dir(root) / "daemon.lock"


def pause_path(root: Path) -> Path:
    """Where the daemon keeps a pause (``lintaid pause``), so a restart keeps it."""
    return state_dir(root) / "pause.json"


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


def socket_dir() -> Path:
    return Path(locate.socket_dir())


def project_key(root: Path) -> str:
    return locate.project_key(str(root))


def endpoint(root: Path) -> str:
    """Where the project's daemon listens (see ``locate.endpoint``)."""
    return locate.endpoint(str(root))


def socket_endpoint(root: Path) -> str:
    """The endpoint a daemon binds for the project (see ``locate.socket_endpoint``)."""
    return locate.socket_endpoint(str(root))


def endpoint_file(root: Path) -> Path:
    return state_dir(root) / locate.ENDPOINT_FILE
