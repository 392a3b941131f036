"""The op handlers: protocol op name -> handler. One table, explicit, no import side effects.

Arguments arrive already validated against the op's declaration (``lintaid_client.ops``).
A handler takes the narrow ``Services`` it needs and the arguments, and returns the result or
a future of it (the server replies when it resolves). Handlers run on the reader pool, except
``control`` ops (ping, shutdown), which the request loop answers itself. Handlers raise a
``protocol.RemoteError`` (or the store's ``StoreError``) for a request they refuse.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

from lintaid_client import ops, protocol
from lintaid_client.ops import validate_item
from lintaid_client.redact import redact, redact_value

from . import review, transfer
from .capture.record import NewRecord, normalize_user
from .futures import settle
from .integrations import registry
from .search import Reader, SearchRequest


class RecordWrites(review.ReviewWrites, Protocol):
    """The store's mutations, as write jobs use them (on the writer thread)."""

    def put(self, rec: NewRecord, actor: str) -> tuple[str, str]: ...

    def update(self, record_id: str, user_id: str, content: str, actor: str,
               metadata: dict[str, Any] | None = None) -> None: ...

    def forget(self, record_id: str, user_id: str, reason: str | None, actor: str) -> None: ...

    def set_supersedes(self, new_id: str, old_id: str, user_id: str, actor: str) -> bool: ...

    def expire(self, record_id: str, user_id: str, at: float | None, actor: str) -> None: ...

    def confirm(self, record_id: str, user_id: str, actor: str,
                at: float | None = None) -> float: ...

    def restore(self, record_id: str, user_id: str, reason: str | None,
                actor: str) -> bool: ...

    def import_row(self, item: dict[str, Any], user_id: str, actor: str) -> dict[str, Any]: ...


class Control(Protocol):
    """What the daemon itself answers: its state, its stop, the workspace re-scan, pause."""

    def status(self) -> dict[str, Any]: ...

    def request_shutdown(self) -> None: ...

    def reindex(self, full: bool) -> Future[dict[str, Any]]: ...

    def ping(self) -> dict[str, Any]: ...

    def backup(self, to: str | None) -> dict[str, Any]: ...

    def pause(self, seconds: float | None, session_id: str | None) -> dict[str, Any]: ...

    def resume(self, session_id: str | None) -> dict[str, Any]: ...

    def ui(self, port: int | None) -> dict[str, Any]: ...

    def http(self, port: int | None) -> dict[str, Any]: ...


class Hooks(Protocol):
    def handle(self, provider: str, event: str, payload: dict[str, Any], *,
               inject: bool = True, at: float | None = None) -> Future[dict[str, Any]]: ...


class Team(Protocol):
    """The team tier (``lintaid.team.tier.TeamTier``)."""

    def join(self, dsn: str, name: str, member: str | None,
             repo_key: str | None) -> dict[str, Any]: ...

    def leave(self) -> dict[str, Any]: ...

    def status(self) -> dict[str, Any]: ...

    def set_private(self, client: str, share: bool) -> dict[str, Any]: ...

    def add_member(self, name: str, dsn: str | None) -> dict[str, Any]: ...


class Board(Protocol):
    """The bulletin board (``lintaid.board.Board``)."""

    def open(self, user: str, key: str, title: str | None, client: str | None,
             session: str | None) -> Future[dict[str, Any]]: ...

    def boards(self, user: str, session: str | None) -> dict[str, Any]: ...

    def info(self, user: str, ref: str | None, session: str | None) -> dict[str, Any]: ...

    def post(self, user: str, ref: str | None, content: str, request_id: str,
             author: str | None, client: str | None,
             session: str | None) -> Future[dict[str, Any]]: ...

    def read(self, user: str, ref: str | None, after: int, limit: int, wait: int,
             session: str | None,
             client: str | None) -> dict[str, Any] | Future[dict[str, Any]]: ...

    def get(self, user: str, post_id: str, ref: str | None) -> dict[str, Any]: ...

    def search(self, user: str, query: str, ref: str | None, top_k: int) -> dict[str, Any]: ...


