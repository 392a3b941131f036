"""Export and import formats: lintaid's JSON Lines, and mem0's export.

``jsonl`` (lintaid's own): a header line ``{"type": "header", "format": "lintaid-export",
"version": 1, ...}``, then one row a line, each with its ``type``: ``record`` (every field of
the record, with its ``claims`` and ``relations`` as derived when exported, for readers; an
import derives them again), ``link`` (an explicit supersession), ``review`` (a decision on a
review item), ``confirmation``, ``tombstone`` (a forgotten text's fingerprint: it stays
forgotten), and with history ``audit`` (every mutation, mem0-shaped history besides). A
forgotten record is never exported, nor its text in the audit log; its tombstone is.

``mem0``: mem0's ``get_all`` export, ``{"results": [{"id", "memory", "hash", "metadata",
"created_at", "updated_at", "user_id", ...}]}`` (a bare list, ``{"memories": [...]}`` and one
memory a line are read too). Written by ``export --format mem0`` with a ``lintaid`` key per
memory (kind, status, source, valid and expiry times) and, with history, a ``history`` list
in mem0's history shape.

An imported record keeps its id (lintaid's export) or gets one from its content and mem0's id
(mem0's), so importing the same file twice adds nothing. Rows are checked here, before
anything is sent, and again by the daemon: a bad row is named by its line (or entry) and
nothing is imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

from lintaid_client import models
from lintaid_client.ops import MAX_CONTENT_BYTES, MAX_ID_BYTES, parse_time

from .capture.record import NewRecord, normalize_user
from .files import write_atomic

FORMAT: Final = "lintaid-export"
VERSION: Final = 1
FORMATS: Final = ("jsonl", "mem0")
READ_FORMATS: Final = ("auto", *FORMATS)
ROW_TYPES: Final = ("record", "link", "review", "confirmation", "tombstone", "audit")
MEM0_SOURCE: Final = "mem0://"
RELATION_KINDS: Final = ("supersedes", "conflicts_with")


class TransferError(ValueError):
    """A file or row that cannot be imported; the message names where."""


# -- history events (mem0's shape) ----------------------------------------------------------------
def history_event(row: Mapping[str, Any]) -> dict[str, Any]:
    """One audit row in mem0's history shape (``id``, ``memory_id``, ``event``,
    ``old_memory``, ``new_memory``, ``created_at``, ``updated_at``, ``is_deleted``) with
    lintaid's fields: who (``actor``), the content hashes before and after, the detail."""
    detail = row.get("detail")
    if isinstance(detail, str):
        try:
            detail = json.loads(detail) if detail else {}
        except ValueError:
            detail = {}
    return {
        "id": str(row.get("seq", row.get("n"))),
        "memory_id": row["target"],
        "event": str(row["op"]).upper(),
        "old_memory": row.get("before_content"),
        "new_memory": row.get("after_content"),
        "actor": row["actor"],
        "user_id": row.get("user_id"),
        "created_at": row["at"],
        "updated_at": row["at"],
        "is_deleted": row["op"] == "forget",
        "before_hash": row.get("before_hash"),
        "after_hash": row.get("after_hash"),
        "detail": detail if isinstance(detail, dict) else {},
    }


# -- export -------------------------------------------------------------------------------------
def header(user_id: str, include_history: bool, exported_at: float, version: str) -> dict[str, Any]:
    return {"type": "header", "format": FORMAT, "version": VERSION, "lintaid": version,
            "user_id": normalize_user(user_id), "include_history": include_history,
            "exported_at": exported_at}


_JSON_COLUMNS: Final[dict[str, Any]] = {"paths": [], "tools": [], "metadata": {}, "file_hashes": {}}
_RECORD_FIELDS: Final = ("id", "kind", "source", "user_id", "session_id", "event", "doc_type",
                         "cwd", "branch", "revision", "content", "content_hash", "created_at",
                         "updated_at", "valid_at", "expires_at", "turn_id", "request_hash")


def record_row(row: Mapping[str, Any], status: str, claims: list[dict[str, Any]],
               relations: list[dict[str, Any]]) -> dict[str, Any]:
    """A stored record as an export row."""
    out: dict[str, Any] = {"type": "record", **{k: row[k] for k in _RECORD_FIELDS},
                           "client": row["provider"], "status": status}
    for name, empty in _JSON_COLUMNS.items():
        try:
            out[name] = json.loads(row[name]) if row[name] else empty
        except ValueError:
            out[name] = empty
    out["claims"], out["relations"] = claims, relations
    return out


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, tz=timezone.utc).isoformat()


