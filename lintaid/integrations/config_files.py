"""Agents' configuration files belong to the developer and hold other tools' settings, so
lintaid merges rather than writes: it refuses a file it cannot parse (naming the file and
line), backs a file up before changing it, writes atomically, and keeps the file's mode.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Final

BACKUP_SUFFIX: Final = ".lintaid.bak"


class ConfigError(ValueError):
    """A configuration file lintaid will not touch; the message names it for a person."""


def load_json(path: Path) -> dict[str, Any]:
    """Parse a JSON object file; a missing or blank file is ``{}``; anything else is refused."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text; fix it, lintaid will not") from exc
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read: {exc.strerror}") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); fix or remove it first, "
            "lintaid will not overwrite it") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; lintaid will not overwrite it")
    return data


def backup(path: Path) -> None:
    if path.exists():
        shutil.copy2(path, path.with_name(path.name + BACKUP_SUFFIX))


def write_atomic(path: Path, text: str) -> None:
    """Back up the old file, then write ``text`` atomically (temp file + ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup(path)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save_json(path: Path, data: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def save_or_remove(path: Path, data: dict[str, Any]) -> None:
    """Save ``data``; a file left empty held only lintaid's entries, so it is removed."""
    if data:
        save_json(path, data)
    else:
        path.unlink()
