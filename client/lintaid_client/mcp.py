"""``lintaid-mcp``: an MCP stdio server whose tools forward to the project's lintaid daemon.

It answers ``initialize`` and ``tools/list`` at once without touching the daemon; the first
tool call connects (starting the daemon detached if needed). Every tool returns a typed,
structured result (so clients see output schemas); a refused request (``not_found``,
``bad_request``, daemon down, ...) comes back as a tool error with a clear message, never a
crash. The process exits on stdin EOF or as soon as its parent process dies. Nothing is
printed to stdout except the protocol (the SDK points fd 1 at stderr while serving).

Project root: ``--project DIR``, else ``LINTAID_PROJECT``, else ``CLAUDE_PROJECT_DIR``, else
found from the working directory.

This is the only module of the client package that imports ``mcp``.
"""

# ruff: noqa: E402  (the parent pid is read before the slow imports below)
from __future__ import annotations

import os

_PARENT_PID = os.getppid()  # taken before the slow imports, so an early parent death counts

import argparse
import inspect
import logging
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from . import paths, protocol
from .memory import Memory, to_epoch

ACTOR = "mcp"
SUMMARY_CHARS = 160

INSTRUCTIONS = """\
Project memory for this repository, kept by the lintaid daemon: decisions, outcomes and notes
captured from earlier agent sessions, plus an index of the project's files. Search before
re-deriving something; every hit carries a status (current, conflicted, historical,
superseded, expired) - trust `current`, check `conflicted`. Record durable decisions with
add_memory, and when a fact changes, retire the old record with supersede_memory instead of
adding a contradicting one."""

log = logging.getLogger("lintaid.mcp")

def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("lintaid")
    except Exception:  # not installed as a distribution (e.g. run from a checkout)
        return "0"


_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_log_level = os.environ.get("LINTAID_MCP_LOG", "WARNING").upper()

# The SDK configures logging (to stderr) when the server is built; keep it quiet by default.
server = MCPServer("lintaid", instructions=INSTRUCTIONS, version=_package_version(),
                   log_level=_log_level if _log_level in _LOG_LEVELS else "WARNING")


# -- result models ---------------------------------------------------------------------------
class SearchLine(BaseModel):
    """One compact search hit."""

    id: str
    status: str = Field(description="current | conflicted | historical | superseded | expired")
    store: str = Field(description="memory (a record) or workspace (a project file chunk)")
    score: float
    summary: str = Field(description=f"the text on one line, at most {SUMMARY_CHARS} chars")
    location: str | None = Field(None, description="path:start-end for workspace hits")
    superseded_by: str | None = None


class SearchResult(BaseModel):
    results: list[SearchLine]
    hidden: int = Field(description="matching records kept out: superseded or expired")
    history: bool = Field(description="true when superseded records were included")


class Claim(BaseModel):
    subject: str | None = None
    predicate: str | None = None
    value: str | None = None
    evidence: str | None = None
    status: str | None = None
    superseded_by: str | None = None
    replaced_by_value: str | None = None
    scope: str | None = None


class Relation(BaseModel):
    kind: str = Field(description="confirms | supersedes | conflicts_with")
    other_id: str | None = None
    role: str | None = Field(None, description="source: this record is the relation's subject")
    confidence: float | None = None
    method: str | None = None
    evidence: str | None = None


class Provenance(BaseModel):
    source: str | None = None
    provider: str | None = None
    session_id: str | None = None
    user_id: str | None = None
    branch: str | None = None
    revision: str | None = None
    cwd: str | None = None
    paths: list[str] = []
    created_at: float | None = None
    updated_at: float | None = None
    valid_at: float | None = None
    expires_at: float | None = None


class MemoryRecord(BaseModel):
    id: str
    content: str
    status: str
    confidence: float | None = None
    superseded_by: str | None = None
    supersedes: str | None = None
    evidence: str | None = None
    claims: list[Claim] = []
    relations: list[Relation] = []
    provenance: Provenance
    changed_files: list[str] = Field(
        [], description="files this record mentions that changed since it was captured")
    metadata: dict[str, Any] = {}


class MemoryLine(BaseModel):
    id: str
    status: str
    summary: str
    source: str | None = None
    created_at: float | None = None


class ListResult(BaseModel):
    results: list[MemoryLine]
    count: int


class AddResult(BaseModel):
    id: str
    event: str = Field(description="ADD (stored), NONE (already stored), SUPERSEDE (already "
                                   "stored; its supersedes link was added), FORGOTTEN (was "
                                   "forgotten earlier and stays forgotten)")
    memory: str
    supersedes: str | None = None


class ForgetResult(BaseModel):
    id: str
    event: str


class SupersedeResult(BaseModel):
    old_id: str
    new_id: str


class HistoryEvent(BaseModel):
    id: str
    memory_id: str
    event: str = Field(description="ADD | UPDATE | SUPERSEDE | FORGET | EXPIRE | ...")
    old_memory: str | None = None
    new_memory: str | None = None
    actor: str | None = None
    created_at: float | None = None
    detail: dict[str, Any] = {}