Submit = Callable[[Callable[[], Any]], "Future[Any]"]
Provenance = Callable[[], "tuple[str | None, str | None]"]


@dataclass(frozen=True)
class Services:
    """Everything a handler may reach, and no more."""

    reader: Reader
    writes: RecordWrites
    submit: Submit  # run a job on the single writer; its future resolves after the commit
    hooks: Hooks
    control: Control
    provenance: Provenance  # (branch, revision) of the project, for API writes
    team: Team | None = None  # the team tier
    board: Board | None = None  # the bulletin board


Args = dict[str, Any]
Handler = Callable[[Services, Args], Any]


def _actor(args: Args) -> str:
    """Who acts: the request's or its face's, else the declaration's default."""
    return args.get("actor") or ops.DEFAULT_ACTOR


def _user(args: Args) -> str:
    return normalize_user(args.get("user_id"))


def _client(args: Args) -> str | None:
    """The ``client`` filter, refused when no agent client has that name (a typo would
    otherwise look like an empty memory)."""
    name = args.get("client")
    if name is not None and name not in registry.CLIENTS:
        raise protocol.BadRequest(f"'client' must be one of {', '.join(registry.names())}, "
                                  f"not {name!r}", arg="client")
    return name


def _record(item: Args, branch: str | None, revision: str | None) -> NewRecord:
    """One API record from its validated arguments; content and metadata are redacted."""
    return NewRecord(
        content=redact(item["content"]),
        kind="note",
        source=item.get("source") or "api",
        user_id=normalize_user(item.get("user_id")),
        session_id=item.get("session_id"),
        metadata=redact_value(item.get("metadata") or {}),
        created_at=item.get("created_at"),  # None: the store's clock stamps it
        valid_at=item.get("valid_at"),
        expires_at=item.get("expires_at"),
        supersedes=item.get("supersedes"),
        branch=branch,
        revision=revision,
        private=bool(item.get("private")),
    )


# -- handlers ------------------------------------------------------------------------------
def op_ping(s: Services, args: Args) -> Args:
    return s.control.ping()


def op_status(s: Services, args: Args) -> Args:
    return s.control.status()


def op_shutdown(s: Services, args: Args) -> Args:
    s.control.request_shutdown()
    return {"stopping": True}


def op_hook(s: Services, args: Args) -> Future[Args]:
    return s.hooks.handle(args["provider"], args["event"], args["payload"])


def op_add(s: Services, args: Args) -> Future[Args]:
    """Add one record (``content``), or up to 1,000 (``items``) in one transaction.

    Items inherit the request's user_id and source unless they set their own. A single record
    already stored counts as a confirmation of it (an import of ``items`` does not).
    """
    branch, revision = s.provenance()
    if args.get("items") is None:
        records = [_record(args, branch, revision)]
    else:
        shared = {k: args.get(k) for k in ("user_id", "source")}
        records = [_record(validate_item(item, shared), branch, revision)
                   for item in args["items"]]
    actor, writes = _actor(args), s.writes

    def job() -> Args:
        out = []
        for record in records:
            rid, event = writes.put(record, actor)
            if event == "NONE" and args.get("items") is None:
                writes.confirm(rid, record.user_id, actor)  # stated again: still true
            out.append({"id": rid, "event": event, "memory": record.content})
        return out[0] if args.get("items") is None else {"results": out}

    return s.submit(job)


def op_search(s: Services, args: Args) -> Args:
    req = SearchRequest(query=args["query"], user_id=args["user_id"], top_k=args["top_k"],
                        history=args["history"], as_of=args["as_of"],
                        valid_at=args["valid_at"], store=args["store"],
                        client=_client(args), kind=args["kind"], passages=args["passages"])
    return s.reader.search(req).to_dict()


def op_stats(s: Services, args: Args) -> Args:
    return s.reader.ledger(since=args["since"], client=args["client"],
                           session_id=args["session_id"], limit=args["limit"],
                           recent=args["recent"])


def op_get(s: Services, args: Args) -> Args:
    return s.reader.get(args["id"], args["user_id"]).to_dict()


