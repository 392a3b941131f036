"""Agents' configuration files belong to the developer and hold other tools' settings, so
lintaid merges rather than writes: it refuses a file it cannot parse (naming the file and
line), backs a file up before changing it, writes atomically, and keeps the file's mode.

Uninstall gives the developer their file back byte for byte when nothing else changed: the
backup holds the file as it was before lintaid first changed it, and when the file minus
lintaid's entries holds the same data as that backup, the backup's bytes are put back. A file
lintaid created is removed once it holds nothing else. Either way, and when the file is
written without lintaid's entries because something else changed it meanwhile (a client
rewrites its own file), the backup is removed once the file is checked to be what uninstall
meant to leave. A file that already holds lintaid's entries is never backed up (it is not the
developer's original). An install keeps a JSON file's indentation and a TOML file's comments
and layout (``tomlkit``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import tomlkit
from tomlkit.exceptions import ParseError as TOMLParseError

from lintaid import files

BACKUP_SUFFIX: Final = ".lintaid.bak"


class ConfigError(ValueError):
    """A configuration file lintaid will not touch; the message names it for a person."""


def read_text(path: Path) -> str | None:
    """The file's text; None when it does not exist; ConfigError when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text; fix it, lintaid will not") from exc
    except IsADirectoryError as exc:
        raise ConfigError(f"{path} is a folder, not a file; lintaid will not touch it") from exc
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read: {exc.strerror}") from exc


def parse_json(path: Path, text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); fix or remove it first, "
            "lintaid will not overwrite it") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: nested too deeply; lintaid will not overwrite it") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; lintaid will not overwrite it")
    return data


def load_json(path: Path) -> dict[str, Any]:
    """Parse a JSON object file; a missing or blank file is ``{}``; anything else is refused."""
    text = read_text(path)
    return {} if text is None else parse_json(path, text)