class HistoryResult(BaseModel):
    id: str
    events: list[HistoryEvent]


class StatusResult(BaseModel):
    root: str
    pid: int | None = None
    uptime_s: float | None = None
    version: str | None = None
    memory: dict[str, int] = {}
    writer_queue: int | None = None
    spool_depth: int | None = None
    workspace: dict[str, Any] | None = None


# -- plumbing --------------------------------------------------------------------------------
_state: dict[str, Any] = {"root": None, "memory": None}
_state_lock = threading.Lock()


def configure(root: Path) -> None:
    """Point the tools at ``root`` (drops any previous connection)."""
    with _state_lock:
        old = _state["memory"]
        _state["root"] = root
        _state["memory"] = None
    if old is not None:
        old.close()


def _memory() -> Memory:
    """The shared client, created on the first tool call (it connects lazily too)."""
    with _state_lock:
        mem = _state["memory"]
        if mem is None:
            root = _state["root"] or resolve_root(None)
            mem = Memory(root, actor=ACTOR, source=ACTOR)
            _state["root"], _state["memory"] = root, mem
        return mem


@contextmanager
def _tool_errors() -> Iterator[None]:
    """Turn every expected failure into a ToolError with a message a model can act on."""
    try:
        yield
    except ToolError:
        raise
    except protocol.NotFound as err:
        raise ToolError(f"not_found: {err.message}") from None
    except protocol.RemoteError as err:
        raise ToolError(f"{err.code}: {err.message}") from None
    except protocol.DaemonUnavailable as err:
        raise ToolError(f"daemon_unavailable: {err}") from None
    except protocol.DaemonTimeout as err:
        raise ToolError(f"daemon_timeout: {err}") from None
    except (ValueError, TypeError) as err:
        raise ToolError(f"bad_request: {err}") from None
    except protocol.LintaidError as err:
        raise ToolError(f"error: {err}") from None


def one_line(text: str | None, limit: int = SUMMARY_CHARS) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _location(hit: dict[str, Any]) -> str | None:
    path = hit.get("path")
    if not path:
        return None
    start, end = hit.get("start_line"), hit.get("end_line")
    if start is None:
        return str(path)
    return f"{path}:{start}-{end if end is not None else start}"


def _search_line(hit: dict[str, Any]) -> SearchLine:
    return SearchLine(
        id=str(hit.get("id")),
        status=str(hit.get("status") or "current"),
        store=str(hit.get("store") or "memory"),
        score=round(float(hit.get("score") or 0.0), 4),
        summary=one_line(hit.get("content") or hit.get("memory")),
        location=_location(hit),
        superseded_by=hit.get("superseded_by"),
    )


def _known(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k in model.model_fields}


def _record(hit: dict[str, Any]) -> MemoryRecord:
    return MemoryRecord(
        id=hit["id"],
        content=hit.get("content") or "",
        status=hit.get("status") or "current",
        confidence=hit.get("confidence"),
        superseded_by=hit.get("superseded_by"),
        supersedes=hit.get("supersedes"),
        evidence=hit.get("evidence"),
        claims=[Claim(**_known(Claim, c)) for c in hit.get("claims") or []],
        relations=[Relation(**_known(Relation, r)) for r in hit.get("relations") or []],
        provenance=Provenance(**{k: v for k, v in _known(Provenance, hit).items()
                                 if v is not None}),
        changed_files=list(hit.get("changed_files") or []),
        metadata=dict(hit.get("metadata") or {}),
    )


def _parse_time(value: str | float | None, name: str) -> float | None:
    try:
        return to_epoch(value, name=name)
    except (TypeError, ValueError) as err:
        raise ToolError(f"bad_request: {err}") from None


# -- tools -----------------------------------------------------------------------------------
def _tool(fn: Any) -> Any:
    """Register ``fn`` as a tool, its docstring dedented into the description."""
    server.add_tool(fn, description=inspect.cleandoc(fn.__doc__ or ""))
    return fn


@_tool
def search(
    query: Annotated[str, Field(description="what to look for, in plain words")],
    top_k: Annotated[int, Field(ge=1, le=100, description="how many hits")] = 5,
    history: Annotated[bool, Field(description="also return superseded records")] = False,
    as_of: Annotated[str | float | None, Field(
        description="the state as it was then: ISO date/time or epoch seconds")] = None,
    store: Annotated[Literal["memory", "workspace", "all"], Field(
        description="memory records, project files, or both")] = "all",
) -> SearchResult:
    """Search project memory (and project files). Superseded, expired and forgotten records
    are excluded before ranking; `hidden` says how many matching ones were kept out. Use
    get_memory for a hit's full text, claims and provenance."""
    when = _parse_time(as_of, "as_of")
    with _tool_errors():
        result = _memory().search(query, top_k=top_k, history=history, as_of=when, store=store)
    return SearchResult(
        results=[_search_line(h) for h in result["results"]],
        hidden=result["hidden"],
        history=result["history"],
    )


