"""The team server's password: never in ``.lint-ai/``, never in a log line.

Where the daemon finds it, first match wins (``source`` says which, and ``lintaid team
status`` shows it):

1. ``LINTAID_TEAM_PASSWORD`` in the daemon's environment;
2. ``PGPASSWORD`` in the daemon's environment (libpq reads it);
3. the system keyring, where the ``keyring`` package is installed and has a usable backend
   (service ``lintaid-team``, one entry per user, host, port and database);
4. a pgpass file (``PGPASSFILE``, else ``~/.pgpass``; libpq reads it).

``lintaid team join`` with a password in the address moves it to the keyring when there is
one, else into the pgpass file (created 0600, the entry for the same server replaced), and
keeps the address without it.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from lintaid.files import write_atomic

from .config import TeamError

KEYRING_SERVICE = "lintaid-team"


def _fields(params: dict[str, str]) -> tuple[str, str, str, str]:
    user = params.get("user") or os.environ.get("PGUSER") or _login()
    host = params.get("host") or os.environ.get("PGHOST") or "localhost"
    port = params.get("port") or os.environ.get("PGPORT") or "5432"
    database = params.get("dbname") or os.environ.get("PGDATABASE") or user
    return host, port, database, user


def _login() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def _keyring() -> Any | None:
    """The keyring module when it has a usable backend, else None."""
    try:
        keyring = importlib.import_module("keyring")
        backend = keyring.get_keyring()
    except Exception:
        return None
    if getattr(backend, "priority", 1) <= 0 or type(backend).__module__.endswith(".fail"):
        return None
    return keyring


def _keyring_entry(params: dict[str, str]) -> str:
    host, port, database, user = _fields(params)
    return f"{user}@{host}:{port}/{database}"


def passfile() -> Path:
    return Path(os.environ.get("PGPASSFILE") or Path.home() / ".pgpass")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(":", "\\:")


def _split(line: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    escaped = False
    for ch in line:
        if escaped:
            cur.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ":" and len(out) < 4:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def _in_passfile(params: dict[str, str]) -> bool:
    wanted = _fields(params)
    try:
        lines = passfile().read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        parts = _split(line)
        if len(parts) == 5 and all(p in ("*", w) for p, w in zip(parts[:4], wanted, strict=True)):
            return True
    return False


def keep(params: dict[str, str], password: str) -> str:
    """Keep ``password`` where the daemon will find it; return where, for a person."""
    keyring = _keyring()
    if keyring is not None:
        try:
            keyring.set_password(KEYRING_SERVICE, _keyring_entry(params), password)
            return "the system keyring"
        except Exception:
            pass  # a locked or broken keyring: the pgpass file below
    target = passfile()
    fields = _fields(params)
    entry = ":".join(_escape(f) for f in (*fields, password))
    try:
        lines = target.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    except OSError as err:
        raise TeamError(f"cannot read {target}: {err.strerror}") from None
    kept = [line for line in lines if _split(line)[:4] != list(fields)]
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, "\n".join([*kept, entry]) + "\n")
    return f"the pgpass file {target}"


def source(params: dict[str, str]) -> tuple[str, str | None]:
    """(where the password comes from, the password when lintaid must pass it itself)."""
    explicit = os.environ.get("LINTAID_TEAM_PASSWORD")
    if explicit:
        return "the environment (LINTAID_TEAM_PASSWORD)", explicit
    if os.environ.get("PGPASSWORD"):
        return "the environment (PGPASSWORD)", None
    keyring = _keyring()
    if keyring is not None:
        try:
            found = keyring.get_password(KEYRING_SERVICE, _keyring_entry(params))
        except Exception:
            found = None
        if found:
            return "the system keyring", str(found)
    if _in_passfile(params):
        return f"the pgpass file {passfile()}", None
    return "none (the server must not ask for one)", None
