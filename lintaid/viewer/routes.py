"""Requests to pages: the route table, each page's reads, and the record actions.

Paths are those below the token (the gate has taken it off). Reads go through ops (``list``,
``search``, ``get``, ``history``, ``status``) and the ``Reader`` (chains, conflicts); changes
go through the ops in ``ACTIONS`` only, so they take the writer's path, are validated as every
client's are and land in the audit log as the viewer's.

A record action is one row of ``ACTIONS``: the op it runs, the form fields it passes, where it
leads afterwards. Restoring a forgotten record or accepting and rejecting a review item are
rows of the same shape (and a button each) once the daemon has those ops.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode

from lintaid_client import ops, protocol
from lintaid_client.models import Hit, SearchResult

from ..capture.git import revision_status
from ..integrations import registry
from ..integrations.injection import build_excerpt, query_stems, query_terms
from ..ops import Services
from .calls import OpCaller
from .live import Changes
from .render import Renderer

PAGE: Final = 50
"""Timeline rows per page."""
KEEPALIVE_S: Final = 15.0
STATIC: Final = {"app.css": "text/css; charset=utf-8",
                 "live.js": "text/javascript; charset=utf-8"}
NOTICES: Final = {
    "forgotten": "Forgotten {id}: it is hidden everywhere, and the same text captured again "
                 "stays forgotten.",
    "superseded": "{id} is superseded by this record.",
}
_RECORD: Final = re.compile(r"/record/([^/]+)(?:/([a-z_]+))?")


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


@dataclass(frozen=True)
class Action:
    """A change made from the record page: ``op`` with this record as ``id_arg`` and the
    form's ``fields``; ``after`` says where to go from the op's result."""

    op: str
    id_arg: str
    fields: tuple[str, ...]
    after: Callable[[str, dict[str, Any]], tuple[str, dict[str, str]]]


ACTIONS: Final = {
    "forget": Action("forget", "id", ("reason",),
                     lambda rid, _r: ("/", {"notice": "forgotten", "id": rid})),
    "supersede": Action("supersede", "old_id", ("content", "new_id"),
                        lambda rid, r: (f"/record/{r['new_id']}",
                                        {"notice": "superseded", "id": rid})),
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
        record = _RECORD.fullmatch(path)
        if method == "POST":
            if record and record.group(2) in ACTIONS:
                return self.act(record.group(1), ACTIONS[record.group(2)], request.form)
            return self.error(405 if self._known(path) else 404, "Nothing to change here.")
        if record and record.group(2) is None:
            return self.record(record.group(1), request.query)
        pages: dict[str, Callable[[dict[str, str]], Response]] = {
            "/": self.timeline, "/search": self.search, "/conflicts": self.conflicts,
            "/status": self.status, "/events": self.events}
        if path in pages:
            return pages[path](request.query)
        if path.startswith("/static/"):
            return self.static(path.removeprefix("/static/"))
        return self.error(404, "No such page.")

    def _known(self, path: str) -> bool:
        return path in ("/", "/search", "/conflicts", "/status", "/events") or bool(
            _RECORD.fullmatch(path))

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
            error=error, notice=_notice(query),
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
                    client=form["client"] or None, kind=form["kind"] or None))
            except protocol.BadRequest as err:
                error = err.message
        stems, terms = query_stems(text), query_terms(text)
        for hit in result.results if result else []:
            shown = dataclasses.replace(hit, claims=[]) if hit.historical else hit
            excerpt, notes = build_excerpt(shown, terms)
            rows.append((hit, excerpt, notes))
        return self.html("search.html", status=400 if error else 200, form=form,
                         result=result, rows=rows, stems=stems, error=error,
                         stores=ops.STORES, kinds=ops.KIND_CHOICES, clients=registry.names())

    def record(self, record_id: str, query: dict[str, str], *, form: dict[str, str] | None = None,
               error: str | None = None, status: int = 200) -> Response:
        hit = Hit.from_dict(self.call("get", id=record_id))
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
                         notice=_notice(query))

    def conflicts(self, query: dict[str, str]) -> Response:
        return self.html("conflicts.html", conflicts=self.services.reader.conflicts(None, 200))

    def status(self, query: dict[str, str]) -> Response:
        return self.html("status.html", info=self.call("status"))

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
    def act(self, record_id: str, action: Action, form: dict[str, str]) -> Response:
        args = {name: form.get(name) or None for name in action.fields}
        try:
            result = self.call(action.op, **{action.id_arg: record_id}, **args)
        except protocol.BadRequest as err:
            return self.record(record_id, {}, form={**form, "action": action.op},
                               error=err.message, status=400)
        path, params = action.after(record_id, result)
        return Response(status=303, location=self._link(path, params))

    # -- helpers -----------------------------------------------------------------------------
    def html(self, template: str, status: int = 200, **context: Any) -> Response:
        body = self.renderer.page(template, base=self.base, root=self.root, **context)
        return Response(status=status, body=body.encode())

    def error(self, status: int, message: str) -> Response:
        return self.html("error.html", status=status, code=status, message=message)

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


def _notice(query: Mapping[str, str]) -> str | None:
    template = NOTICES.get(query.get("notice") or "")
    return template.format(id=query.get("id") or "?") if template else None


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