def op_list(s: Services, args: Args) -> Args:
    hits = s.reader.newest(args["user_id"], args["limit"], args["offset"],
                           args["include_hidden"], client=_client(args),
                           kind=args["kind"], status=args["status"], branch=args["branch"],
                           session_id=args["session_id"], since=args["since"],
                           until=args["until"])
    return {"results": [h.to_dict() for h in hits]}


def op_update(s: Services, args: Args) -> Future[Args]:
    rid, user, actor, writes = args["id"], _user(args), _actor(args), s.writes
    content = redact(args["content"])
    metadata = redact_value(args["metadata"]) if args["metadata"] else None

    def job() -> Args:
        writes.update(rid, user, content, actor, metadata)
        return {"id": rid, "event": "UPDATE"}

    return s.submit(job)


def op_forget(s: Services, args: Args) -> Future[Args]:
    rid, reason, user, actor, writes = (args["id"], args["reason"], _user(args), _actor(args),
                                        s.writes)

    def job() -> Args:
        writes.forget(rid, user, reason, actor)
        return {"id": rid, "event": "DELETE"}

    return s.submit(job)


def op_supersede(s: Services, args: Args) -> Future[Args]:
    """Retire ``old_id``: by an existing record ``new_id``, or by new ``content``."""
    old_id, new_id = args["old_id"], args["new_id"]
    user, actor, writes = _user(args), _actor(args), s.writes
    if new_id is not None:
        def link() -> Args:
            writes.set_supersedes(new_id, old_id, user, actor)
            return {"old_id": old_id, "new_id": new_id, "event": "SUPERSEDE"}

        return s.submit(link)
    branch, revision = s.provenance()
    record = _record({**args, "supersedes": old_id}, branch, revision)

    def add() -> Args:
        rid, event = writes.put(record, actor)
        if event != "ADD":
            writes.set_supersedes(rid, old_id, user, actor)
        return {"old_id": old_id, "new_id": rid, "event": "SUPERSEDE"}

    return s.submit(add)


def op_expire(s: Services, args: Args) -> Future[Args]:
    rid, at, user, actor, writes = args["id"], args["at"], _user(args), _actor(args), s.writes

    def job() -> Args:
        writes.expire(rid, user, at, actor)
        return {"id": rid, "event": "EXPIRE"}

    return s.submit(job)


def op_history(s: Services, args: Args) -> Args:
    return {"id": args["id"], "results": s.reader.history(args["id"], args["user_id"])}


def op_confirm(s: Services, args: Args) -> Future[Args]:
    rid, user, actor, writes = args["id"], _user(args), _actor(args), s.writes

    def job() -> Args:
        return {"id": rid, "event": "CONFIRM", "confirmed_at": writes.confirm(rid, user, actor)}

    return s.submit(job)


def op_restore(s: Services, args: Args) -> Future[Args]:
    rid, reason, user, actor, writes = (args["id"], args["reason"], _user(args), _actor(args),
                                        s.writes)
    reason = redact(reason) if reason else None

    def job() -> Args:
        writes.restore(rid, user, reason, actor)
        return {"id": rid, "event": "RESTORE"}

    return s.submit(job)


def op_review(s: Services, args: Args) -> Args:
    items = s.reader.review_queue(args["user_id"], args["limit"])
    return {"results": [i.to_dict() for i in items], "count": len(items)}


def op_decide(s: Services, args: Args) -> Future[Args]:
    item, decision, user, actor, writes = (args["id"], args["decision"], _user(args),
                                           _actor(args), s.writes)
    reason = redact(args["reason"]) if args["reason"] else None
    documents = s.reader.workspace  # decision documents, when the daemon reads them

    def job() -> Args:
        return review.decide(writes, item, decision, user, actor, reason, documents)

    return s.submit(job)


def op_audit(s: Services, args: Args) -> Args:
    return s.reader.audit(args["user_id"], record_id=args["id"], since=args["since"],
                          actor=args["actor"], after=args["after"], limit=args["limit"],
                          newest_first=args["order"] == "newest")


