"""The one search executor: hook injection, CLI, MCP and the Python client all call ``search``.

It builds one Tantivy query per store that already holds the exclusions (superseded, expired,
forgotten, other users' rows), so an excluded record never takes a top-k slot. History mode
(``history=True``, an ``as_of`` time, or a history phrase in the query) lifts the supersession
filter and labels such hits ``historical``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .capture.record import normalize_user
from .policy.history import is_history_query, strip_history_phrases
from .store.index import boolean, millis
from .store.memory import MemoryStore

MAX_TOP_K = 100
CLAIM_BOOST = {"claims": 2.0}
STORES = ("memory", "workspace", "all")


class WorkspaceSearch(Protocol):
    def search_hits(self, query: str, limit: int, *, history: bool) -> tuple[list[dict], int]: ...

    def changed_since(self, file_hashes: dict[str, str]) -> list[str]: ...


@dataclass
class SearchRequest:
    query: str
    user_id: str | None = None
    top_k: int = 5
    history: bool = False
    as_of: float | None = None
    store: str = "all"
    kinds: list[str] | None = None  # restrict memory hits to these record kinds
    exclude_kinds: list[str] = field(default_factory=list)
    now: float | None = None


@dataclass
class Searcher:
    """Everything a search reads from: the memory store, the workspace, the writer's barrier."""

    memory: MemoryStore
    workspace: WorkspaceSearch | None = None
    wait_visible: Callable[[], bool] | None = None


def validate(req: SearchRequest) -> None:
    if not isinstance(req.query, str):
        raise ValueError("query must be a string")
    if not 1 <= int(req.top_k) <= MAX_TOP_K:
        raise ValueError(f"top_k must be between 1 and {MAX_TOP_K}")
    if req.store not in STORES:
        raise ValueError(f"store must be one of {', '.join(STORES)}")


def search(ctx: Searcher, req: SearchRequest) -> dict[str, Any]:
    """Return ``{"results": [hit, ...], "hidden": N, "history": bool}``, best first."""
    validate(req)
    if ctx.wait_visible is not None:
        ctx.wait_visible()
    history = bool(req.history or req.as_of is not None or is_history_query(req.query))
    text = strip_history_phrases(req.query) if history else req.query
    text = text if text.strip() else req.query
    hits: list[dict[str, Any]] = []
    hidden = 0
    if req.store in ("memory", "all"):
        mem_hits, mem_hidden = _search_memory(ctx, req, text, history)
        hits.extend(mem_hits)
        hidden += mem_hidden
    if req.store in ("workspace", "all") and ctx.workspace is not None:
        ws_hits, ws_hidden = ctx.workspace.search_hits(text, req.top_k, history=history)
        hits.extend(ws_hits)
        hidden += ws_hidden
    hits.sort(key=lambda h: h["score"], reverse=True)
    return {"results": hits[: req.top_k], "hidden": hidden, "history": history}


def _search_memory(ctx: Searcher, req: SearchRequest, text: str,
                   history: bool) -> tuple[list[dict[str, Any]], int]:
    index = ctx.memory.index
    # Outside history mode only what a record still says can match (retired claims are cut
    # out of the ``content`` field), so a stale statement never wins a current query.
    if history:
        text_query = index.text_query(text, ["content_all"])
    else:
        text_query = index.text_query(text, ["content", "claims"], CLAIM_BOOST)
    all_text = index.text_query(text, ["content_all"])
    if text_query is None or all_text is None:
        return [], 0
    now = millis(req.now if req.now is not None else time.time())
    owner = [("must", index.term("user_id", normalize_user(req.user_id)))]
    base = [("must", text_query), *owner]
    if req.kinds:
        base.append(("must", index.term_set("kind", list(req.kinds))))
    for kind in req.exclude_kinds:
        base.append(("not", index.term("kind", kind)))
    policy: list[tuple[str, Any]] = []
    horizon = now if req.as_of is None else millis(req.as_of)
    policy.append(("must", index.int_range("expires_at", horizon + 1, None)))
    if req.as_of is not None:
        policy.append(("must", index.int_range("created_at", None, millis(req.as_of))))
    if not history:
        policy.append(("not", index.term("status", "superseded")))
    searcher = index.searcher()
    result = searcher.search(boolean(base + policy), limit=req.top_k, count=True)
    everything = [("must", all_text), *owner, *base[2:]]
    hidden = searcher.search(boolean(everything), limit=1, count=True).count - result.count
    scored = [(searcher.doc(addr).get_first("id"), score) for score, addr in result.hits]
    ids = [rid for rid, _ in scored]
    hits = hydrate(ctx, ids, history=history, as_of=req.as_of)
    out = []
    for rid, score in scored:
        hit = hits.get(rid)
        if hit is not None:
            hit["score"] = float(score)
            out.append(hit)
    return out, max(hidden, 0)


def hydrate(ctx: Searcher, ids: list[str], *, history: bool = False,
            as_of: float | None = None) -> dict[str, dict[str, Any]]:
    """Turn record ids into full hit dicts: status, claims, relations and provenance."""
    if not ids:
        return {}
    store = ctx.memory
    rows = store.get_rows(ids)
    claims = store.claims_for(ids)
    relations = store.relations_for(ids)
    now = time.time()
    out: dict[str, dict[str, Any]] = {}
    for rid in ids:
        row = rows.get(rid)
        if row is None:
            continue
        status = row["state"]
        superseded_by = row["superseded_by"]
        if row["forgotten_at"] is not None:
            status = "forgotten"
        elif row["expires_at"] is not None and row["expires_at"] <= (as_of or now):
            status = "expired"
        elif status == "superseded":
            if as_of is not None and _created_after(store, superseded_by, as_of):
                status = "current"
            elif history:
                status = "historical"
        metadata = json.loads(row["metadata"])
        file_hashes = json.loads(row["file_hashes"])
        changed = []
        if file_hashes and ctx.workspace is not None:
            changed = ctx.workspace.changed_since(file_hashes)
        out[rid] = {
            "id": rid,
            "store": "memory",
            "content": row["content"],
            "memory": row["content"],
            "status": status,
            "confidence": row["confidence"] if row["confidence"] is not None else 1.0,
            "superseded_by": superseded_by,
            "evidence": row["state_evidence"],
            "relations": relations.get(rid, []),
            "claims": claims.get(rid, []),
            "kind": row["kind"],
            "source": row["source"],
            "user_id": row["user_id"],
            "provider": row["provider"],
            "session_id": row["session_id"],
            "event": row["event"],
            "doc_type": row["doc_type"],
            "cwd": row["cwd"],
            "branch": row["branch"],
            "revision": row["revision"],
            "paths": json.loads(row["paths"]),
            "tools": json.loads(row["tools"]),
            "metadata": metadata,
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
            "valid_at": row["valid_at"],
            "expires_at": row["expires_at"],
            "supersedes": row["supersedes"],
            "changed_files": changed,
            "score": 0.0,
        }
    return out


def _created_after(store: MemoryStore, record_id: str | None, when: float) -> bool:
    if not record_id:
        return False
    row = store.get_rows([record_id]).get(record_id)
    return row is not None and row["created_at"] > when
