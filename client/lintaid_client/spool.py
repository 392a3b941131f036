"""The spool: events a shim could not hand over, one file each, written atomically.

Written here by the shims; drained by the daemon (``lintaid.spool_drain``). A file is a
msgpack map ``{"v": 1, "op": "hook", "args": {...}, "spooled_at": float}``. Temporary files
start with ``.`` and end in ``.tmp`` so the drainer never reads a half-written event.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from . import paths, protocol

SUFFIX = ".event"


def write(root: Path, op: str, args: dict[str, Any]) -> Path:
    """Write one event into the spool atomically and durably, secrets redacted; return its path.

    The redactor is imported here, not at the top: only the slow path (the daemon did not
    answer) pays for loading and compiling it, never the hook's round trip.
    """
    from .redact import redact_value

    args = redact_value(args)
    folder = paths.spool_dir(root)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}"
    tmp = folder / f".{name}.tmp"
    final = folder / f"{name}{SUFFIX}"
    data = protocol.pack({"v": protocol.VERSION, "op": op, "args": args, "spooled_at": time.time()})
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, final)
    return final


def pending(root: Path) -> list[Path]:
    """Return the spooled event files, oldest first."""
    try:
        return sorted(p for p in paths.spool_dir(root).iterdir() if p.name.endswith(SUFFIX))
    except FileNotFoundError:
        return []


def read(path: Path) -> dict[str, Any]:
    """Return a spooled event; raise ValueError when the file is not one."""
    message = protocol.unpack(path.read_bytes())
    if not isinstance(message, dict) or not isinstance(message.get("args"), dict):
        raise ValueError(f"{path.name} is not a spooled event")
    return message
