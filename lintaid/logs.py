"""Daemon logging: structlog JSON lines in ``.lint-ai/logs/lintaid.log``, rotated, redacted."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path
from typing import Any

import structlog

from lintaid_client.redact import redact_value

MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 3


def _redact(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    """Nothing redacted may reach a log: run every field through the same redaction."""
    return redact_value(event)


def configure(log_file: Path, *, level: str = "info", stderr: bool = False) -> None:
    """Configure structlog once, at daemon start. Shims never call this."""
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
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            _redact,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            getattr(logging, level.upper(), logging.INFO)
        ),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )
