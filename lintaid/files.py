"""Writing a file so that a reader sees the old contents or the new, never a part of either.

Every file lintaid writes outside its databases goes through ``write_atomic``: status and pause
files, team settings and the pgpass entry, exports, enriched lint reports, service units and
agent clients' configuration files.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: str | bytes, *, mode: int = 0o600) -> None:
    """Write ``data`` (text as UTF-8) to ``path``: a temporary file beside it with ``mode``
    (0600 unless told: most of what lintaid writes is private), flushed to disk, then renamed
    over ``path``. The temporary file is removed when anything fails."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
