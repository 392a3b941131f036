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
memory (kind, status, source, client, session, turn, branch and revision, valid and expiry
times) and, with history, a ``history`` list in mem0's history shape.

``memlint``: memlint's input, a top-level array of ``{"id", "content", "created_at",
"last_confirmed_at", "confirmation_count", "source", "category", "metadata"}`` (written by
``export --format memlint``, with the same ``lintaid`` key inside ``metadata``; read as a
mem0 list whose text is ``content``).

An imported record keeps its id when a lintaid export gave it one (any of the three formats:
the ``lintaid`` key says a memory came from lintaid), else gets one from its content and
mem0's id; and a text already held from the same source and session is not added again
under another id. So re-importing any lintaid export, into the store it came from or into
another, adds nothing already there. Exports leave out stored prompts and local paths
(working folders, transcript paths, affected paths outside the working folder) unless asked
for (``without_local_paths``). Rows are checked here, before anything is sent, and again by
the daemon: a bad row is named by its line (or entry) and nothing is imported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

from lintaid_client import models
from lintaid_client.ops import MAX_CONTENT_BYTES, MAX_ID_BYTES, parse_time

from .capture.record import NewRecord, content_fingerprint, normalize_user, with_paths
from .files import write_atomic

FORMAT: Final = "lintaid-export"
VERSION: Final = 1
FORMATS: Final = ("jsonl", "mem0", "memlint")
EXPORT_FORMATS: Final = FORMATS
READ_FORMATS: Final = ("auto", "jsonl", "mem0")  # a memlint list reads as mem0's
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


def without_local_paths(row: Mapping[str, Any]) -> dict[str, Any]:
    """A record row without what only names this machine: its working folder, metadata
    values that are absolute paths (a transcript's), and affected paths outside the working
    folder (those inside become relative to it, in ``paths`` and in the text's line)."""
    cwd = row.get("cwd")
    kept = [p for p in (_relative(p, cwd) for p in row.get("paths") or []) if p]
    out = {**row, "cwd": None, "paths": kept,
           "metadata": {k: v for k, v in (row.get("metadata") or {}).items()
                        if not _local_path(v)}}
    if kept != list(row.get("paths") or []):
        out["content"] = with_paths(str(row["content"]), kept)
        out["content_hash"] = content_fingerprint(out["content"])
    return out


def _local_path(value: Any) -> bool:
    return isinstance(value, str) and (value.startswith(("/", "~/", "\\\\"))
                                       or (len(value) > 2 and value[1:3] in (":\\", ":/")))


def _relative(path: str, cwd: str | None) -> str | None:
    if not _local_path(path):
        return path
    if cwd and _local_path(cwd):
        base = cwd.rstrip("/") + "/"
        if path.startswith(base):
            return path[len(base):] or None
    return None


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, tz=timezone.utc).isoformat()


_PROVENANCE: Final = ("kind", "status", "source", "client", "session_id", "event", "doc_type",
                      "turn_id", "request_hash", "branch", "revision", "cwd", "paths", "tools",
                      "file_hashes", "created_at", "valid_at", "expires_at")


def _provenance(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a mem0 or memlint entry carries of lintaid's under its ``lintaid`` key, so an
    import knows it for lintaid's own (and keeps its id)."""
    return {k: row.get(k) for k in _PROVENANCE if row.get(k) not in (None, [], {})}


def _confirmations(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[float]]:
    """Each record's confirmation times, from the confirmation rows."""
    out: dict[str, list[float]] = {}
    for row in rows:
        if row["type"] == "confirmation":
            out.setdefault(row["record_id"], []).append(float(row["at"]))
    return out


def to_mem0(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Export rows as mem0's ``get_all`` document: the records, each with its history when
    the rows hold the audit log."""
    history: dict[str, list[dict[str, Any]]] = {}
    records = []
    rows = list(rows)
    confirmed = _confirmations(rows)
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
            "confirmation_count": len(confirmed.get(r["id"], [])),
            "lintaid": _provenance(r)}
        if r["id"] in history:
            item["history"] = history[r["id"]]
        results.append(item)
    return {"results": results}


def to_memlint(rows: Iterable[Mapping[str, Any]],
               category: Callable[[str], str] | None = None) -> list[dict[str, Any]]:
    """Export rows as memlint's input: one entry per record, its confirmations counted from
    the confirmation rows. ``category(text)``, when given, names each entry's category."""
    rows = list(rows)
    records = [row for row in rows if row["type"] == "record"]
    confirmed = _confirmations(rows)
    out = []
    for r in records:
        times = confirmed.get(r["id"], [])
        entry: dict[str, Any] = {
            "id": r["id"], "content": r["content"], "created_at": _iso(r["created_at"]),
            "last_confirmed_at": _iso(max(times)) if times else None,
            "confirmation_count": len(times), "source": "user",
            "metadata": {**(r["metadata"] or {}), "lintaid": _provenance(r)}}
        if category is not None:
            entry["category"] = category(r["content"])
        out.append(entry)
    return out


def write_private(path: Path, text: str) -> None:
    """Write an export atomically (temp file, fsync, rename), readable by its owner only:
    it holds memories."""
    write_atomic(path.expanduser(), text)


# -- reading a file ---------------------------------------------------------------------------------
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
    """A mem0 memory (or a memlint entry) as a record row: its text, metadata and times. One
    that lintaid exported (its ``lintaid`` key) keeps its id and provenance; any other gets
    an id from its content and mem0's id (so it imports once)."""
    if not isinstance(entry, dict):
        raise TransferError(f"{where}: a memory must be an object")
    text = next((entry[k] for k in ("memory", "text", "content")
                 if isinstance(entry.get(k), str)), None)
    if not isinstance(text, str) or not text.strip():
        raise TransferError(f"{where}: missing 'memory' (the text)")
    theirs = entry.get("id")
    metadata: dict[str, Any] = (dict(entry["metadata"]) if isinstance(entry.get("metadata"), dict)
                                else {})
    ours = entry.get("lintaid", metadata.pop("lintaid", None))
    ours = ours if isinstance(ours, dict) else {}
    created = ours.get("created_at", entry.get("created_at"))
    if ours and isinstance(theirs, str):  # lintaid's own memory: its id and provenance
        return {**{k: ours.get(k) for k in _PROVENANCE if k not in ("status",)},
                "type": "record", "id": theirs, "content": text,
                "kind": ours.get("kind") or models.NOTE,
                "source": ours.get("source") or f"{MEM0_SOURCE}{theirs}",
                "metadata": metadata, "created_at": created,
                "expires_at": ours.get("expires_at", entry.get("expiration_date"))}
    mem0 = {k: entry[k] for k in ("id", "hash", "user_id", "agent_id", "run_id", "actor_id",
                                  "role", "categories") if entry.get(k) is not None}
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


__all__ = ["EXPORT_FORMATS", "FORMAT", "FORMATS", "READ_FORMATS", "ROW_TYPES", "TransferError",
           "VERSION", "check", "from_mem0", "header", "history_event", "new_record", "read",
           "record_row", "to_mem0", "to_memlint", "without_local_paths", "write_private"]
