"""Requests to pages: the route table, each page's reads, and the record actions.

Paths are those below the token (the gate has taken it off). Reads go through ops (``list``,
``search``, ``get``, ``history``, ``status``, ``stats``) and the ``Reader`` (chains,
conflicts); changes
go through the ops in ``ACTIONS`` only, so they take the writer's path, are validated as every
client's are and land in the audit log as the viewer's.

A change is one row of ``ACTIONS``: what the path names (a record, or a review item), the op
it runs, the form fields it passes, where it leads afterwards; each is a button on a page.
A refused change shows its page again with the op's message and the form as it was typed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl, quote, urlencode

from lintaid_client import ops, protocol
from lintaid_client.models import Hit, ReviewItem, SearchResult

from ..capture.git import revision_status
from ..integrations import registry
from ..integrations.injection import excerpt
from ..ops import Services
from .calls import OpCaller
from .live import Changes
from .render import Renderer

PAGE: Final = 50
"""Timeline and audit rows per page."""
BOARD_SHOWN: Final = 100
"""Posts of a board the board page shows: the newest, in order."""
REVIEW_SHOWN: Final = 200
"""Review items and conflicts the conflicts page shows at most."""
KEEPALIVE_S: Final = 15.0
STATIC: Final = {"app.css": "text/css; charset=utf-8",
                 "live.js": "text/javascript; charset=utf-8"}
NOTICES: Final = {
    "forgotten": ("Forgotten {id}: it is hidden everywhere, and the same text captured again "
                  "stays forgotten.", "Restore it", "/record/{id}"),
    "restored": ("Restored {id}: it is searched and injected again, and its text may be "
                 "captured again.", None, None),
    "superseded": ("{id} is superseded by this record.", None, None),
    "accepted": ("Accepted {id}: {newer} now explicitly supersedes {older}, which is hidden "
                 "(kept in history).", "The older memory", "/record/{older}"),
    "accepted_over_file": ("Accepted {id}: {newer} stands, no longer marked; {document}.",
                           "The memory", "/record/{newer}"),
    "rejected": ("Rejected {id}: {newer} and {older} will not be related again; both stand.",
                 None, None),
    "unchanged": ("{id} was {status} already; nothing changed.", None, None),
}
"""What a page says after a change: (text, link text, link path), filled from the query."""
_TARGET: Final = re.compile(r"/(record|review)/([^/]+)(?:/([a-z_]+))?")


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    form: dict[str, str] = field(default_factory=dict)


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    location: str | None = None
    stream: Callable[[Callable[[bytes], None]], None] | None = None
    headers: dict[str, str] = field(default_factory=dict)  # more headers (Retry-After ...)


@dataclass(frozen=True)
class Notice:
    text: str
    link: str | None = None
    href: str | None = None


@dataclass(frozen=True)
class Action:
    """A change made from a page, posted to ``/{on}/ID/NAME``: ``op`` with ID as ``id_arg``,
    the form's ``fields`` and the ``fixed`` arguments; ``after`` says where to go from the
    op's result."""

    op: str
    id_arg: str
    fields: tuple[str, ...]
    after: Callable[[str, dict[str, Any]], tuple[str, dict[str, str]]]
    on: str = "record"  # or "review": a review item's id
    fixed: Mapping[str, str] = field(default_factory=dict)


def _decided(item: str, result: dict[str, Any]) -> tuple[str, dict[str, str]]:
    notice = result["status"] if result["event"] != "NONE" else "unchanged"
    if notice == "accepted" and result.get("document"):
        notice = "accepted_over_file"  # a memory over a decision document: the file stays
    return "/conflicts", {"notice": notice, "id": item, "status": result["status"],
                          "newer": result["newer_id"], "older": result["older_id"],
                          "document": result.get("document") or ""}


ACTIONS: Final = {
    "forget": Action("forget", "id", ("reason",),
                     lambda rid, _r: ("/", {"notice": "forgotten", "id": rid})),
    "restore": Action("restore", "id", ("reason",),
                      lambda rid, _r: (f"/record/{rid}", {"notice": "restored", "id": rid})),
    "supersede": Action("supersede", "old_id", ("content", "new_id"),
                        lambda rid, r: (f"/record/{r['new_id']}",
                                        {"notice": "superseded", "id": rid})),
    "accept": Action("decide", "id", ("reason",), _decided, on="review",
                     fixed={"decision": "accept"}),
    "reject": Action("decide", "id", ("reason",), _decided, on="review",
                     fixed={"decision": "reject"}),
}


