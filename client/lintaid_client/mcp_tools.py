"""The MCP tools of ``lintaid-mcp``, built from the op declarations.

Every op with ``tool`` set (``ops.OPS``) is one tool: named ``op.tool``, described by the op's
help, its input schema ``ops.tool_schema(op)`` (the op's ``mcp`` arguments and nothing else),
its arguments checked by ``ops.validate_tool`` (the daemon's own messages; an unknown argument
is refused). Results are typed: a compact view per op, built from ``models``, whose dataclass
is also the tool's output schema. Every refusal (bad_request, not_found, daemon down, timeout)
is a tool result with ``isError: true`` and a message an agent can act on.

The daemon is reached through one ``Memory`` client, created on the first tool call (it may
start the daemon, detached); importing this module touches neither pyzmq nor msgpack.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from . import ops, protocol
from .mcp_rpc import Log
from .models import CURRENT, WORKSPACE, Hit, ReviewItem
from .paths import ProjectError

if TYPE_CHECKING:
    from .memory import Memory

ACTOR: Final = "mcp"
SUMMARY_CHARS: Final = 160


# -- result views ------------------------------------------------------------------------------
@dataclass
class SearchLine:
    """One hit, compact: get_memory gives the whole record."""

    id: str
    status: str
    historical: bool
    store: str
    kind: str
    score: float
    summary: str
    location: str | None
    superseded_by: str | None
    client: str | None  # the agent client that captured it
    staleness: str | None  # fresh | aging | stale | expired (memory records only)
    context: list[str]  # a conversation turn's neighbours: "before: Name: text", "after: ..."


@dataclass
class SearchLines:
    results: list[SearchLine]
    hidden: int
    history: bool


@dataclass
class MemoryLine:
    id: str
    status: str
    kind: str
    summary: str
    source: str | None
    created_at: float | None
    client: str | None
    staleness: str | None


@dataclass
class MemoryLines:
    results: list[MemoryLine]
    count: int


@dataclass
class Added:
    id: str
    event: str  # ADD (stored), NONE (already stored), SUPERSEDE (already stored; its link
    # was added), FORGOTTEN (stays forgotten)
    supersedes: str | None


@dataclass
class Confirmed:
    id: str
    event: str  # CONFIRM
    confirmed_at: float | None


@dataclass
class Forgotten:
    id: str
    event: str


@dataclass
class Superseded:
    old_id: str
    new_id: str


@dataclass
class HistoryEvent:
    id: str
    memory_id: str
    event: str  # ADD | UPDATE | SUPERSEDE | FORGET | EXPIRE | ...
    old_memory: str | None
    new_memory: str | None
    actor: str | None
    created_at: float | None
    detail: dict[str, Any]


@dataclass
class History:
    id: str
    events: list[HistoryEvent]


@dataclass
class ReviewLine:
    """One item: ``newer`` supersedes (too weakly to hide it) or conflicts with ``older``."""

    id: str
    kind: str  # supersedes | conflicts_with
    confidence: float
    subject: str
    predicate: str
    newer_id: str
    newer_value: str
    newer_statement: str
    older_id: str
    older_value: str
    older_statement: str
    same_record: bool  # both in one memory: accepting cannot link it to itself
    newer_location: str = ""  # a memory's id, or a decision document's path:line
    older_location: str = ""


@dataclass
class ReviewLines:
    results: list[ReviewLine]
    count: int


@dataclass
class Decided:
    id: str
    event: str  # ACCEPT | REJECT | NONE (decided so already)
    status: str  # accepted | rejected
    newer_id: str
    older_id: str
    document: str | None = None  # accepted over a decision document: the file still differs


@dataclass
class Status:
    root: str
    pid: int | None
    uptime_s: float | None
    version: str | None
    memory: dict[str, int]
    writer_queue: int | None
    spool_depth: int | None
    workspace: dict[str, Any] | None


def one_line(text: str | None, limit: int = SUMMARY_CHARS) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _search(raw: Any, args: dict[str, Any], root: Path) -> SearchLines:
    hits = [Hit.from_dict(h) for h in raw.get("results") or []]
    return SearchLines(
        results=[SearchLine(
            id=h.id, status=h.status or CURRENT, historical=bool(h.historical), store=h.store,
            kind=h.kind, score=round(float(h.score or 0.0), 4), summary=one_line(h.content),
            location=h.location() if h.store == WORKSPACE and h.path else None,
            superseded_by=h.superseded_by, client=h.client, staleness=_level(h),
            context=[f"{c.position}: {one_line(c.said())}" for c in h.context])
            for h in hits],
        hidden=int(raw.get("hidden") or 0), history=bool(raw.get("history")))


def _level(hit: Hit) -> str | None:
    return hit.staleness.level if hit.staleness else None


def _confirm(raw: Any, args: dict[str, Any], root: Path) -> Confirmed:
    return Confirmed(id=raw.get("id") or args["id"], event=raw.get("event") or "CONFIRM",
                     confirmed_at=raw.get("confirmed_at"))


def _get(raw: Any, args: dict[str, Any], root: Path) -> Hit:
    return Hit.from_dict(raw)


def _list(raw: Any, args: dict[str, Any], root: Path) -> MemoryLines:
    hits = [Hit.from_dict(h) for h in raw.get("results") or []]
    lines = [MemoryLine(id=h.id, status=h.status or CURRENT, kind=h.kind,
                        summary=one_line(h.content), source=h.source,
                        created_at=h.created_at, client=h.client, staleness=_level(h))
             for h in hits]
    return MemoryLines(results=lines, count=len(lines))


def _add(raw: Any, args: dict[str, Any], root: Path) -> Added:
    return Added(id=raw["id"], event=raw["event"], supersedes=args.get("supersedes"))


def _forget(raw: Any, args: dict[str, Any], root: Path) -> Forgotten:
    return Forgotten(id=raw.get("id") or args["id"], event=raw.get("event") or "DELETE")


def _supersede(raw: Any, args: dict[str, Any], root: Path) -> Superseded:
    return Superseded(old_id=raw["old_id"], new_id=raw["new_id"])


def _history(raw: Any, args: dict[str, Any], root: Path) -> History:
    events = [HistoryEvent(
        id=str(row.get("id")), memory_id=str(row.get("memory_id") or args["id"]),
        event=str(row.get("event")), old_memory=row.get("old_memory"),
        new_memory=row.get("new_memory"), actor=row.get("actor"),
        created_at=row.get("created_at"), detail=dict(row.get("detail") or {}),
    ) for row in raw.get("results") or []]
    return History(id=raw.get("id") or args["id"], events=events)


def _review(raw: Any, args: dict[str, Any], root: Path) -> ReviewLines:
    items = [ReviewItem.from_dict(i) for i in raw.get("results") or []]
    return ReviewLines(results=[ReviewLine(
        id=i.id, kind=i.kind, confidence=i.confidence, subject=i.subject,
        predicate=i.predicate, newer_id=i.newer.record_id, newer_value=i.newer.value,
        newer_statement=one_line(i.newer.evidence), older_id=i.older.record_id,
        older_value=i.older.value, older_statement=one_line(i.older.evidence),
        same_record=i.same_record, newer_location=i.newer.location(),
        older_location=i.older.location()) for i in items], count=len(items))


def _decide(raw: Any, args: dict[str, Any], root: Path) -> Decided:
    return Decided(id=raw["id"], event=raw["event"], status=raw["status"],
                   newer_id=raw["newer_id"], older_id=raw["older_id"],
                   document=raw.get("document"))


def _status(raw: Any, args: dict[str, Any], root: Path) -> Status:
    versions = raw.get("versions") or {}
    return Status(
        root=str(raw.get("root") or root), pid=raw.get("pid"), uptime_s=raw.get("uptime_s"),
        version=versions.get("lintaid"),
        memory={k: int(v) for k, v in (raw.get("memory") or {}).items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)},
        writer_queue=raw.get("writer_queue"), spool_depth=raw.get("spool_depth"),
        workspace=raw.get("workspace"))


@dataclass
class BoardLine:
    """One bulletin board, as this session sees it (``unread``: None until it joined)."""

    board_id: str
    key: str
    title: str
    posts: int
    last_sequence: int
    last_post_at: float | None
    created_at: float | None
    created_by_client: str | None
    joined: bool
    unread: int | None
    session_board: bool  # posts and reads without board_id go here


@dataclass
class BoardOpened(BoardLine):
    created: bool = False
    session_id: str | None = None  # the session that joined it


@dataclass
class Boards:
    boards: list[BoardLine]
    session_id: str | None


@dataclass
class Post:
    post_id: str
    board_id: str
    board_key: str
    sequence: int
    content: str
    author: str | None
    client: str | None  # the agent client that posted
    session_id: str | None  # the session that posted
    request_id: str
    created_at: float


@dataclass
class Posted(Post):
    event: str = "ADD"  # ADD (posted) or NONE (this request_id posted it already)


@dataclass
class Posts:
    board_id: str
    key: str
    posts: list[Post]
    last_sequence: int  # pass it as after_sequence to read on
    more: bool  # the limit was reached: read on at once


@dataclass
class FoundPost(Post):
    score: float = 0.0


@dataclass
class FoundPosts:
    posts: list[FoundPost]


def _fields(cls: type, raw: Mapping[str, Any]) -> dict[str, Any]:
    return {f.name: raw.get(f.name) for f in dataclasses.fields(cls)}


def _board_line(raw: Mapping[str, Any]) -> BoardLine:
    return BoardLine(**_fields(BoardLine, raw))


def _board_open(raw: Any, args: dict[str, Any], root: Path) -> BoardOpened:
    return BoardOpened(**{**_fields(BoardLine, raw), "created": bool(raw.get("created")),
                          "session_id": args.get("session_id")})


def _board_list(raw: Any, args: dict[str, Any], root: Path) -> Boards:
    return Boards(boards=[_board_line(b) for b in raw.get("boards") or []],
                  session_id=args.get("session_id"))


def _board_info(raw: Any, args: dict[str, Any], root: Path) -> BoardLine:
    return _board_line(raw)


def _post(raw: Any, args: dict[str, Any], root: Path) -> Post:
    return Post(**_fields(Post, raw))


def _board_post(raw: Any, args: dict[str, Any], root: Path) -> Posted:
    return Posted(**_fields(Posted, raw))


def _board_read(raw: Any, args: dict[str, Any], root: Path) -> Posts:
    return Posts(board_id=raw["board_id"], key=raw["key"],
                 posts=[Post(**_fields(Post, p)) for p in raw.get("posts") or []],
                 last_sequence=int(raw["last_sequence"]), more=bool(raw.get("more")))


def _board_search(raw: Any, args: dict[str, Any], root: Path) -> FoundPosts:
    return FoundPosts(posts=[FoundPost(**_fields(FoundPost, p)) for p in raw.get("posts") or []])


Shape = Callable[[Any, dict[str, Any], Path], Any]

VIEWS: Final[dict[str, tuple[type, Shape]]] = {
    "search": (SearchLines, _search),
    "get": (Hit, _get),
    "list": (MemoryLines, _list),
    "add": (Added, _add),
    "forget": (Forgotten, _forget),
    "supersede": (Superseded, _supersede),
    "history": (History, _history),
    "confirm": (Confirmed, _confirm),
    "status": (Status, _status),
    "review": (ReviewLines, _review),
    "decide": (Decided, _decide),
    "board_open": (BoardOpened, _board_open),
    "board_list": (Boards, _board_list),
    "board_info": (BoardLine, _board_info),
    "board_post": (Posted, _board_post),
    "board_read": (Posts, _board_read),
    "board_get": (Post, _post),
    "board_search": (FoundPosts, _board_search),
}
"""op name -> (the result's dataclass, which is the output schema; how to build it)."""


# -- JSON Schema from a dataclass ----------------------------------------------------------------
_SCALARS: Final[dict[Any, str]] = {str: "string", int: "integer", float: "number",
                                   bool: "boolean"}


def json_schema(tp: Any) -> dict[str, Any]:
    """The JSON Schema of a type hint: scalars, ``X | None``, lists, string-keyed dicts and
    dataclasses (every field required: a view always carries all of them)."""
    if tp is Any:
        return {}
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (types.UnionType, typing.Union):
        options = [a for a in args if a is not type(None)]
        inner = json_schema(options[0]) if len(options) == 1 else {
            "anyOf": [json_schema(a) for a in options]}
        if type(None) not in args:
            return inner
        if set(inner) == {"type"} and isinstance(inner["type"], str):
            return {"type": [inner["type"], "null"]}
        return {"anyOf": [inner, {"type": "null"}]}
    if origin is list:
        return {"type": "array", "items": json_schema(args[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": json_schema(args[1])}
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        names = [f.name for f in dataclasses.fields(tp)]
        return {"type": "object", "properties": {n: json_schema(hints[n]) for n in names},
                "required": names}
    raise TypeError(f"no JSON Schema for {tp!r}")


# -- the tools ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tool:
    op: ops.Op
    view: type
    shape: Shape

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.op.tool,
            "description": self.op.help,
            "inputSchema": ops.tool_schema(self.op),
            "outputSchema": json_schema(self.view),
            "annotations": {"readOnlyHint": self.op.kind == ops.READ, "openWorldHint": False},
        }


def _tools() -> dict[str, Tool]:
    out = {}
    for op in ops.OPS.values():
        if op.tool:
            view, shape = VIEWS[op.name]  # a KeyError here: a new tool needs its view
            out[op.tool] = Tool(op, view, shape)
    return out


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


class Toolbox:
    """The tools of one project, over one lazily created ``Memory`` client."""

    def __init__(self, root: Callable[[], Path], *, log: Log, autostart: bool = True,
                 timeout: float = 10.0,
                 client: Callable[[], str | None] = lambda: None,
                 session_id: str | None = None) -> None:
        self._find_root = root
        self._client = client  # the agent client on the other end, once it said
        # The session the board tools act for when a call names none: the agent's (from
        # the environment it started us with), else this connection's own, the same for
        # every call of it.
        self.session_id = session_id or "mcp-" + uuid.uuid4().hex[:12]
        self.root: Path | None = None
        self.log = log
        self.autostart = autostart
        self.timeout = timeout
        self.tools = _tools()
        self._listing = [t.describe() for t in self.tools.values()]
        self._memory: Memory | None = None
        self._lock = threading.Lock()

    def list(self) -> list[dict[str, Any]]:
        return self._listing

    def known(self, name: str) -> bool:
        return name in self.tools

    def memory(self) -> Memory:
        """The client, created on the first call (finding the project, and importing pyzmq
        and msgpack, only then)."""
        with self._lock:
            if self._memory is None:
                from .memory import Memory

                self.root = self._find_root()
                self._memory = Memory(self.root, actor=ACTOR, source=ACTOR,
                                      autostart=self.autostart, timeout=self.timeout)
            return self._memory

    def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        tool = self.tools[name]
        try:
            args = self._identify(tool.op, ops.validate_tool(tool.op, arguments))
            memory = self.memory()
            # A read that waits for a post is answered that much later by design.
            timeout = self.timeout + float(args.get("wait") or 0)
            raw = memory.call(tool.op.name, args, timeout=timeout)
            value = tool.shape(raw, args, memory.root)
        except protocol.RemoteError as err:  # bad_request (ours or the daemon's), not_found...
            return _error(f"{err.code}: {err.message}")
        except protocol.DaemonUnavailable as err:
            return _error(f"daemon_unavailable: {err}")
        except protocol.DaemonTimeout as err:
            return _error(f"daemon_timeout: {err}")
        except protocol.LintaidError as err:
            return _error(f"error: {err}")
        except ProjectError as err:  # LINTAID_PROJECT names no folder
            return _error(f"bad_project: {err}")
        except Exception as err:  # a bug or a surprise: one failed call, never a dead server
            self.log("error", f"tool {name} failed", trace=True)
            return _error(f"internal: {type(err).__name__}: {err}")
        payload = dataclasses.asdict(value)
        return {
            "content": [{"type": "text", "text": json.dumps(payload, ensure_ascii=False)}],
            "structuredContent": payload,
            "isError": False,
        }

    def _identify(self, op: ops.Op, args: dict[str, Any]) -> dict[str, Any]:
        """Fill in who calls, where the op takes it: the agent client, and this
        connection's session when the agent names none."""
        declared = {a.name for a in op.args}
        if "client" in declared and not op.arg("client").mcp:
            args["client"] = self._client()
        if "session_id" in declared and op.arg("session_id").mcp and not args.get("session_id"):
            args["session_id"] = self.session_id
        return args

    def close(self) -> None:
        with self._lock:
            memory, self._memory = self._memory, None
        if memory is not None:
            memory.close()