@_tool
def get_memory(id: Annotated[str, Field(description="a memory id from search")]) -> MemoryRecord:
    """One memory in full: text, status, confidence, claims, relations and provenance."""
    with _tool_errors():
        return _record(_memory().get(id))


@_tool
def list_memories(
    limit: Annotated[int, Field(ge=1, le=100, description="how many, newest first")] = 20,
) -> ListResult:
    """The newest visible memories (not superseded, expired or forgotten)."""
    with _tool_errors():
        rows = _memory().get_all(limit=limit)["results"]
    lines = [MemoryLine(id=r["id"], status=r.get("status") or "current",
                        summary=one_line(r.get("content")), source=r.get("source"),
                        created_at=r.get("created_at")) for r in rows]
    return ListResult(results=lines, count=len(lines))


@_tool
def add_memory(
    content: Annotated[str, Field(description="a durable fact or decision, self-contained")],
    supersedes: Annotated[str | None, Field(
        description="id of a memory this one replaces (it is retired)")] = None,
) -> AddResult:
    """Store a memory for this project. Pass `supersedes` when it replaces an older one."""
    with _tool_errors():
        row = _memory().add(content, supersedes=supersedes)["results"][0]
    return AddResult(id=row["id"], event=row["event"], memory=row["memory"],
                     supersedes=supersedes)


@_tool
def forget_memory(
    id: Annotated[str, Field(description="the memory to forget")],
    reason: Annotated[str | None, Field(description="why; kept in the audit log")] = None,
) -> ForgetResult:
    """Forget a memory: it disappears from search and get, and the same text captured again
    stays forgotten. Prefer supersede_memory when the fact merely changed."""
    with _tool_errors():
        result = _memory().delete(id, reason=reason)
    return ForgetResult(id=result.get("id", id), event=result.get("event", "DELETE"))


@_tool
def supersede_memory(
    old_id: Annotated[str, Field(description="the memory that is no longer true")],
    new_content: Annotated[str | None, Field(description="the text that replaces it")] = None,
    new_id: Annotated[str | None, Field(
        description="or: an existing memory that replaces it")] = None,
) -> SupersedeResult:
    """Retire a memory in favour of new text or another existing memory (give exactly one).
    The old one stays in history (search with history=true) but no longer shows as current."""
    if (new_content is None) == (new_id is None):
        raise ToolError("bad_request: give exactly one of new_content or new_id")
    with _tool_errors():
        result = _memory().supersede(old_id, new_content, new_id=new_id)
    return SupersedeResult(old_id=result["old_id"], new_id=result["new_id"])


@_tool
def memory_history(id: Annotated[str, Field(description="a memory id")]) -> HistoryResult:
    """The audit trail of one memory, oldest first: added, updated, superseded, forgotten."""
    with _tool_errors():
        events = _memory().history(id)
    return HistoryResult(id=id, events=[HistoryEvent(**_known(HistoryEvent, e)) for e in events])


@_tool
def memory_status() -> StatusResult:
    """The daemon's state for this project: counts, queue depths, uptime."""
    with _tool_errors():
        mem = _memory()
        status = mem.status()
    versions = status.get("versions") or {}
    return StatusResult(
        root=str(status.get("root") or mem.root),
        pid=status.get("pid"),
        uptime_s=status.get("uptime_s"),
        version=versions.get("lintaid"),
        memory={k: int(v) for k, v in (status.get("memory") or {}).items()
                if isinstance(v, (int, float))},
        writer_queue=status.get("writer_queue"),
        spool_depth=status.get("spool_depth"),
        workspace=status.get("workspace"),
    )


# -- process -----------------------------------------------------------------------------------
def resolve_root(project: str | None) -> Path:
    """``--project``, else LINTAID_PROJECT, else CLAUDE_PROJECT_DIR, else the working dir."""
    if project:
        return Path(project).expanduser().resolve()
    return paths.find_project_root(os.environ.get("CLAUDE_PROJECT_DIR") or None)


def watch_parent(interval: float = 1.0, parent: int | None = None) -> threading.Thread:
    """Exit at once when the parent process dies (we get re-parented): no orphaned shims."""
    parent = _PARENT_PID if parent is None else parent
    if os.getppid() != parent:
        os._exit(0)

    def run() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(0)

    thread = threading.Thread(target=run, name="lintaid-mcp-parent-watch", daemon=True)
    thread.start()
    return thread


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="lintaid-mcp", description="MCP stdio server for a project's lintaid memory.")
    parser.add_argument("--project", help="project root (default: LINTAID_PROJECT, "
                                          "CLAUDE_PROJECT_DIR, or found from the working dir)")
    args = parser.parse_args(argv)
    configure(resolve_root(args.project))
    watch_parent()
    code = 0
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        pass
    except Exception:  # never a traceback on stdout; stderr gets it
        log.exception("the MCP server stopped")
        code = 1
    finally:
        # Worker threads may still wait on the daemon; do not let them hold the exit.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


if __name__ == "__main__":
    main()