def op_export(s: Services, args: Args) -> Args:
    return s.reader.export_page(args["user_id"], args["after"], args["limit"],
                                args["include_history"], args["include_prompts"],
                                args["include_paths"])


_REDACTED_TEXT = ("content", "before_content", "after_content", "reason")


def _import_item(raw: Any, index: int, user: str) -> Args:
    """One row of an import, checked (``transfer.check``) and redacted; a record row carries
    the ``NewRecord`` to store. A row of another user is refused: its ids and chains are that
    user's."""
    if not isinstance(raw, dict):
        raise protocol.BadRequest(f"items[{index}] must be a map", arg="items")
    try:
        item = transfer.check(raw, f"items[{index}]")
    except transfer.TransferError as err:
        raise protocol.BadRequest(str(err), arg="items") from None
    owner = item.pop("user_id", None)
    if owner is not None and owner != user:
        raise protocol.BadRequest(
            f"items[{index}] belongs to user {owner!r}: import it as that user (--user)",
            arg="items")
    for key in _REDACTED_TEXT:
        if item.get(key):
            item[key] = redact(item[key])
    for key in ("metadata", "detail"):
        if item.get(key):
            item[key] = redact_value(item[key])
    if item["type"] == "record":
        item["record"] = transfer.new_record(item, user)
    return item


def op_import(s: Services, args: Args) -> Future[Args]:
    """Import up to 1,000 rows in one transaction; each answers ADD (written and audited as
    an import), NONE (held already), FORGOTTEN (a record whose text is forgotten here) or
    SKIP (with the reason, e.g. a link to a record not here)."""
    user, actor, writes = _user(args), _actor(args), s.writes
    items = [_import_item(raw, i, user) for i, raw in enumerate(args["items"])]

    def job() -> Args:
        results = []
        for item in items:
            try:
                results.append({"type": item["type"], **writes.import_row(item, user, actor)})
            except protocol.RemoteError as err:
                results.append({"type": item["type"], "event": "SKIP", "reason": err.message})
            except Exception as err:
                code, message, _arg = error_code(err)
                if code != protocol.BAD_REQUEST:
                    raise
                results.append({"type": item["type"], "event": "SKIP", "reason": message})
        return {"results": results}

    return s.submit(job)


def op_lint(s: Services, args: Args) -> Args:
    return s.reader.lint(args["user_id"], args["at"], args["only_flagged"], args["limit"])


def op_lint_docs(s: Services, args: Args) -> Args:
    return s.reader.lint_docs(args["user_id"], args["limit"])


def op_reindex(s: Services, args: Args) -> Future[Args]:
    return s.control.reindex(args["full"])


def op_backup(s: Services, args: Args) -> Args:
    return s.control.backup(args["to"])


def op_pause(s: Services, args: Args) -> Args:
    return s.control.pause(args["duration"], args["session_id"])


def op_resume(s: Services, args: Args) -> Args:
    return s.control.resume(args["session_id"])


def op_ui(s: Services, args: Args) -> Args:
    return s.control.ui(args["port"])


def op_http(s: Services, args: Args) -> Args:
    return s.control.http(args["port"])


def _team(s: Services) -> Team:
    if s.team is None:
        raise protocol.BadRequest("this daemon has no team tier")
    return s.team


def op_team_join(s: Services, args: Args) -> Args:
    return _team(s).join(args["dsn"], args["name"], args["member"], args["repo_key"])


def op_team_add_member(s: Services, args: Args) -> Args:
    return _team(s).add_member(args["name"], args["dsn"])


def op_team_leave(s: Services, args: Args) -> Args:
    return _team(s).leave()


def op_team_status(s: Services, args: Args) -> Args:
    return _team(s).status()


def op_team_private(s: Services, args: Args) -> Args:
    return _team(s).set_private(args["client"], args["share"])


def _board(s: Services) -> Board:
    if s.board is None:
        raise protocol.Unavailable("this daemon has no bulletin board")
    return s.board


def op_board_open(s: Services, args: Args) -> Future[Args]:
    return _board(s).open(_user(args), args["key"], args["title"], args["client"],
                          args["session_id"])


