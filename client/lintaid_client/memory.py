"""``Memory``: the mem0-shaped Python API over a project's lintaid daemon.

>>> m = Memory("/path/to/project")                      # doctest: +SKIP
>>> m.add("We deploy with Helm, not kustomize.")        # doctest: +SKIP
{'results': [{'id': 'm…', 'memory': 'We deploy with Helm, not kustomize.', 'event': 'ADD'}]}
>>> m.search("how do we deploy?")["results"][0]["status"]  # doctest: +SKIP
'current'

Every call is one request to the daemon (protocol v1 over ZeroMQ); the daemon does the work,
so several ``Memory`` objects, processes and agents can share one project safely. Errors are
the protocol's typed exceptions (``NotFound``, ``BadRequest``, ``DaemonUnavailable``, ...);
arguments the client can check itself raise ``ValueError`` / ``TypeError`` before anything is
sent.

Thread safety: a ``Memory`` may be shared between threads; each thread gets its own
connection (a ZeroMQ socket must never be used by two threads).

Imports only the standard library, pyzmq and msgpack.
"""

from __future__ import annotations

import datetime as _dt
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from . import connection, core, ops, paths, protocol
from .models import ACCEPT, REJECT, Hit, ReviewItem, SearchResult

__all__ = ["Memory", "to_epoch"]

SEARCH_FILTER_KEYS = frozenset({"store", "user_id", "history", "as_of", "valid_at", "client",
                                "kind"})

TimeLike = float | int | str | _dt.datetime | _dt.date


def to_epoch(value: TimeLike | None, *, name: str = "time") -> float | None:
    """Return ``value`` as epoch seconds (``None`` stays ``None``).

    Accepts epoch seconds, a ``datetime`` (naive means local time, as ``datetime.timestamp``
    has it), a ``date`` (local midnight), or a string holding epoch seconds or an ISO 8601
    date/time (``2026-01-31``, ``2026-01-31T09:00:00Z``; without a zone: UTC).
    """
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        value = value.timestamp()
    elif isinstance(value, _dt.date):
        value = _dt.datetime.combine(value, _dt.time()).timestamp()
    try:
        return ops.parse_time(value, name)
    except ValueError as err:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise TypeError(str(err)) from None
        raise protocol.BadRequest(str(err), arg=name) from None  # still a ValueError


def _message_text(message: Any) -> str:
    """One message as a line: ``"role: content"`` (or just the content without a role)."""
    if isinstance(message, str):
        return message
    if not isinstance(message, Mapping):
        raise TypeError("a message must be a string or a {'role', 'content'} mapping")
    content = message.get("content")
    if isinstance(content, list):  # OpenAI-style content parts: keep the text ones
        content = "\n".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
            for part in content
        )
    if content is None:
        raise ValueError("a message needs a 'content'")
    if not isinstance(content, str):
        raise TypeError("a message's 'content' must be a string")
    role = message.get("role")
    return f"{role}: {content}" if role else content


def messages_to_text(messages: str | Mapping[str, Any] | Iterable[Any]) -> str:
    """Turn a string, one message or a list of messages into the text to store."""
    if isinstance(messages, str):
        text = messages
    elif isinstance(messages, Mapping):
        text = _message_text(messages)
    elif isinstance(messages, Iterable):
        text = "\n".join(_message_text(m) for m in messages if m is not None)
    else:
        raise TypeError("messages must be a string, a message mapping or a list of messages")
    if not text.strip():
        raise ValueError("nothing to store: the text is empty")
    return text


