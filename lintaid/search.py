"""The one read path: search, get, list and history, for every caller.

Hook injection, the CLI, the MCP shim and the Python client all read through ``Reader``. It
runs on the daemon's reader pool (never on the request loop): each pool thread has its own
SQLite read connection (the store's per-thread handle) and takes a fresh Tantivy searcher per
query.

A search builds one Tantivy query per store that already holds the exclusions (superseded,
expired, forgotten, other users' rows), so an excluded record never takes a top-k slot.
History mode (``history=True``, an ``as_of`` time, or a question about a change in the
query) lifts the supersession filter; such hits keep their status and are marked
``historical``.

Read-your-writes: a write's reply carries a token; a read that passes it waits here, off the
loop, until that write is searchable. A read without a token waits for what was committed
before it arrived, bounded by ``wait_s``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from lintaid_client import models, protocol
from lintaid_client.models import Claim, Hit, Relation, SearchResult

from .capture.record import normalize_user
from .policy.history import is_history_query, strip_history_phrases
from .policy.staleness import StalenessConfig
from .store.index import boolean, millis
from .store.memory import MemoryStore
from .store_lint import StoreJudge

CLAIM_BOOST = {"claims": 2.0}
DEFAULT_WAIT_S = 5.0
MAX_PAGES = 20
"""Pages of ``top_k`` a search hiding expired records reads at most to fill its ``top_k``."""


class WorkspaceReads(Protocol):
    def search_hits(self, query: str, limit: int, *,
                    history: bool) -> tuple[list[dict[str, Any]], int]: ...

    def changed_since(self, file_hashes: dict[str, str]) -> list[str]: ...


class WaitVisible(Protocol):
    def __call__(self, token: str | None = None, *, timeout: float = 5.0,
                 recall_only: bool = False) -> bool: ...


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
class Reader:
    """Everything a read needs: the memory store, the workspace, the writer's visibility.

    ``staleness``: the decay settings every hit is judged by. ``hide_expired``: current
    (non-history) searches leave out records whose staleness is expired, as they leave out
    superseded ones (the reader injection uses; ``StalenessConfig.inject_expired`` turns it
    off).
    """

    memory: MemoryStore
    workspace: WorkspaceReads | None = None
    wait_visible: WaitVisible | None = None
    staleness: StalenessConfig = field(default_factory=StalenessConfig)
    hide_expired: bool = False

    @property
    def judge(self) -> StoreJudge:
        return StoreJudge(self.memory, self.staleness)

    # -- consistency -----------------------------------------------------------------------
    def settle(self, token: str | None, wait_s: float = DEFAULT_WAIT_S, *,
               recall_only: bool = False) -> bool:
        """Wait until ``token``'s write (or, without one, every committed write; with
        ``recall_only`` every one injection may recall) is searchable; False when that took
        longer than ``wait_s`` (the read goes ahead with what is searchable)."""
        if self.wait_visible is None:
            return True
        return self.wait_visible(token, timeout=wait_s, recall_only=recall_only)

    # -- reads -----------------------------------------------------------------------------
    def search(self, req: SearchRequest) -> SearchResult:
        """Best first; ``hidden`` counts matches the policy kept out."""
        history = bool(req.history or req.as_of is not None or is_history_query(req.query))
        text = strip_history_phrases(req.query) if history else req.query
        text = text if text.strip() else req.query
        hits: list[Hit] = []
        hidden = 0
        if req.store in ("memory", "all"):
            mem_hits, mem_hidden = self._search_memory(req, text, history)
            hits.extend(mem_hits)
            hidden += mem_hidden
        if req.store in ("workspace", "all") and self.workspace is not None:
            rows, ws_hidden = self.workspace.search_hits(text, req.top_k, history=history)
            hits.extend(_workspace_hit(row) for row in rows)
            hidden += ws_hidden
        hits.sort(key=lambda h: h.score, reverse=True)
        return SearchResult(results=hits[: req.top_k], hidden=hidden, history=history)

    def get(self, record_id: str, user_id: str | None) -> Hit:
        if self.memory.visible_row(record_id, normalize_user(user_id)) is None:
            raise protocol.NotFound(f"no memory {record_id!r}")
        return self.hydrate([record_id])[record_id]

    def newest(self, user_id: str | None, limit: int, offset: int = 0,
             include_hidden: bool = False) -> list[Hit]:
        ids = self.memory.list_ids(normalize_user(user_id), limit, offset, include_hidden)
        hits = self.hydrate(ids)
        return [hits[i] for i in ids if i in hits]

    def lint(self, user_id: str | None, at: float | None = None, only_flagged: bool = False,
             limit: int | None = None) -> dict[str, Any]:
        """The staleness report over every record a current read may show."""
        return self.judge.lint(user_id, at, only_flagged, limit)

    def needs_verifying(self, user_id: str | None = None,
                        limit: int = 5) -> list[dict[str, Any]]:
        """For the SessionStart brief: the memories most likely out of date, worth asking
        about (``policy.staleness.verify_brief`` words them)."""
        return self.judge.needs_verifying(user_id, limit=limit)

    def history(self, record_id: str, user_id: str | None) -> list[dict[str, Any]]:
        """The audit trail of one record in mem0's history shape, oldest first."""
        row = self.memory.get_rows([record_id]).get(record_id)
        if row is None or row["user_id"] != normalize_user(user_id):
            raise protocol.NotFound(f"no memory {record_id!r}")
        return [{
            "id": str(a["seq"]),
            "memory_id": record_id,
            "event": a["op"].upper(),
            "old_memory": a["before_content"],
            "new_memory": a["after_content"],
            "actor": a["actor"],
            "created_at": a["at"],
            "detail": _json(a["detail"], {}),
        } for a in self.memory.audit_rows(record_id)]

    # -- memory ----------------------------------------------------------------------------
    def _search_memory(self, req: SearchRequest, text: str,
                       history: bool) -> tuple[list[Hit], int]:
        index = self.memory.index
        # Outside history mode only what a record still says can match (retired claims are
        # cut out of the ``content`` field), so a stale statement never wins a current query.
        if history:
            text_query = index.text_query(text, ["content_all"])
        else:
            text_query = index.text_query(text, ["content", "claims"], CLAIM_BOOST)
        all_text = index.text_query(text, ["content_all"])
        if text_query is None or all_text is None:
            return [], 0
        now = millis(req.now if req.now is not None else time.time())
        owner = [("must", index.term("user_id", normalize_user(req.user_id)))]
        filters: list[tuple[str, Any]] = []
        if req.kinds:
            filters.append(("must", index.term_set("kind", list(req.kinds))))
        for kind in req.exclude_kinds:
            filters.append(("not", index.term("kind", kind)))
        policy: list[tuple[str, Any]] = []
        horizon = now if req.as_of is None else millis(req.as_of)
        policy.append(("must", index.int_range("expires_at", horizon + 1, None)))
        if req.as_of is not None:
            policy.append(("must", index.int_range("created_at", None, millis(req.as_of))))
        if not history:
            policy.append(("not", index.term("status", "superseded")))
        searcher = index.searcher()
        query = boolean([("must", text_query), *owner, *filters, *policy])
        everything = boolean([("must", all_text), *owner, *filters])
        hide = self.hide_expired and not history
        out: list[Hit] = []
        matched = dropped = offset = 0
        for _page in range(MAX_PAGES if hide else 1):
            result = searcher.search(query, limit=req.top_k, count=True, offset=offset)
            matched = _count(result)
            scored = [(str(searcher.doc(addr).get_first("id")), score)
                      for score, addr in result.hits]
            hits = self.hydrate([rid for rid, _ in scored], history=history, as_of=req.as_of,
                                now=req.now)
            for rid, score in scored:
                hit = hits.get(rid)
                if hit is None:
                    continue
                if hide and hit.staleness and hit.staleness.level == models.EXPIRED_LEVEL:
                    dropped += 1  # expired by staleness: not shown until reconfirmed
                    continue
                if len(out) < req.top_k:
                    hit.score = float(score)
                    out.append(hit)
            offset += req.top_k
            if len(out) >= req.top_k or offset >= matched:
                break
        hidden = _count(searcher.search(everything, limit=1, count=True)) - matched + dropped
        return out, max(hidden, 0)

    def hydrate(self, ids: list[str], *, history: bool = False, as_of: float | None = None,
                now: float | None = None) -> dict[str, Hit]:
        """Record ids as full hits: status, claims, relations, staleness and provenance."""
        if not ids:
            return {}
        store = self.memory
        rows = store.get_rows(ids)
        claims = store.claims_for(ids)
        relations = store.relations_for(ids)
        now = time.time() if now is None else now
        staleness = self.judge.judge(ids, as_of or now)
        out: dict[str, Hit] = {}
        for rid in ids:
            row = rows.get(rid)
            if row is None:
                continue
            record_claims = [Claim.from_dict(c) for c in claims.get(rid, [])]
            status = _record_status(row, record_claims, as_of or now)
            superseded_by = row["superseded_by"]
            if (status == models.SUPERSEDED and as_of is not None
                    and self._created_after(superseded_by, as_of)):
                status, superseded_by = models.CURRENT, None
            file_hashes = _json(row["file_hashes"], {})
            changed: list[str] = []
            if file_hashes and self.workspace is not None:
                changed = self.workspace.changed_since(file_hashes)
            supersedes = row["supersedes"]
            out[rid] = Hit(
                id=rid,
                content=row["content"],
                status=status,
                store=models.MEMORY,
                kind=row["kind"],
                historical=history and status == models.SUPERSEDED,
                confidence=row["confidence"] if row["confidence"] is not None else 1.0,
                superseded_by=superseded_by,
                supersedes=[supersedes] if isinstance(supersedes, str) else [],
                evidence=row["state_evidence"],
                claims=record_claims,
                relations=[Relation.from_dict(r) for r in relations.get(rid, [])],
                source=row["source"],
                client=row["provider"],
                session_id=row["session_id"],
                event=row["event"],
                doc_type=row["doc_type"],
                user_id=row["user_id"],
                cwd=row["cwd"],
                branch=row["branch"],
                revision=row["revision"],
                paths=_json(row["paths"], []),
                tools=_json(row["tools"], []),
                metadata=_json(row["metadata"], {}),
                created_at=row["created_at"],
                updated_at=row["updated_at"],
                valid_at=row["valid_at"],
                expires_at=row["expires_at"],
                changed_files=changed,
                staleness=staleness.get(rid),
            )
        return out

    def _created_after(self, record_id: str | None, when: float) -> bool:
        if not record_id:
            return False
        row = self.memory.get_rows([record_id]).get(record_id)
        return row is not None and row["created_at"] > when


def _record_status(row: Any, claims: list[Claim], at: float) -> str:
    """One word from the status vocabulary for a stored record at time ``at``."""
    if row["forgotten_at"] is not None:
        return models.FORGOTTEN
    if row["expires_at"] is not None and row["expires_at"] <= at:
        return models.EXPIRED
    state = row["state"]
    if state == models.CONFLICTED and not any(c.status == models.CONFLICTED for c in claims):
        return models.PARTLY_SUPERSEDED  # only retired statements, no live disagreement
    return str(state)


def _count(result: Any) -> int:
    return int(result.count)  # tantivy's stub lacks ``count`` (set when count=True)


def _workspace_hit(row: dict[str, Any]) -> Hit:
    hit = Hit.from_dict(row)
    if hit.status == "historical":
        hit.status, hit.historical = models.SUPERSEDED, True
    return hit


def _json(text: str | None, default: Any) -> Any:
    try:
        return json.loads(text) if text else default
    except ValueError:
        return default
