"""The spool: events a shim could not hand over, one file each, written atomically.

Written by the hook shim (in a detached child, after the agent has its answer); drained by the
daemon (``lintaid.spool_drain``). A file is JSON ``{"v": 1, "op": "hook", "args": {...},
"spooled_at": float}`` with the payload already redacted, so no secret waits on disk for the
daemon. Temporary files start with ``.`` and end in ``.tmp`` so the drainer never reads a
half-written event. Files of the earlier msgpack format (``.event``) are still read.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from . import paths

SUFFIX = ".json"
LEGACY_SUFFIX = ".event"


def write(root: Path, op: str, args: dict[str, Any]) -> Path:
    """Write one event into the spool, redacted, atomically and durably; return its path."""
    from .redact import redact_value

    folder = paths.spool_dir(root)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}"
    tmp = folder / f".{name}.tmp"
    final = folder / f"{name}{SUFFIX}"
    message = {"v": 1, "op": op, "args": redact_value(args), "spooled_at": time.time()}
    data = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, final)
    return final


def pending(root: Path) -> list[Path]:
    """The spooled event files, oldest first."""
    try:
        return sorted(p for p in paths.spool_dir(root).iterdir()
                      if p.name.endswith((SUFFIX, LEGACY_SUFFIX)) and not p.name.startswith("."))
    except FileNotFoundError:
        return []


def read(path: Path) -> dict[str, Any]:
    """A spooled event; ValueError when the file is not one."""
    data = path.read_bytes()
    if path.name.endswith(LEGACY_SUFFIX):
        from . import protocol

        message = protocol.unpack(data)
    else:
        try:
            message = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as err:
            raise ValueError(str(err)) from None
    if not isinstance(message, dict) or not isinstance(message.get("args"), dict):
        raise ValueError(f"{path.name} is not a spooled event")
    return message
