"""The spool: events a shim could not hand over, one file each, written atomically.

Written by the hook shim (in a detached child, after the agent has its answer); drained by the
daemon (``lintaid.spool_drain``). A file is JSON ``{"v": 1, "op": "hook", "args": {...},
"spooled_at": float}`` with the payload already redacted, so no secret waits on disk for the
daemon. Temporary files start with ``.`` and end in ``.tmp`` so the drainer never reads a
half-written event. Files of the earlier msgpack format (``.event``) are still read.

When the project's file system cannot take the event (full, read-only, out of quota) it goes
to the fallback folder in the private runtime directory, another file system
(``<socket folder>/spool/<project key>/``), which the daemon drains the same way, in one order
with the project's spool (file names start with the time). Only when neither can take it does
``write`` raise.
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
    """Write one event into the spool, redacted, atomically and durably; return its path.

    The project's spool first, else the fallback folder (``fallback_dir``); OSError only
    when neither can hold it (the project's error, with the fallback's beside it)."""
    from .redact import redact_value

    name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}"
    message = {"v": 1, "op": op, "args": redact_value(args), "spooled_at": time.time(),
               "root": str(root)}
    data = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    try:
        return _write_into(paths.spool_dir(root), name, data)
    except OSError as err:
        try:
            return _write_into(fallback_dir(root), name, data)
        except OSError as second:
            raise OSError(err.errno, f"{err.strerror or err} (and the fallback spool: "
                          f"{second.strerror or second})", err.filename) from None


def _write_into(folder: Path, name: str, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = folder / f".{name}.tmp"
    final = folder / f"{name}{SUFFIX}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:  # a short write (a nearly full disk) must not leave half an event
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, final)
    return final


def fallback_dir(root: Path) -> Path:
    """Where events go when the project's own file system cannot take them: beside the
    sockets, in the private runtime folder, one folder per project."""
    return paths.socket_dir() / "spool" / paths.project_key(root)


def folders(root: Path) -> list[Path]:
    """The project's spool and its fallback folder (when one can be named)."""
    out = [paths.spool_dir(root)]
    try:
        out.append(fallback_dir(root))
    except OSError:
        pass
    return out


def pending(root: Path) -> list[Path]:
    """The spooled event files of both folders, oldest first."""
    found: list[Path] = []
    for folder in folders(root):
        try:
            found.extend(p for p in folder.iterdir()
                         if p.name.endswith((SUFFIX, LEGACY_SUFFIX)) and not p.name.startswith("."))
        except (FileNotFoundError, NotADirectoryError):
            continue
    return sorted(found, key=lambda p: p.name)


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