class App:
    def __init__(self, services: Services, root: Path, base: str, changes: Changes) -> None:
        self.services = services
        self.call = OpCaller(services)
        self.root = root
        self.base = base  # "/TOKEN": every link starts with it
        self.changes = changes
        self.renderer = Renderer()

    # -- dispatch ----------------------------------------------------------------------------
    def handle(self, request: Request) -> Response:
        try:
            return self._route(request)
        except protocol.RemoteError as err:
            return self.error(_status_of(err), err.message)

    def _route(self, request: Request) -> Response:
        path, method = request.path, request.method
        if method not in ("GET", "HEAD", "POST"):
            return self.error(405, f"{method} is not supported here.")
        target = _TARGET.fullmatch(path)
        if method == "POST":
            action = ACTIONS.get(target.group(3) or "") if target else None
            if target and action and action.on == target.group(1):
                return self.act(target.group(2), action, request.form)
            return self.error(405 if self._known(path) else 404, "Nothing to change here.")
        if target and target.group(1) == "record" and target.group(3) is None:
            return self.record(target.group(2), request.query)
        pages = self._pages()
        if path in pages:
            return pages[path](request.query)
        if path.startswith("/static/"):
            return self.static(path.removeprefix("/static/"))
        return self.error(404, "No such page.")

    def _pages(self) -> dict[str, Callable[[dict[str, str]], Response]]:
        return {"/": self.timeline, "/search": self.search, "/conflicts": self.conflicts,
                "/audit": self.audit, "/status": self.status, "/ledger": self.ledger,
                "/board": self.board, "/events": self.events}

    def _known(self, path: str) -> bool:
        target = _TARGET.fullmatch(path)
        return path in self._pages() or bool(target and target.group(1) == "record")

    # -- pages -------------------------------------------------------------------------------
    def timeline(self, query: dict[str, str]) -> Response:
        filters = {name: query.get(name) or None
                   for name in ("status", "client", "branch", "kind", "session_id", "since",
                                "until")}
        offset = _int(query.get("offset"), 0)
        error = None
        try:
            result = self.call("list", limit=PAGE + 1, offset=offset, **filters)
            hits = [Hit.from_dict(h) for h in result["results"]]
        except protocol.BadRequest as err:
            hits, error = [], err.message
        more, hits = len(hits) > PAGE, hits[:PAGE]
        context: dict[str, Any] = dict(
            groups=_sessions(hits), filters=filters, offset=offset, more=more, page=PAGE,
            error=error, notice=self._notice(query),
            statuses=ops.LISTED_STATUSES, kinds=ops.KIND_CHOICES, clients=registry.names(),
            here=self._link("/", {**filters, "offset": str(offset) if offset else None}),
            fragment=self._link("/", {**filters, "fragment": "1"}),
            older=self._link("/", {**filters, "offset": str(offset + PAGE)}),
            newer=self._link("/", {**filters, "offset": str(offset - PAGE)
                                   if offset > PAGE else None}))
        if query.get("fragment"):
            return self.html("_timeline_rows.html", **context)
        return self.html("timeline.html", status=400 if error else 200, **context)

    def search(self, query: dict[str, str]) -> Response:
        text = (query.get("q") or "").strip()
        form: dict[str, Any] = {"q": text, "top_k": query.get("top_k") or "10",
                "history": bool(query.get("history")), "store": query.get("store") or "all",
                "client": query.get("client") or "", "kind": query.get("kind") or ""}
        result, error, rows = None, None, []
        if text:
            try:
                result = SearchResult.from_dict(self.call(
                    "search", query=text, top_k=_int(form["top_k"], 10),
                    history=form["history"], store=form["store"],
                    client=form["client"] or None, kind=form["kind"] or None,
                    passages=True))
            except protocol.BadRequest as err:
                error = err.message
        stems: dict[str, None] = {}
        for hit in result.results if result else []:
            shown = excerpt(hit)
            rows.append((hit, "\n".join(shown.lines), shown.notes))
            stems.update(dict.fromkeys(t for p in hit.passages for t in p.terms))
        return self.html("search.html", status=400 if error else 200, form=form,
                         result=result, rows=rows, stems=list(stems), error=error,
                         stores=ops.STORES, kinds=ops.KIND_CHOICES, clients=registry.names())

    def record(self, record_id: str, query: dict[str, str], *, form: dict[str, str] | None = None,
               error: str | None = None, status: int = 200) -> Response:
        try:
            hit = Hit.from_dict(self.call("get", id=record_id))
        except protocol.NotFound:
            return self.forgotten(record_id, query, form=form, error=error, status=status)
        history = self.call("history", id=record_id)["results"]
        chains = self.services.reader.chains(record_id, None)
        _branch, current = self.services.provenance()
        ancestry = revision_status(hit.revision, current, str(self.root)) \
            if hit.revision else None
        steps = {s.claim_id: s for chain in chains for s in chain.steps}
        files = [(shown, shown in hit.changed_files)
                 for shown in dict.fromkeys(_relative(p, self.root) for p in hit.paths)]
        return self.html("record.html", status=status, hit=hit, history=history,
                         chains=chains, steps=steps, files=files, current_revision=current,
                         ancestry=ancestry, form=form or {}, error=error,
                         notice=self._notice(query))

    def forgotten(self, record_id: str, query: dict[str, str], *,
                  form: dict[str, str] | None = None, error: str | None = None,
                  status: int = 200) -> Response:
        """The page of a forgotten record: ``get`` does not answer for it, its audit trail
        (``history``) does; it says when and why it was forgotten, holds the text as it was
        then, and offers to restore it. Not the user's, or not there: 404, as ``get``."""
        history = self.call("history", id=record_id)["results"]
        forget = next((ev for ev in reversed(history) if ev["is_deleted"]), None)
        if forget is None:
            raise protocol.NotFound(f"no memory {record_id!r}")
        return self.html("forgotten.html", status=status, record_id=record_id,
                         history=history, forget=forget, form=form or {}, error=error,
                         notice=self._notice(query))

    def conflicts(self, query: dict[str, str], *, form: dict[str, str] | None = None,
                  error: str | None = None, failed: str | None = None,
                  status: int = 200) -> Response:
        """The review queue (each item with accept and reject), then the conflicts it does
        not hold (a decision document takes part, or another user's)."""
        items = [ReviewItem.from_dict(i)
                 for i in self.call("review", limit=REVIEW_SHOWN)["results"]]
        queued = {frozenset((i.newer.claim_id, i.older.claim_id)) for i in items}
        others = [c for c in self.services.reader.conflicts(None, REVIEW_SHOWN)
                  if frozenset((c.a.claim_id, c.b.claim_id)) not in queued]
        return self.html("conflicts.html", status=status, items=items, conflicts=others,
                         form=form or {}, error=error, failed=failed,
                         notice=self._notice(query))

    def audit(self, query: dict[str, str]) -> Response:
        """Recent changes across the project (the ``audit`` op), newest first unless asked,
        filtered by actor, time and memory, a page at a time."""
        filters = {name: query.get(name) or None for name in ("actor", "since", "id")}
        order = query.get("order") or "newest"
        after = _int(query.get("after"), 0)
        events: list[dict[str, Any]] = []
        error, following = None, None
        try:
            result = self.call("audit", **filters, order=order, after=after, limit=PAGE)
            events, following = result["results"], result["next"]
        except protocol.BadRequest as err:
            error = err.message
        kept = {**filters, "order": order if order != "newest" else None}
        return self.html(
            "audit.html", status=400 if error else 200, events=events, filters=filters,
            order=order, orders=ops.AUDIT_ORDERS, error=error, after=after,
            first=self._link("/audit", kept) if after else None,
            more=self._link("/audit", {**kept, "after": str(following)})
            if following is not None else None)

    def status(self, query: dict[str, str]) -> Response:
        return self.html("status.html", info=self.call("status"))

    def ledger(self, query: dict[str, str]) -> Response:
        """What memory did (the ``stats`` op): a plot over the last days, the totals, each
        day, client and session, and the newest injections."""
        stats = self.call("stats", limit=_int(query.get("days"), 30), recent=PAGE)
        return self.html("ledger.html", stats=stats)

    def board(self, query: dict[str, str]) -> Response:
        """The bulletin board (``board_list``, ``board_read``): every board, and one board's
        newest posts in order, updated live as posts come (``fragment``: the posts only)."""
        boards = self.call("board_list")["boards"]
        key = (query.get("b") or "").strip() or None
        shown = next((b for b in boards if b["key"] == key or b["board_id"] == key), None) \
            if key else (boards[0] if boards else None)
        if key and shown is None:
            raise protocol.NotFound(f"no board {key!r} in this project")
        posts: list[dict[str, Any]] = []
        if shown is not None:
            after = max(0, int(shown["last_sequence"]) - BOARD_SHOWN)
            posts = self.call("board_read", board_id=shown["board_id"], after_sequence=after,
                              limit=BOARD_SHOWN)["posts"]
        context: dict[str, Any] = dict(
            boards=boards, shown=shown, posts=posts,
            fragment=self._link("/board", {"b": shown["key"] if shown else None,
                                           "fragment": "1"}))
        if query.get("fragment"):
            return self.html("_board_posts.html", **context)
        return self.html("board.html", **context)

    def events(self, query: dict[str, str]) -> Response:
        """Server-sent events: ``change`` whenever a write was committed."""
        changes = self.changes

        def stream(write: Callable[[bytes], None]) -> None:
            seen = changes.generation
            write(b"retry: 2000\n\n")
            while not changes.closed:
                now = changes.wait(seen, KEEPALIVE_S)
                if changes.closed:
                    return
                if now != seen:
                    seen = now
                    write(f"event: change\ndata: {now}\n\n".encode())
                else:
                    write(b": keep-alive\n\n")

        return Response(content_type="text/event-stream", stream=stream)

    def static(self, name: str) -> Response:
        if name not in STATIC:
            return self.error(404, "No such file.")
        body = resources.files("lintaid.viewer").joinpath("static", name).read_bytes()
        return Response(body=body, content_type=STATIC[name])

    # -- changes -----------------------------------------------------------------------------
    def act(self, target: str, action: Action, form: dict[str, str]) -> Response:
        """Run ``action`` on ``target``; refused (a bad request, or something not there),
        the page it was sent from again, with the message and what was typed."""
        args = {name: form.get(name) or None for name in action.fields}
        try:
            result = self.call(action.op, **{action.id_arg: target}, **args, **action.fixed)
        except (protocol.BadRequest, protocol.NotFound) as err:
            status = _status_of(err)
            typed = {**form, "action": action.op}
            if action.on == "review":
                return self.conflicts({}, form=typed, error=err.message, failed=target,
                                      status=status)
            return self.record(target, {}, form=typed, error=err.message, status=status)
        path, params = action.after(target, result)
        return Response(status=303, location=self._link(path, params))

    # -- helpers -----------------------------------------------------------------------------
    def html(self, template: str, status: int = 200, **context: Any) -> Response:
        body = self.renderer.page(template, base=self.base, root=self.root, **context)
        return Response(status=status, body=body.encode())

    def error(self, status: int, message: str) -> Response:
        return self.html("error.html", status=status, code=status, message=message)

    def _notice(self, query: Mapping[str, str]) -> Notice | None:
        """What the page says after a change (``NOTICES``), filled from the query."""
        found = NOTICES.get(query.get("notice") or "")
        if found is None:
            return None
        text, link, path = found
        values = _Filled({k: v for k, v in query.items() if v})
        href = self.base + path.format_map(
            _Filled({k: quote(v, safe="") for k, v in values.items()})) if path else None
        return Notice(text.format_map(values), link, href)

    def _link(self, path: str, params: Mapping[str, str | None]) -> str:
        kept = {k: v for k, v in params.items() if v}
        return self.base + path + (f"?{urlencode(kept)}" if kept else "")


