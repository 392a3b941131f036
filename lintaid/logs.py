"""Daemon logging: one redacted JSON line per event in ``.lint-ai/logs/lintaid.log``, rotated.

``log = get_logger("lintaid.writer")`` then ``log.warning("event_name", key=value, ...)``.
Built on the standard library's logging alone: the daemon imports this at every start, and a
structured-logging library with its optional pretty printers cost about a tenth of a second
of it. Shims never log.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lintaid_client.redact import redact_value

MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 3

_captures: list[list[dict[str, Any]]] = []
_captures_lock = threading.Lock()
_LEVELS = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warning",
           logging.ERROR: "error"}


def _exception(exc_info: Any) -> list[dict[str, Any]] | None:
    """``exc_info`` (an exception, True for the one being handled, or a ``sys.exc_info()``
    triple) as data: per exception in the chain, its type, message and frames (``file:line
    name``), the innermost last. Data, not a printed traceback: a journal shows one line."""
    if exc_info is True:
        exc_info = sys.exc_info()
    if isinstance(exc_info, tuple):
        exc_info = exc_info[1]
    if not isinstance(exc_info, BaseException):
        return None
    chain: list[dict[str, Any]] = []
    err: BaseException | None = exc_info
    while err is not None and len(chain) < 5:
        frames = [f"{f.filename}:{f.lineno} {f.name}"
                  for f in traceback.extract_tb(err.__traceback__)]
        chain.append({"exc_type": type(err).__name__, "exc_value": str(err)[:2000],
                      "frames": frames[-30:]})
        err = err.__cause__ or (None if err.__suppress_context__ else err.__context__)
    return chain


def _stamp(now: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"


class Logger:
    """A named event logger: ``log.info("event", key=value)``; ``exc_info=err`` adds the
    traceback. Every field is redacted before it is written."""

    __slots__ = ("_std",)

    def __init__(self, name: str) -> None:
        self._std = logging.getLogger(name)

    def _log(self, level: int, event: str, fields: dict[str, Any]) -> None:
        if _captures:
            entry = {**fields, "event": event, "log_level": _LEVELS[level]}
            with _captures_lock:
                for captured in _captures:
                    captured.append(entry)
            return
        if not self._std.isEnabledFor(level):
            return
        exc_info = fields.pop("exc_info", None)
        entry = {**fields, "event": event, "level": _LEVELS[level],
                 "timestamp": _stamp(time.time())}
        exception = _exception(exc_info)
        if exception:
            entry["exception"] = exception
        line = json.dumps(redact_value(entry), default=str, ensure_ascii=False)
        self._std.log(level, "%s", line)

    def debug(self, event: str, **fields: Any) -> None:
        self._log(logging.DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log(logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log(logging.WARNING, event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._log(logging.ERROR, event, fields)


def get_logger(name: str) -> Logger:
    return Logger(name)


@contextmanager
def capture_logs() -> Iterator[list[dict[str, Any]]]:
    """For tests: every event logged inside the block, as a dict (``event``, ``log_level``
    and the fields, unredacted), instead of being written."""
    captured: list[dict[str, Any]] = []
    with _captures_lock:
        _captures.append(captured)
    try:
        yield captured
    finally:
        with _captures_lock:
            _captures.remove(captured)


def configure(log_file: Path, *, level: str = "info", stderr: bool = False) -> None:
    """Send every ``lintaid`` logger's events to ``log_file`` (rotated), once, at daemon
    start; ``stderr`` as well when asked."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handler: logging.Handler = logging.handlers.RotatingFileHandler(
        log_file, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter("%(message)s"))
    root = logging.getLogger("lintaid")
    root.handlers[:] = [handler]
    if stderr:
        root.addHandler(logging.StreamHandler(sys.stderr))
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    root.propagate = False