def op_board_list(s: Services, args: Args) -> Args:
    return _board(s).boards(_user(args), args["session_id"])


def op_board_info(s: Services, args: Args) -> Args:
    return _board(s).info(_user(args), args["board_id"], args["session_id"])


def op_board_post(s: Services, args: Args) -> Future[Args]:
    return _board(s).post(_user(args), args["board_id"], args["content"], args["request_id"],
                          args["author"], args["client"], args["session_id"])


def op_board_read(s: Services, args: Args) -> Args | Future[Args]:
    return _board(s).read(_user(args), args["board_id"], args["after_sequence"],
                          args["limit"], args["wait"], args["session_id"], args["client"])


def op_board_get(s: Services, args: Args) -> Args:
    return _board(s).get(_user(args), args["post_id"], args["board_id"])


def op_board_search(s: Services, args: Args) -> Args:
    return _board(s).search(_user(args), args["query"], args["board_id"], args["top_k"])


HANDLERS: dict[str, Handler] = {
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
    "confirm": op_confirm,
    "restore": op_restore,
    "review": op_review,
    "decide": op_decide,
    "audit": op_audit,
    "export": op_export,
    "import": op_import,
    "lint": op_lint,
    "lint_docs": op_lint_docs,
    "stats": op_stats,
    "reindex": op_reindex,
    "backup": op_backup,
    "pause": op_pause,
    "resume": op_resume,
    "ui": op_ui,
    "http": op_http,
    "team_join": op_team_join,
    "team_add_member": op_team_add_member,
    "team_leave": op_team_leave,
    "team_status": op_team_status,
    "team_private": op_team_private,
    "board_open": op_board_open,
    "board_list": op_board_list,
    "board_info": op_board_info,
    "board_post": op_board_post,
    "board_read": op_board_read,
    "board_get": op_board_get,
    "board_search": op_board_search,
}



def check_handlers(handlers: dict[str, Handler], declared: dict[str, ops.Op]) -> None:
    """Refuse a table that does not answer exactly the declared ops: an op declared without a
    handler would be accepted and then fail on every request; a handler for no declaration is
    never reached."""
    missing = sorted(set(declared) - set(handlers))
    extra = sorted(set(handlers) - set(declared))
    if missing or extra:
        raise RuntimeError(f"op handlers do not match the declarations: no handler for "
                           f"{missing or 'none'}; no declaration for {extra or 'none'}")
    for name, handler in handlers.items():
        if not callable(handler):
            raise RuntimeError(f"the handler of {name!r} is not callable")


check_handlers(HANDLERS, ops.OPS)

Done = Callable[[Any, "BaseException | None", "str | None"], None]


def dispatch(services: Services, spec: ops.Op, args: Args, after: str | None,
             done: Done) -> None:
    """Run one validated request the one way every face runs it (the socket server, the
    viewer, the HTTP API): wait for the index when the op declares it (until ``after``, or
    every committed write), run its handler, and call ``done(result, error, token)`` once
    the result is final (a write's after its commit). Never raises: a failure goes to
    ``done``."""
    try:
        if spec.waits_for_index:
            services.reader.settle(after)
        result = HANDLERS[spec.name](services, args)
    except Exception as err:
        done(None, err, None)
    else:
        settle(result, done)


_TRANSIENT = ("disk is full", "disk full", "database is locked", "readonly", "read-only",
              "disk i/o error", "no space left")


def error_code(err: BaseException) -> tuple[str, str, str | None]:
    """Map an exception raised by a handler or a job to (protocol code, message, argument)."""
    if isinstance(err, protocol.RemoteError):
        return err.code, err.message, err.arg
    code = getattr(err, "code", None)
    message = getattr(err, "message", None)
    if isinstance(code, str) and isinstance(message, str):  # the store's StoreError
        return code, message, None
    text = str(err).lower()
    if isinstance(err, OSError) or any(word in text for word in _TRANSIENT):
        # disk full, read-only file system, a locked database: the same request may succeed
        return protocol.UNAVAILABLE, f"{type(err).__name__}: {err}", None
    return protocol.INTERNAL, f"{type(err).__name__}: {err}", None