def to_mem0(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Export rows as mem0's ``get_all`` document: the records, each with its history when
    the rows hold the audit log."""
    history: dict[str, list[dict[str, Any]]] = {}
    records = []
    for row in rows:
        if row["type"] == "record":
            records.append(row)
        elif row["type"] == "audit":
            history.setdefault(row["target"], []).append(history_event(row))
    results = []
    for r in records:
        item: dict[str, Any] = {
            "id": r["id"], "memory": r["content"], "hash": r["content_hash"],
            "metadata": r["metadata"] or None, "created_at": _iso(r["created_at"]),
            "updated_at": _iso(r["updated_at"]), "user_id": r["user_id"],
            "lintaid": {"kind": r["kind"], "status": r["status"], "source": r["source"],
                        "client": r["client"], "session_id": r["session_id"],
                        "created_at": r["created_at"], "valid_at": r["valid_at"],
                        "expires_at": r["expires_at"]}}
        if r["id"] in history:
            item["history"] = history[r["id"]]
        results.append(item)
    return {"results": results}


def write_private(path: Path, text: str) -> None:
    """Write an export atomically (temp file, fsync, rename), readable by its owner only:
    it holds memories."""
    write_atomic(path.expanduser(), text)


# -- reading a file ---------------------------------------------------------------------------------
MAX_IMPORT_BYTES: Final = 1 << 30
"""An import file larger than this is refused before it is read whole (an export of 100,000
records with their history is a few hundred MiB)."""


def read_file(path: Path, limit: int = MAX_IMPORT_BYTES) -> str:
    """The text of an import file, read with a bound: a FIFO, a device or a folder is refused
    at once (never waited on or read without end), and so is a file over ``limit`` bytes.
    ``-`` is standard input, read with the same bound. TransferError says why."""
    import os
    import stat
    import sys

    if str(path) == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        try:  # O_NONBLOCK: opening a FIFO with no writer must not block
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as err:
            raise TransferError(f"{path}: {err.strerror or err}") from None
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a device"
                        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket"
                        if stat.S_ISSOCK(mode) else "a folder" if stat.S_ISDIR(mode)
                        else "not a regular file")
                raise TransferError(f"{path} is {kind}: import reads a regular file (or - "
                                    "for standard input)")
            os.set_blocking(fd, True)
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(limit + 1)
        finally:
            os.close(fd)
    if len(data) > limit:
        raise TransferError(f"{path} is larger than {limit} bytes: split it, or import it in "
                            "parts")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TransferError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


def read(text: str, fmt: str = "auto", name: str = "FILE") -> tuple[dict[str, Any] | None,
                                                                     list[dict[str, Any]]]:
    """``(lintaid's header or None, the rows to import, checked)`` from a file's text."""
    if fmt not in READ_FORMATS:
        raise TransferError(f"unknown format {fmt!r} (known: {', '.join(READ_FORMATS)})")
    lines = text.splitlines()
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        raise TransferError(f"{name}: empty: nothing to import")
    head = _json_object(first)
    if fmt == "jsonl" or (fmt == "auto" and head is not None and head.get("format") == FORMAT):
        return _read_jsonl(lines, name)
    return None, _read_mem0(text, lines, name)


def _json_object(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _read_jsonl(lines: list[str], name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    head: dict[str, Any] | None = None
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name}: line {number}"
        try:
            value = json.loads(line)
        except ValueError as err:
            raise TransferError(f"{where}: not JSON: {err}") from None
        if not isinstance(value, dict):
            raise TransferError(f"{where}: must be a JSON object")
        if head is None:
            if value.get("type") != "header" or value.get("format") != FORMAT:
                raise TransferError(f"{where}: a lintaid export starts with its header line "
                                    f"(format {FORMAT!r})")
            if value.get("version") != VERSION:
                raise TransferError(f"{where}: export version {value.get('version')!r} is "
                                    f"not one this lintaid reads ({VERSION})")
            head = value
            continue
        rows.append(check(value, where))
    if head is None:
        raise TransferError(f"{name}: no header line")
    return head, rows


def _read_mem0(text: str, lines: list[str], name: str) -> list[dict[str, Any]]:
    try:
        data: Any = json.loads(text)
        entries = [(f"{name}: entry {i}", e) for i, e in enumerate(_mem0_list(data, name))]
    except ValueError as err:
        if isinstance(err, TransferError):
            raise
        entries = []  # one memory a line
        for number, line in enumerate(lines, start=1):
            if line.strip():
                where = f"{name}: line {number}"
                try:
                    entries.append((where, json.loads(line)))
                except ValueError as bad:
                    raise TransferError(f"{where}: neither a lintaid export, nor mem0's JSON "
                                        f"export, nor one memory a line: {bad}") from None
    return [check(from_mem0(entry, where), where) for where, entry in entries]


def _mem0_list(data: Any, name: str) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("results", "memories"):
            if isinstance(data.get(key), list):
                return list(data[key])
        if "memory" in data:
            return [data]
    raise TransferError(f"{name}: expected mem0's export (a list of memories, or "
                        "{\"results\": [...]}) or a lintaid export")


def from_mem0(entry: Any, where: str) -> dict[str, Any]:
    """A mem0 memory as a record row: its text, metadata and times; its id from its
    content and mem0's id (so it imports once)."""
    if not isinstance(entry, dict):
        raise TransferError(f"{where}: a memory must be an object")
    text = entry.get("memory", entry.get("text"))
    if not isinstance(text, str) or not text.strip():
        raise TransferError(f"{where}: missing 'memory' (the text)")
    theirs = entry.get("id")
    ours: dict[str, Any] = entry["lintaid"] if isinstance(entry.get("lintaid"), dict) else {}
    metadata: dict[str, Any] = (entry["metadata"] if isinstance(entry.get("metadata"), dict)
                                else {})
    mem0 = {k: entry[k] for k in ("id", "hash", "user_id", "agent_id", "run_id", "actor_id",
                                  "role", "categories") if entry.get(k) is not None}
    created = ours.get("created_at", entry.get("created_at"))
    return {"type": "record", "id": None, "content": text,
            "kind": ours.get("kind") or models.NOTE,
            "source": f"{MEM0_SOURCE}{theirs}" if theirs is not None else f"{MEM0_SOURCE}-",
            "metadata": {**metadata, "mem0": mem0} if mem0 else metadata,
            "created_at": created, "valid_at": ours.get("valid_at"),
            "expires_at": ours.get("expires_at", entry.get("expiration_date"))}


# -- rows -------------------------------------------------------------------------------------------
def _str(row: Mapping[str, Any], key: str, where: str, *, required: bool = True,
         limit: int | None = MAX_ID_BYTES) -> str | None:
    value = row.get(key)
    if value is None:
        if required:
            raise TransferError(f"{where}: missing '{key}'")
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise TransferError(f"{where}: '{key}' must be a non-empty string")
    if limit is not None and len(value.encode("utf-8", "surrogatepass")) > limit:
        raise TransferError(f"{where}: '{key}' is longer than {limit} bytes")
    return value


def _time(row: Mapping[str, Any], key: str, where: str, *,
          required: bool = False) -> float | None:
    value = row.get(key)
    if value is None:
        if required:
            raise TransferError(f"{where}: missing '{key}'")
        return None
    try:
        return parse_time(value, key)
    except ValueError as err:
        raise TransferError(f"{where}: {err}") from None


def _list_of_str(row: Mapping[str, Any], key: str, where: str) -> list[str]:
    value = row.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TransferError(f"{where}: '{key}' must be a list of strings")
    return list(value)


def _map(row: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = row.get(key) or {}
    if not isinstance(value, dict):
        raise TransferError(f"{where}: '{key}' must be an object")
    return dict(value)


def check(row: Mapping[str, Any], where: str = "row") -> dict[str, Any]:
    """One row to import, checked and normalised (times as epoch seconds); only the fields
    its type uses are kept."""
    kind = row.get("type")
    if kind not in ROW_TYPES:
        raise TransferError(f"{where}: 'type' must be one of {', '.join(ROW_TYPES)}")
    out: dict[str, Any] = {"type": kind}
    if row.get("user_id") is not None:
        out["user_id"] = normalize_user(_str(row, "user_id", where))
    if kind == "record":
        content = _str(row, "content", where, limit=MAX_CONTENT_BYTES)
        record_kind = row.get("kind") or models.NOTE
        if record_kind not in models.KINDS:
            raise TransferError(f"{where}: 'kind' must be one of {', '.join(models.KINDS)}")
        out.update(
            id=_str(row, "id", where, required=False), content=content, kind=record_kind,
            source=_str(row, "source", where, required=False) or "import",
            client=_str(row, "client", where, required=False),
            metadata=_map(row, "metadata", where), file_hashes=_map(row, "file_hashes", where),
            paths=_list_of_str(row, "paths", where), tools=_list_of_str(row, "tools", where),
            created_at=_time(row, "created_at", where), valid_at=_time(row, "valid_at", where),
            expires_at=_time(row, "expires_at", where))
        for key in ("session_id", "event", "doc_type", "cwd", "branch", "revision", "turn_id",
                    "request_hash"):
            out[key] = _str(row, key, where, required=False, limit=4096)
    elif kind == "link":
        out.update(new_id=_str(row, "new_id", where), old_id=_str(row, "old_id", where),
                   actor=_str(row, "actor", where, required=False),
                   at=_time(row, "at", where, required=True))
    elif kind == "review":
        for key in ("item_id", "scope", "subject", "predicate", "newer_record", "newer_value",
                    "older_record", "older_value"):
            out[key] = _str(row, key, where, limit=4096)
        if row.get("decision") not in models.DECISIONS:
            raise TransferError(f"{where}: 'decision' must be accept or reject")
        if row.get("kind") not in RELATION_KINDS:
            raise TransferError(f"{where}: 'kind' must be one of {', '.join(RELATION_KINDS)}")
        confidence = row.get("confidence")
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
            raise TransferError(f"{where}: 'confidence' must be a number")
        out.update(decision=row["decision"], kind=row["kind"], confidence=float(confidence),
                   actor=_str(row, "actor", where, required=False) or "import",
                   reason=_str(row, "reason", where, required=False, limit=2000),
                   at=_time(row, "at", where, required=True))
    elif kind == "confirmation":
        out.update(record_id=_str(row, "record_id", where),
                   actor=_str(row, "actor", where, required=False),
                   at=_time(row, "at", where, required=True))
    elif kind == "tombstone":
        out.update(fingerprint=_str(row, "fingerprint", where),
                   record_id=_str(row, "record_id", where),
                   reason=_str(row, "reason", where, required=False, limit=2000),
                   at=_time(row, "at", where, required=True))
    else:  # audit
        out.update(target=_str(row, "target", where), op=_str(row, "op", where),
                   actor=_str(row, "actor", where), at=_time(row, "at", where, required=True),
                   detail=_map(row, "detail", where))
        for key in ("before_hash", "after_hash"):
            out[key] = _str(row, key, where, required=False)
        for key in ("before_content", "after_content"):
            out[key] = _str(row, key, where, required=False, limit=MAX_CONTENT_BYTES)
    return out


def new_record(row: Mapping[str, Any], user_id: str) -> NewRecord:
    """A checked (and redacted) record row as the record to store for ``user_id``."""
    return NewRecord(
        content=row["content"], kind=row["kind"], source=row["source"],
        user_id=normalize_user(user_id), provider=row.get("client"),
        session_id=row.get("session_id"), event=row.get("event"), doc_type=row.get("doc_type"),
        cwd=row.get("cwd"), branch=row.get("branch"), revision=row.get("revision"),
        paths=list(row.get("paths") or []), tools=list(row.get("tools") or []),
        metadata=dict(row.get("metadata") or {}),
        file_hashes=dict(row.get("file_hashes") or {}), created_at=row.get("created_at"),
        valid_at=row.get("valid_at"), expires_at=row.get("expires_at"),
        explicit_id=row.get("id"), turn_id=row.get("turn_id"),
        request_hash=row.get("request_hash"))


__all__ = ["FORMAT", "FORMATS", "READ_FORMATS", "ROW_TYPES", "TransferError", "VERSION",
           "check", "from_mem0", "header", "history_event", "new_record", "read",
           "record_row", "to_mem0", "write_private"]
