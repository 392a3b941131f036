"""The HTTP API's bearer token: one per project, in a file only its owner may read.

Made on the first start (32 random bytes, URL-safe) and kept, so a client configured with it
goes on working across daemons. A file anyone else may read is made private again; one that
holds no usable token is replaced.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Final

from lintaid.logs import get_logger

log = get_logger("lintaid.api")

MIN_TOKEN_CHARS: Final = 32


def load_or_create(path: Path) -> str:
    """The token in ``path``, made (mode 0600) when there is none."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        token = _read(path)
        if token is not None:
            return token
        log.warning("http_token_replaced", file=str(path), reason="no usable token in it")
        path.unlink()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    token = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    log.info("http_token_created", file=str(path))
    return token


def _read(path: Path) -> str | None:
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)
        log.warning("http_token_made_private", file=str(path))
    token = path.read_text(encoding="utf-8", errors="replace").strip()
    if len(token) < MIN_TOKEN_CHARS or not token.isascii() or not token.isprintable():
        return None
    return token