class Memory:
    """mem0-shaped access to one project's memory, through its lintaid daemon.

    ``project``: the project root (default: found from the working directory, honouring
    ``LINTAID_PROJECT``). ``user_id``: the default user for every call (``None`` or empty means
    the local user). ``timeout``: seconds to wait for each answer. ``autostart``: start the
    daemon (detached) on first use and once more if it has gone away. ``actor`` and ``source``
    label writes in the audit log and the record's provenance (the daemon's default is
    ``"api"``).
    """

    def __init__(
        self,
        project: str | os.PathLike[str] | None = None,
        *,
        user_id: str | None = None,
        timeout: float = 10.0,
        autostart: bool = True,
        actor: str | None = None,
        source: str | None = None,
    ) -> None:
        if project is None:
            self.root = paths.find_project_root()
        else:
            self.root = Path(project).expanduser().resolve()
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.user_id = user_id
        self.timeout = float(timeout)
        self.autostart = autostart
        self.actor = actor
        self.source = source
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[connection.Connection] = []
        self._started = False
        self._token: str | None = None

    def __repr__(self) -> str:
        return f"Memory({str(self.root)!r}, user_id={self.user_id!r})"

    # -- plumbing --------------------------------------------------------------------------
    def _connection(self) -> connection.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connection.Connection(self.root)
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def _start(self, *, again: bool = False) -> None:
        """Make sure a daemon answers: once on first use, and again after it went away."""
        if not self.autostart:
            return
        with self._lock:
            if self._started and not again:
                return
            connection.ensure_daemon(self.root)
            self._started = True

    def _call(self, op: str, args: dict[str, Any] | None = None, *,
              timeout: float | None = None) -> dict[str, Any]:
        """One request: checked against the op's declaration here first, so a mistake is a
        ``BadRequest`` (a ValueError) before anything is sent. ``timeout``: this call's
        own, for one the daemon answers late by design (a board read that waits)."""
        args = {k: v for k, v in (args or {}).items() if v is not None}
        spec = ops.OPS[op]
        ops.validate(spec, args)
        self._start()
        conn = self._connection()
        after = self._token if spec.waits_for_index else None
        wait = self.timeout if timeout is None else timeout
        result = core.send_retrying(
            lambda: conn.call(op, args, timeout=wait, after=after),
            start=(lambda: self._start(again=True)) if self.autostart else None)
        if spec.kind == ops.WRITE and conn.last_token:
            self._token = conn.last_token  # read-your-writes for this client's searches
        if not isinstance(result, dict):
            raise protocol.RemoteError(f"the daemon answered {op!r} with a {type(result).__name__}")
        return result

    def _user(self, user_id: str | None) -> str | None:
        return self.user_id if user_id is None else user_id

    def _writer(self, args: dict[str, Any], *, with_source: bool = False) -> dict[str, Any]:
        if self.actor is not None:
            args["actor"] = self.actor
        if with_source and self.source is not None:
            args["source"] = self.source
        return args

    def close(self) -> None:
        """Close every thread's connection. Call it only when no call is in flight."""
        with self._lock:
            conns, self._connections = self._connections, []
        for conn in conns:
            conn.close()
        self._local = threading.local()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the API ---------------------------------------------------------------------------
    def add(
        self,
        messages: str | Mapping[str, Any] | Iterable[Any],
        user_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        expires_at: TimeLike | None = None,
        supersedes: str | None = None,
        *,
        valid_at: TimeLike | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Store a text, or a list of ``{role, content}`` messages (one ``role: content`` line
        each). Returns ``{"results": [{"id", "memory", "event"}]}`` where event is ``ADD``,
        ``NONE`` (the same record already exists), ``SUPERSEDE`` (it already exists and the
        ``supersedes`` link given was added to it) or ``FORGOTTEN`` (it was forgotten before and
        stays so). ``supersedes`` retires an existing record of the same user; a record may
        retire several."""
        text = messages_to_text(messages)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise TypeError("metadata must be a mapping")
        result = self._call("add", self._writer({
            "content": text,
            "user_id": self._user(user_id),
            "metadata": dict(metadata) if metadata else None,
            "expires_at": to_epoch(expires_at, name="expires_at"),
            "valid_at": to_epoch(valid_at, name="valid_at"),
            "supersedes": supersedes,
            "session_id": session_id,
        }, with_source=True))
        return {"results": [{
            "id": result["id"],
            "memory": result.get("memory", text),
            "event": result["event"],
        }]}

    def add_many(self, texts: Iterable[str | Mapping[str, Any]], user_id: str | None = None,
                 ) -> dict[str, Any]:
        """Store many records in one round trip and one transaction (1,000 at most).

        Each entry is a text, or a mapping with ``content`` and optionally ``metadata``,
        ``expires_at``, ``valid_at``, ``supersedes``. Returns ``{"results": [...]}`` as ``add``.
        """
        items = []
        for entry in texts:
            if isinstance(entry, str):
                items.append({"content": entry})
            elif isinstance(entry, Mapping):
                item = dict(entry)
                for key in ("expires_at", "valid_at"):
                    if item.get(key) is not None:
                        item[key] = to_epoch(item[key], name=key)
                items.append(item)
            else:
                raise TypeError("each entry must be a text or a mapping with 'content'")
        result = self._call("add", self._writer({"items": items, "user_id": self._user(user_id)},
                                                with_source=True))
        return {"results": result["results"]}

    def search(
        self,
        query: str,
        user_id: str | None = None,
        top_k: int = 5,
        filters: Mapping[str, Any] | None = None,
        history: bool = False,
        as_of: TimeLike | None = None,
        store: str = "all",
        client: str | None = None,
        kind: str | None = None,
        valid_at: TimeLike | None = None,
    ) -> SearchResult:
        """Search the current state: ``result.results`` (typed hits, best first),
        ``result.hidden`` (matching records the policy kept out: superseded, expired) and
        ``result.history``. ``history=True`` or an ``as_of`` time also returns superseded
        records, marked ``historical``; ``as_of`` is what the store believed then (record
        time), ``valid_at`` what was true in the project then (valid time; both together:
        what the store, knowing only what it had learned by ``as_of``, held true at
        ``valid_at``). ``client`` keeps only what that agent client
        captured (``"codex"``). ``kind`` keeps memory records of one kind (``capture``,
        ``note``, ``prompt``; ``all`` for every kind): prompts are searched only when asked
        for. ``filters`` may hold ``store``, ``user_id``, ``history``, ``as_of``, ``client``
        and ``kind`` (as the keyword arguments; a conflicting pair is an error, as is any
        other key). ``result["results"]`` works as in mem0."""
        if not isinstance(query, str):
            raise TypeError("query must be a string")
        if filters:
            if not isinstance(filters, Mapping):
                raise TypeError("filters must be a mapping")
            unknown = sorted(set(filters) - SEARCH_FILTER_KEYS)
            if unknown:
                raise ValueError(
                    f"unsupported search filter(s) {', '.join(map(repr, unknown))}; "
                    f"supported: {', '.join(sorted(SEARCH_FILTER_KEYS))}"
                )
            store = _merge("store", store, "all", filters)
            user_id = _merge("user_id", user_id, None, filters)
            history = _merge("history", history, False, filters)
            as_of = _merge("as_of", as_of, None, filters)
            valid_at = _merge("valid_at", valid_at, None, filters)
            client = _merge("client", client, None, filters)
            kind = _merge("kind", kind, None, filters)
        result = self._call("search", {
            "query": query,
            "user_id": self._user(user_id),
            "top_k": top_k,
            "history": history,
            "as_of": to_epoch(as_of, name="as_of"),
            "valid_at": to_epoch(valid_at, name="valid_at"),
            "store": store,
            "client": client,
            "kind": kind,
        })
        return SearchResult.from_dict(result)

    def get(self, memory_id: str, user_id: str | None = None) -> Hit:
        """One record with status, claims, relations and provenance; ``NotFound`` if it is
        not this user's or was forgotten."""
        return Hit.from_dict(self._call("get", {"id": memory_id,
                                                "user_id": self._user(user_id)}))

    def get_all(self, user_id: str | None = None, limit: int | None = None, *,
                offset: int = 0, client: str | None = None,
                kind: str | None = None) -> dict[str, Any]:
        """The user's visible records, newest first: ``{"results": [hit, ...]}``; only
        ``client``'s captures when given; prompts only with ``kind="prompt"`` (or
        ``"all"``)."""
        result = self._call("list", {"user_id": self._user(user_id), "limit": limit,
                                     "offset": offset, "client": client, "kind": kind})
        return {"results": [Hit.from_dict(h) for h in result.get("results", [])]}

    def update(self, memory_id: str, data: str, user_id: str | None = None, *,
               metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Replace a record's text (and merge ``metadata``): ``{"id", "event": "UPDATE"}``."""
        if not isinstance(data, str):
            raise TypeError("data must be a string")
        return self._call("update", self._writer({
            "id": memory_id,
            "content": data,
            "user_id": self._user(user_id),
            "metadata": dict(metadata) if metadata else None,
        }))

    def delete(self, memory_id: str, user_id: str | None = None, *,
               reason: str | None = None) -> dict[str, Any]:
        """Forget a record (tombstoned: the same text captured again stays forgotten)."""
        return self._call("forget", self._writer({
            "id": memory_id, "reason": reason, "user_id": self._user(user_id),
        }))

    def supersede(
        self,
        old_id: str,
        new: str | Mapping[str, Any] | Iterable[Any] | None = None,
        *,
        new_id: str | None = None,
        user_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Retire ``old_id`` in favour of new text ``new`` or an existing record ``new_id``.
        Returns ``{"old_id", "new_id", ...}``."""
        if (new is None) == (new_id is None):
            raise ValueError("give exactly one of new (text) or new_id (an existing record)")
        args: dict[str, Any] = {"old_id": old_id, "user_id": self._user(user_id)}
        if new_id is not None:
            args["new_id"] = new_id
        else:
            args["content"] = messages_to_text(new)  # type: ignore[arg-type]
            args["metadata"] = dict(metadata) if metadata else None
        return self._call("supersede", self._writer(args, with_source=new is not None))

    def expire(self, memory_id: str, at: TimeLike | None = None,
               user_id: str | None = None) -> dict[str, Any]:
        """Mark a record as no longer true from ``at`` (default: now)."""
        return self._call("expire", self._writer({
            "id": memory_id, "at": to_epoch(at, name="at"), "user_id": self._user(user_id),
        }))

    def history(self, memory_id: str, user_id: str | None = None) -> list[dict[str, Any]]:
        """The record's audit trail in mem0's shape: ``[{id, memory_id, event, old_memory,
        new_memory, created_at, updated_at, is_deleted, actor, before_hash, after_hash,
        detail}, ...]``, oldest first. A forgotten record's trail is still there."""
        result = self._call("history", {"id": memory_id, "user_id": self._user(user_id)})
        return list(result.get("results", []))

    def restore(self, memory_id: str, user_id: str | None = None, *,
                reason: str | None = None) -> dict[str, Any]:
        """Bring a forgotten record back: ``{"id", "event": "RESTORE"}``."""
        return self._call("restore", self._writer({
            "id": memory_id, "reason": reason, "user_id": self._user(user_id)}))

    def review(self, user_id: str | None = None, limit: int | None = None) -> list[ReviewItem]:
        """The review queue: inferred supersessions too weak to hide the older record, and
        conflicts, waiting for a person; newest first."""
        result = self._call("review", {"user_id": self._user(user_id), "limit": limit})
        return [ReviewItem.from_dict(i) for i in result.get("results", [])]

    def accept(self, item_id: str, user_id: str | None = None, *,
               reason: str | None = None) -> dict[str, Any]:
        """Accept a review item: its newer record explicitly supersedes the older one."""
        return self._decide(item_id, ACCEPT, user_id, reason)

    def reject(self, item_id: str, user_id: str | None = None, *,
               reason: str | None = None) -> dict[str, Any]:
        """Reject a review item: its two statements are never related again."""
        return self._decide(item_id, REJECT, user_id, reason)

    def _decide(self, item_id: str, decision: str, user_id: str | None,
                reason: str | None) -> dict[str, Any]:
        return self._call("decide", self._writer({
            "id": item_id, "decision": decision, "reason": reason,
            "user_id": self._user(user_id)}))

    def audit(self, memory_id: str | None = None, *, since: TimeLike | None = None,
              actor: str | None = None, limit: int | None = None, after: int | None = None,
              newest_first: bool = False, user_id: str | None = None) -> dict[str, Any]:
        """Every change to the user's records in the order made, or newest first (one
        record's, since a time, by one actor): ``{"results": [history events], "next"}``;
        pass ``next`` as ``after`` to read on."""
        return self._call("audit", {"id": memory_id, "since": to_epoch(since, name="since"),
                                    "actor": actor, "limit": limit, "after": after,
                                    "order": "newest" if newest_first else None,
                                    "user_id": self._user(user_id)})

    def export(self, user_id: str | None = None, *,
               include_history: bool = False) -> list[dict[str, Any]]:
        """Every exported row of the user (records with claims and relations, links, review
        decisions, confirmations, tombstones; the audit log with ``include_history``), as
        ``lintaid export`` writes them after its header line."""
        rows: list[dict[str, Any]] = []
        for page in core.pages(lambda after: self._call("export", {
                "user_id": self._user(user_id), "after": after,
                "include_history": include_history})):
            rows.extend(page["rows"])
        return rows

    def import_rows(self, rows: Iterable[Mapping[str, Any]],
                    user_id: str | None = None) -> list[dict[str, Any]]:
        """Import exported rows (``export``'s) in batches of at most 1,000 rows and about
        4 MiB (``core.batches``, as ``lintaid import`` sends them): per row its ``type`` and
        ``event`` (ADD, NONE already here, FORGOTTEN, SKIP with a ``reason``). Each batch is
        one transaction; a failure leaves the batches before it imported."""
        items = [dict(r) for r in rows if r.get("type") != "header"]
        out: list[dict[str, Any]] = []
        for batch in core.batches(items):
            result = self._call("import", self._writer({
                "items": batch, "user_id": self._user(user_id)}))
            out.extend(result["results"])
        return out

    def confirm(self, memory_id: str, user_id: str | None = None) -> dict[str, Any]:
        """Confirm a record is still true: ``{"id", "event": "CONFIRM", "confirmed_at"}``.
        Its staleness is measured from now, less for each confirmation."""
        return self._call("confirm", self._writer({"id": memory_id,
                                                   "user_id": self._user(user_id)}))

    def lint(self, user_id: str | None = None, *, only_flagged: bool = False,
             at: TimeLike | None = None, limit: int | None = None) -> dict[str, Any]:
        """Every record a search may show, judged for staleness (as of ``at``, default now):
        ``{"checked_at", "total", "counts": {level: n}, "results": [{"id", "content",
        "category", "age_days", "score", "level", "action", "confirmations",
        "contradicted_by", "reason", "when", ...}]}``, most likely out of date first;
        ``only_flagged`` keeps the stale and expired ones, ``limit`` at most that many (1,000
        unless given; ``omitted`` says how many more); the counts stay complete."""
        return self._call("lint", {"user_id": self._user(user_id),
                                   "only_flagged": only_flagged, "limit": limit,
                                   "at": to_epoch(at, name="at")})

    def status(self) -> dict[str, Any]:
        """The daemon's status: pid, uptime, counts, queue depths, versions."""
        return self._call("status")

    def backup(self, to: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """A consistent, checked copy of memory.db, made by the daemon while it runs: to
        ``to`` (relative to this process's folder), or as the next rolling backup in
        ``.lint-ai/backups/``. Returns ``{path, bytes, seconds, at}``."""
        target = None if to is None else os.path.abspath(os.fspath(to))
        return self._call("backup", {"to": target})

    def call(self, op: str, args: Mapping[str, Any] | None = None, *,
             timeout: float | None = None) -> Any:
        """One request for ``op`` with its arguments as ``ops.OPS`` declares them, returning
        the daemon's result as sent. This client's user id, actor and source fill in what
        ``args`` leaves unset. For callers built from the declarations themselves (the MCP
        tools); the methods above are friendlier. ``timeout``: this call's (default: the
        client's)."""
        spec = ops.OPS[op]
        full = dict(args or {})
        declared = {a.name for a in spec.args}
        for key, value in (("user_id", self.user_id), ("actor", self.actor),
                           ("source", self.source)):
            if key in declared and full.get(key) is None and value is not None:
                full[key] = value
        return self._call(spec.name, full, timeout=timeout)

    def ping(self) -> dict[str, Any]:
        return self._call("ping")


_UNSET = object()


def _merge(key: str, given: Any, default: Any, filters: Mapping[str, Any]) -> Any:
    """Combine a keyword argument with the same key in ``filters``; refuse a contradiction."""
    value = filters.get(key, _UNSET)
    if value is _UNSET:
        return given
    if given != default and given != value:
        raise ValueError(f"{key!r} given both as an argument ({given!r}) and a filter ({value!r})")
    return value
