"""The HTTP API's routes: every op of the registry by its declaration, mem0's REST routes on
top.

Every op that is not a ``control`` op (ping and shutdown belong to the daemon's own life) is
``POST /ops/NAME`` with its arguments as a JSON object, and a ``read`` op also
``GET /ops/NAME?ARG=...``: an op added to ``lintaid_client.ops`` is served, described in the
OpenAPI document and checked by the same ``validate`` as on the socket, with nothing written
here. mem0's routes (``POST /memories``, ``GET /memories[/{id}[/history]]``, ``PUT`` and
``DELETE /memories/{id}``, ``POST /search``) are aliases: a route names its op, the fields
its request takes when they are not the op's own, and how those become the op's arguments
and its result the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from lintaid_client import ops
from lintaid_client.memory import messages_to_text
from lintaid_client.ops import Arg
from lintaid_client.protocol import BadRequest

Args = dict[str, Any]
FACE: Final = "http"
"""Who the audit log names for a change made over HTTP, and a board post's client, unless
the request names one (``ops.stamp``)."""
OPS_PREFIX: Final = "/ops/"
TRUE: Final = frozenset({"true", "1", "yes"})
FALSE: Final = frozenset({"false", "0", "no"})


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Route:
    """``method path`` runs ``op``. ``fields``: what the request takes when not the op's
    arguments; ``shape`` turns them into the op's arguments and ``reply`` its result into
    the answer. ``body``: the fields come in a JSON body (else in the query string only)."""

    method: str
    path: str  # "/memories/{id}": a segment in braces is a path argument
    op: str
    summary: str
    fields: tuple[Arg, ...] | None = None
    shape: Callable[[Args], Args] = _same
    reply: Callable[[Any], Any] = _same
    body: bool = True
    tag: str = "ops"

    @property
    def spec(self) -> ops.Op:
        return ops.OPS[self.op]

    @property
    def takes(self) -> tuple[Arg, ...]:
        return self.spec.args if self.fields is None else self.fields

    @property
    def params(self) -> list[str]:
        return [s[1:-1] for s in self.path.split("/") if s.startswith("{")]

    def match(self, path: str) -> dict[str, str] | None:
        want, got = self.path.split("/"), path.split("/")
        if len(want) != len(got):
            return None
        found: dict[str, str] = {}
        for pattern, segment in zip(want, got, strict=True):
            if pattern.startswith("{"):
                if not segment:
                    return None
                found[pattern[1:-1]] = segment
            elif pattern != segment:
                return None
        return found


# -- mem0's shapes -----------------------------------------------------------------------------
MESSAGES: Final = Arg("messages", ops.LIST, "a text, or mem0's messages [{role, content}] "
                      "(stored as one record, a 'role: content' line each)", required=True)
RUN_ID: Final = Arg("run_id", ops.STR, "mem0's run id: kept as the record's session_id",
                    max_bytes=ops.MAX_ID_BYTES)
AGENT_ID: Final = Arg("agent_id", ops.STR, "mem0's agent id: kept as the record's source",
                      max_bytes=ops.MAX_ID_BYTES)
TEXT: Final = Arg("text", ops.TEXT, "the new text (mem0's field)", required=True,
                  max_bytes=ops.MAX_CONTENT_BYTES)
LIMIT: Final = Arg("limit", ops.INT, "how many hits (mem0's name for top_k)", lo=1,
                   hi=ops.MAX_TOP_K)
FILTERS: Final = Arg("filters", ops.MAP, "search arguments given as mem0's filters (store, "
                     "user_id, history, as_of, valid_at, client, kind)")


def _checked(request: Args, *mem0: Arg) -> Args:
    """A copy of ``request`` with mem0's fields checked under the names the caller sent
    (renamed after, they would be refused under lintaid's names)."""
    args = dict(request)
    for arg in mem0:
        if args.get(arg.name) is not None:
            args[arg.name] = ops.check(arg, args[arg.name])
    return args


def _rename(args: Args, old: str, new: str) -> Args:
    if args.get(old) is None:
        args.pop(old, None)
        return args
    if args.get(new) is not None:
        raise BadRequest(f"give '{old}' or '{new}', not both", arg=old)
    args[new] = args.pop(old)
    return args


def _mem0_add(request: Args) -> Args:
    args = dict(request)
    messages = args.pop("messages", None)
    if messages is None:
        raise BadRequest("'messages' is required", arg="messages")
    try:
        args["content"] = messages_to_text(messages)
    except (TypeError, ValueError) as err:
        raise BadRequest(f"'messages': {err}", arg="messages") from None
    return _rename(_rename(_checked(args, RUN_ID, AGENT_ID), "run_id", "session_id"),
                   "agent_id", "source")


def _mem0_added(result: Args) -> Args:
    return {"results": [{"id": result["id"], "memory": result["memory"],
                         "event": result["event"]}]}


def _with_memory(hit: Any) -> Any:
    """A hit as mem0 readers expect it: its text also as ``memory``."""
    if isinstance(hit, dict) and "content" in hit:
        return {**hit, "memory": hit["content"]}
    return hit


def _hits(result: Args) -> Args:
    return {**result, "results": [_with_memory(h) for h in result.get("results", [])]}


def _mem0_search(request: Args) -> Args:
    args = _rename(_checked(request, LIMIT), "limit", "top_k")
    filters = args.pop("filters", None)
    if filters is None:
        return args
    if not isinstance(filters, Mapping):
        raise BadRequest("'filters' must be a map", arg="filters")
    allowed = {a.name for a in ops.OPS["search"].args} - {"query", "top_k", "passages"}
    for key, value in filters.items():
        if key not in allowed:
            raise BadRequest(f"unsupported search filter {key!r}; supported: "
                             f"{', '.join(sorted(allowed))}", arg="filters")
        if args.get(key) is not None and args[key] != value:
            raise BadRequest(f"{key!r} given both as an argument and a filter", arg="filters")
        args[key] = value
    return args


def _without(op: str, *names: str) -> tuple[Arg, ...]:
    return tuple(a for a in ops.OPS[op].args if a.name not in names)


def mem0_routes() -> list[Route]:
    return [
        Route("POST", "/memories", "add", "Add memories (mem0): the messages are stored as "
              "one record.", (MESSAGES, *_without("add", "content", "items"), RUN_ID,
                              AGENT_ID), _mem0_add, _mem0_added, tag="mem0"),
        Route("GET", "/memories", "list", ops.OPS["list"].help + " (mem0's get_all)",
              reply=_hits, body=False, tag="mem0"),
        Route("GET", "/memories/{id}", "get", ops.OPS["get"].help, reply=_with_memory,
              body=False, tag="mem0"),
        Route("PUT", "/memories/{id}", "update", ops.OPS["update"].help,
              (TEXT, *_without("update", "content")),
              lambda a: _rename(_checked(a, TEXT), "text", "content"), tag="mem0"),
        Route("DELETE", "/memories/{id}", "forget", ops.OPS["forget"].help + " (mem0's "
              "delete)", body=False, tag="mem0"),
        Route("GET", "/memories/{id}/history", "history", ops.OPS["history"].help,
              reply=lambda r: r["results"], body=False, tag="mem0"),
        Route("POST", "/search", "search", ops.OPS["search"].help,
              (*ops.OPS["search"].args, LIMIT, FILTERS), _mem0_search, _hits, tag="mem0"),
    ]


def op_routes() -> list[Route]:
    """``POST /ops/NAME`` for every op but the control ones; ``GET`` too for a read op."""
    out: list[Route] = []
    for spec in ops.OPS.values():
        if spec.kind == ops.CONTROL:
            continue
        out.append(Route("POST", OPS_PREFIX + spec.name, spec.name, spec.help))
        if spec.kind == ops.READ:
            out.append(Route("GET", OPS_PREFIX + spec.name, spec.name, spec.help, body=False))
    return out


class Table:
    """The routes, built once from the registry (an op merged later is there at the next
    daemon)."""

    def __init__(self) -> None:
        self.routes = [*mem0_routes(), *op_routes()]

    def find(self, method: str, path: str) -> tuple[Route, dict[str, str]] | list[str]:
        """The route and its path arguments; else the methods the path takes (empty: no
        such path)."""
        methods: list[str] = []
        for route in self.routes:
            found = route.match(path)
            if found is None:
                continue
            if route.method == method:
                return route, found
            methods.append(route.method)
        return methods


# -- arguments ---------------------------------------------------------------------------------
def typed(arg: Arg, value: str) -> Any:
    """A query string's value as the argument's type (a JSON body carries types itself)."""
    if arg.type == ops.INT:
        try:
            return int(value)
        except ValueError:
            raise BadRequest(f"'{arg.name}' must be an integer, not {value!r}",
                             arg=arg.name) from None
    if arg.type == ops.BOOL:
        if value.lower() in TRUE:
            return True
        if value.lower() in FALSE:
            return False
        raise BadRequest(f"'{arg.name}' must be true or false, not {value!r}", arg=arg.name)
    if arg.type in (ops.MAP, ops.LIST):
        raise BadRequest(f"'{arg.name}' is a {arg.type}: send it in a JSON body",
                         arg=arg.name)
    return value


def gather(route: Route, path_args: Mapping[str, str], query: Sequence[tuple[str, str]],
           body: Mapping[str, Any] | None) -> Args:
    """The request's fields from its path, query string and body; a field given in two of
    them is refused."""
    known = {a.name: a for a in route.takes}
    out: Args = dict(path_args)
    where = dict.fromkeys(path_args, "the path")
    for key, value in query:
        arg = known.get(key)
        _put(out, where, key, typed(arg, value) if arg is not None else value, "the query")
    for key, value in (body or {}).items():
        _put(out, where, key, value, "the body")
    return out


def _put(out: Args, where: dict[str, str], key: str, value: Any, place: str) -> None:
    if key in out:
        raise BadRequest(f"'{key}' is given twice (in {where[key]} and {place})", arg=key)
    out[key], where[key] = value, place
