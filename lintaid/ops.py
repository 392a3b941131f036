"""The op registry: protocol op name -> handler. One place, explicit, no import side effects.

A handler takes the daemon and the request's args and returns the result, or a Future of it
for work that must wait on the writer (the server replies when the future resolves). Handlers
raise ``OpError`` (or ``StoreError``) with a protocol code for a request they refuse.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from lintaid_client import protocol
from lintaid_client.redact import redact, redact_value

from .capture.git import git_state
from .capture.record import NewRecord, normalize_user
from .search import SearchRequest, hydrate, search
from .store.memory import StoreError

if TYPE_CHECKING:
    from .daemon import Daemon

Handler = Callable[["Daemon", dict[str, Any]], Any]
MAX_CONTENT_BYTES = 256 * 1024


class OpError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- argument helpers ----------------------------------------------------------------------
def _str(args: dict[str, Any], key: str, *, required: bool = False,
         default: str | None = None) -> str | None:
    value = args.get(key, default)
    if value is None:
        if required:
            raise OpError(protocol.BAD_REQUEST, f"{key!r} is required")
        return None
    if not isinstance(value, str):
        raise OpError(protocol.BAD_REQUEST, f"{key!r} must be a string")
    if required and not value.strip():
        raise OpError(protocol.BAD_REQUEST, f"{key!r} must not be empty")
    return value


def _int(args: dict[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    value = args.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise OpError(protocol.BAD_REQUEST, f"{key!r} must be an integer")
    if not lo <= value <= hi:
        raise OpError(protocol.BAD_REQUEST, f"{key!r} must be between {lo} and {hi}")
    return value


def _time(args: dict[str, Any], key: str) -> float | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OpError(protocol.BAD_REQUEST, f"{key!r} must be epoch seconds")
    return float(value)


def _content(args: dict[str, Any], key: str = "content") -> str:
    text = _str(args, key, required=True) or ""
    if len(text.encode()) > MAX_CONTENT_BYTES:
        raise OpError(protocol.TOO_LARGE, f"{key!r} is larger than {MAX_CONTENT_BYTES} bytes")
    return redact(text)


def _actor(args: dict[str, Any]) -> str:
    return _str(args, "actor", default="api") or "api"


def _user(args: dict[str, Any]) -> str:
    return normalize_user(_str(args, "user_id"))


# -- handlers ------------------------------------------------------------------------------
def op_ping(d: Daemon, args: dict[str, Any]) -> dict[str, Any]:
    return {"pong": True, "pid": d.pid, "version": d.version, "protocol": protocol.VERSION}


def op_status(d: Daemon, args: dict[str, Any]) -> dict[str, Any]:
    return d.status()


def op_shutdown(d: Daemon, args: dict[str, Any]) -> dict[str, Any]:
    d.request_shutdown()
    return {"stopping": True}


def op_hook(d: Daemon, args: dict[str, Any]) -> Any:
    provider = _str(args, "provider", required=True) or ""
    event = _str(args, "event", required=True) or ""
    payload = args.get("payload")
    if not isinstance(payload, dict):
        raise OpError(protocol.BAD_REQUEST, "'payload' must be a map")
    return d.hooks.handle(provider, event, payload)


MAX_BATCH = 1000


def _note(args: dict[str, Any], defaults: dict[str, Any]) -> NewRecord:
    """One API record from its args; ``defaults`` fills what an item of a batch leaves out."""
    merged = {**defaults, **args}
    metadata = merged.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise OpError(protocol.BAD_REQUEST, "'metadata' must be a map")
    return NewRecord(
        content=_content(merged),
        kind="note",
        source=_str(merged, "source", default="api") or "api",
        user_id=_user(merged),
        session_id=_str(merged, "session_id"),
        metadata=redact_value(metadata),
        created_at=_time(merged, "created_at") or time.time(),
        valid_at=_time(merged, "valid_at"),
        expires_at=_time(merged, "expires_at"),
        supersedes=_str(merged, "supersedes"),
    )


def op_add(d: Daemon, args: dict[str, Any]) -> Future[dict[str, Any]]:
    """Add one record (``content``), or up to 1,000 (``items``) in one transaction.

    Items inherit the request's user_id, source and session_id unless they set their own.
    """
    items = args.get("items")
    if items is None:
        records = [_note(args, {})]
    else:
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_BATCH:
            raise OpError(protocol.BAD_REQUEST, f"'items' must be a list of 1 to {MAX_BATCH}")
        if not all(isinstance(item, dict) for item in items):
            raise OpError(protocol.BAD_REQUEST, "every item must be a map")
        shared = {k: args[k] for k in ("user_id", "source", "session_id") if k in args}
        records = [_note(item, shared) for item in items]
    branch, revision = git_state(str(d.root))  # provenance, as for captures
    for record in records:
        record.branch, record.revision = branch, revision
    actor = _actor(args)

    def job() -> dict[str, Any]:
        out = []
        for record in records:
            rid, event = d.store.put(record, actor)
            out.append({"id": rid, "event": event, "memory": record.content})
        return out[0] if items is None else {"results": out}

    return d.writer.submit(job)


def op_search(d: Daemon, args: dict[str, Any]) -> dict[str, Any]:
    query = _str(args, "query", required=True) or ""
    req = SearchRequest(
        query=query,
        user_id=_user(args),
        top_k=_int(args, "top_k", 5, 1, 100),
        history=bool(args.get("history", False)),
        as_of=_time(args, "as_of"),
        store=_str(args, "store", default="all") or "all",
    )
    try:
        return search(d.searcher, req)
    except ValueError as err:
        raise OpError(protocol.BAD_REQUEST, str(err)) from err


def op_get(d: Daemon, args: dict[str, Any]) -> dict[str, Any]:
    rid = _str(args, "id", required=True) or ""
    if d.store.visible_row(rid, _user(args)) is None:
        raise OpError(protocol.NOT_FOUND, f"no memory {rid!r}")
    return hydrate(d.searcher, [rid])[rid]


def op_list(d: Daemon, args: dict[str, Any]) -> dict[str, Any]:
    limit = _int(args, "limit", 100, 1, 10_000)
    offset = _int(args, "offset", 0, 0, 10**9)
    ids = d.store.list_ids(_user(args), limit, offset, bool(args.get("include_hidden", False)))
    hits = hydrate(d.searcher, ids)
    return {"results": [hits[i] for i in ids if i in hits]}


def op_update(d: Daemon, args: dict[str, Any]) -> Future[dict[str, Any]]:
    rid = _str(args, "id", required=True) or ""
    content = _content(args)
    user, actor = _user(args), _actor(args)
    metadata = args.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise OpError(protocol.BAD_REQUEST, "'metadata' must be a map")
    metadata = None if metadata is None else redact_value(metadata)

    def job() -> dict[str, Any]:
        d.store.update(rid, user, content, actor, metadata)
        return {"id": rid, "event": "UPDATE"}

    return d.writer.submit(job)


def op_forget(d: Daemon, args: dict[str, Any]) -> Future[dict[str, Any]]:
    rid = _str(args, "id", required=True) or ""
    reason = _str(args, "reason")
    user, actor = _user(args), _actor(args)

    def job() -> dict[str, Any]:
        d.store.forget(rid, user, reason, actor)
        return {"id": rid, "event": "DELETE"}

    return d.writer.submit(job)


def op_supersede(d: Daemon, args: dict[str, Any]) -> Future[dict[str, Any]]:
    """Retire ``old_id``: by an existing record ``new_id``, or by new ``content``."""
    old_id = _str(args, "old_id", required=True) or ""
    new_id = _str(args, "new_id")
    user, actor = _user(args), _actor(args)
    if (new_id is None) == (args.get("content") is None):
        raise OpError(protocol.BAD_REQUEST, "give exactly one of 'new_id' or 'content'")
    if new_id is not None:
        def link() -> dict[str, Any]:
            d.store.set_supersedes(new_id, old_id, user, actor)
            return {"old_id": old_id, "new_id": new_id, "event": "SUPERSEDE"}

        return d.writer.submit(link)
    record = _note({**args, "supersedes": old_id}, {})

    def add() -> dict[str, Any]:
        rid, event = d.store.put(record, actor)
        if event != "ADD":
            d.store.set_supersedes(rid, old_id, user, actor)
        return {"old_id": old_id, "new_id": rid, "event": "SUPERSEDE"}

    return d.writer.submit(add)


def op_expire(d: Daemon, args: dict[str, Any]) -> Future[dict[str, Any]]:
    rid = _str(args, "id", required=True) or ""
    at = _time(args, "at")
    user, actor = _user(args), _actor(args)

    def job() -> dict[str, Any]:
        d.store.expire(rid, user, at, actor)
        return {"id": rid, "event": "EXPIRE"}

    return d.writer.submit(job)


def op_history(d: Daemon, args: dict[str, Any]) -> dict[str, Any]:
    """The audit trail of one record, in mem0's history shape, plus supersession steps."""
    rid = _str(args, "id", required=True) or ""
    user = _user(args)
    row = d.store.get_rows([rid]).get(rid)
    if row is None or row["user_id"] != user:
        raise OpError(protocol.NOT_FOUND, f"no memory {rid!r}")
    events = []
    for a in d.store.audit_rows(rid):
        events.append({
            "id": str(a["seq"]),
            "memory_id": rid,
            "event": a["op"].upper(),
            "old_memory": a["before_content"],
            "new_memory": a["after_content"],
            "actor": a["actor"],
            "created_at": a["at"],
            "detail": _json(a["detail"]),
        })
    return {"id": rid, "results": events}


def op_reindex(d: Daemon, args: dict[str, Any]) -> Any:
    if d.workspace is None:
        raise OpError(protocol.BAD_REQUEST, "the workspace watcher is off for this daemon")
    return d.workspace.reindex(full=bool(args.get("full", False)))


def _json(text: str | None) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return {}


REGISTRY: dict[str, Handler] = {
    "ping": op_ping,
    "status": op_status,
    "shutdown": op_shutdown,
    "hook": op_hook,
    "add": op_add,
    "search": op_search,
    "get": op_get,
    "list": op_list,
    "update": op_update,
    "forget": op_forget,
    "supersede": op_supersede,
    "expire": op_expire,
    "history": op_history,
    "reindex": op_reindex,
}


def error_code(err: BaseException) -> tuple[str, str]:
    """Map an exception raised by a handler or a job to (protocol code, message)."""
    if isinstance(err, (OpError, StoreError)):
        return err.code, err.message
    return protocol.INTERNAL, f"{type(err).__name__}: {err}"