def parse_query(text: str) -> dict[str, str]:
    """A query string or a form body: the last value of each name."""
    return dict(parse_qsl(text, keep_blank_values=True, strict_parsing=False,
                          errors="strict", max_num_fields=100))


def _relative(path: str, root: Path) -> str:
    """A path a record names, relative to the project when it lies inside it (as the
    workspace names files, and ``Hit.changed_files`` with them)."""
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return path


def _status_of(err: protocol.RemoteError) -> int:
    return {protocol.NOT_FOUND: 404, protocol.BAD_REQUEST: 400, protocol.TOO_LARGE: 413,
            protocol.FORBIDDEN: 403, protocol.UNAVAILABLE: 503}.get(err.code, 500)


def _int(value: str | None, default: int) -> int:
    try:
        return max(0, int(value)) if value else default
    except ValueError:
        raise protocol.BadRequest(f"{value!r} is not a whole number") from None


class _Filled(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


@dataclass
class SessionGroup:
    """Consecutive timeline rows of one agent session (or of none: notes)."""

    session_id: str | None
    client: str | None
    branch: str | None
    hits: list[Hit] = field(default_factory=list)

    @property
    def span(self) -> tuple[float | None, float | None]:
        times = [h.created_at for h in self.hits if h.created_at is not None]
        return (min(times), max(times)) if times else (None, None)


def _sessions(hits: list[Hit]) -> list[SessionGroup]:
    groups: list[SessionGroup] = []
    for hit in hits:
        last = groups[-1] if groups else None
        if last is None or (last.session_id, last.client) != (hit.session_id, hit.client):
            last = SessionGroup(hit.session_id, hit.client, hit.branch)
            groups.append(last)
        last.hits.append(hit)
    return groups