def parse_toml(path: Path, text: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except TOMLParseError as exc:
        reason = str(exc).split(" at line ")[0]
        raise ConfigError(
            f"{path}:{exc.line}: not valid TOML ({reason}); fix or remove it first, "
            "lintaid will not overwrite it") from exc


def load_toml(path: Path) -> tomlkit.TOMLDocument:
    """Parse a TOML file keeping its comments and layout; a missing file is an empty one."""
    text = read_text(path)
    return tomlkit.document() if text is None else parse_toml(path, text)


def real_path(path: Path) -> Path:
    """The file a symlink points at (dotfiles are often linked in): lintaid writes that file,
    beside it its backup, and leaves the link alone."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def with_backups(paths: list[Path]) -> list[Path]:
    """``paths`` and the backups lintaid keeps of them."""
    return [*paths, *(backup_path(p) for p in paths)]


def backup_path(path: Path) -> Path:
    path = real_path(path)
    return path.with_name(path.name + BACKUP_SUFFIX)


def backup(path: Path, *, refresh: bool = False) -> None:
    """Copy the file beside itself before lintaid changes it.

    The first copy is kept across later changes, since it is the file as the developer had
    it and what uninstall restores; ``refresh`` replaces it (the caller knows the file holds
    nothing of lintaid's yet).
    """
    path = real_path(path)
    target = backup_path(path)
    if path.exists() and (refresh or not target.exists()):
        shutil.copy2(path, target)


def write_atomic(path: Path, text: str, *, pristine: bool | None = None) -> None:
    """Back up the old file, then write ``text`` atomically (temp file + ``os.replace``).

    ``pristine``: the file as it is now holds nothing of lintaid's, so its backup is renewed;
    False: it holds lintaid's entries, so a backup is never made of it (None: not known).
    """
    path = real_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if pristine is not False:
        backup(path, refresh=bool(pristine))
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    files.write_atomic(path, text, mode=mode)


# -- JSON --------------------------------------------------------------------------------------
def _json_indent(text: str | None) -> int | str | None:
    """The indentation the file uses: spaces, a tab, or None for a one-line file."""
    if not text or not text.strip():
        return 2
    lines = text.strip().splitlines()
    if len(lines) == 1:
        return None
    for line in lines[1:]:
        body = line.lstrip(" \t")
        if body and len(body) < len(line):
            lead = line[: len(line) - len(body)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def dump_json(data: Any, like: str | None = None) -> str:
    """``data`` as JSON text in the style of ``like`` (the file's current text), if any."""
    text = json.dumps(data, indent=_json_indent(like), ensure_ascii=False)
    if like is None or like.endswith("\n") or not like.strip():
        text += "\n"
    return text


def save_json(path: Path, data: dict[str, Any], *, pristine: bool | None = None) -> None:
    current = path.read_text(encoding="utf-8") if path.exists() else None
    write_atomic(path, dump_json(data, current), pristine=pristine)


# -- uninstall ---------------------------------------------------------------------------------
def _is_empty(value: Any) -> bool:
    return isinstance(value, (dict, list)) and not value


def pruned(value: Any) -> Any:
    """``value`` with empty objects and lists left out, recursively (plain dicts and lists)."""
    if isinstance(value, dict):
        out = {k: pruned(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if not _is_empty(v)}
    if isinstance(value, list):
        items = [pruned(v) for v in value]
        return [v for v in items if not _is_empty(v)]
    return value


def finish_removal(path: Path, data: Any, dump: Callable[[], str],
                   parse: Callable[[str], Any], *, skeleton: Any = None) -> str:
    """Leave ``path`` holding ``data`` (lintaid's entries already taken out).

    When the backup holds the same data (empty objects and lists aside), its bytes are put
    back: the developer gets their file back as it was. Else a file left with nothing (or
    only ``skeleton``, what lintaid writes into a new file) is removed, and anything else is
    written with ``dump``. The backup is removed once the file is checked to be so (its
    bytes the backup's, gone, or holding ``data``); a check that fails keeps it. ``parse``
    turns text into plain data. Returns "restored", "removed" or "written".
    """
    linked = path.is_symlink()
    path = real_path(path)
    bak = backup_path(path)
    left = pruned(data)
    if bak.exists():
        try:
            original = pruned(parse(bak.read_text(encoding="utf-8")))
        except (ValueError, OSError):
            original = None
        if original is not None and original == left:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            os.close(fd)
            try:
                shutil.copy2(bak, tmp)
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            _drop_backup(bak, path.read_bytes() == bak.read_bytes())
            return "restored"
    if not linked and (not left or (skeleton is not None and left == pruned(skeleton))):
        path.unlink()
        _drop_backup(bak, not path.exists())
        return "removed"
    write_atomic(path, dump(), pristine=False)
    try:
        written = pruned(parse(path.read_text(encoding="utf-8"))) == left
    except (ValueError, OSError):
        written = False
    _drop_backup(bak, written)
    return "written"


def remove_empty_folder(folder: Path) -> None:
    """Remove a project's client folder (``.claude/``, ``.codex/`` ...) that uninstall left
    empty: install made it for lintaid's file, or nothing of the developer's is in it. A
    folder holding anything, or not there, is left alone."""
    try:
        folder.rmdir()
    except OSError:
        pass


def _drop_backup(bak: Path, verified: bool) -> None:
    """Remove uninstall's backup once what it restored was checked; keep it otherwise."""
    if verified:
        try:
            bak.unlink()
        except FileNotFoundError:
            pass


def json_plain(text: str) -> Any:
    return json.loads(text) if text.strip() else {}


def toml_plain(text: str) -> Any:
    return tomlkit.parse(text).unwrap()


def save_or_remove(path: Path, data: dict[str, Any], *, skeleton: Any = None) -> str:
    """Write what uninstall leaves of a JSON file: the original bytes when nothing else changed,
    nothing when only lintaid's entries were there, else ``data``."""
    current = path.read_text(encoding="utf-8") if path.exists() else None
    return finish_removal(path, data, lambda: dump_json(data, current), json_plain,
                          skeleton=skeleton)
