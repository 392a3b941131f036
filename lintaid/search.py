"""The one read path: search, get, list and history, for every caller.

Hook injection, the CLI, the MCP shim and the Python client all read through ``Reader``. It
runs on the daemon's reader pool (never on the request loop): each pool thread has its own
SQLite read connection (the store's per-thread handle) and takes a fresh Tantivy searcher per
query.

A search builds one Tantivy query per store that already holds the exclusions (superseded,
expired, forgotten, other users' rows), so an excluded record never takes a top-k slot.
History mode (``history=True``, an ``as_of`` time, or a question about a change in the
project's state) keeps the current hits exactly as the plain query ranks them and interleaves
the superseded records by score; those keep their status and are marked ``historical``.

Read-your-writes: a write's reply carries a token; a read that passes it waits here, off the
loop, until that write is searchable. A read without a token waits for what was committed
before it arrived, bounded by ``wait_s``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from lintaid_client import models, protocol
from lintaid_client.models import Claim, Hit, Relation, SearchResult

from . import context, review, transfer, valid_time
from .capture.record import TURN, normalize_user
from .doclint.check import lint as doc_lint
from .doclint.config import ConfigError
from .policy.history import is_history_query, strip_history_phrases
from .policy.kinds import kind_terms
from .policy.staleness import StalenessConfig
from .retrieval import retired as retired_elsewhere
from .retrieval.admit import chit_chat, off_project
from .retrieval.dates import date_phrases
from .retrieval.passages import passages as find_passages
from .retrieval.passages import quotes_retired, retired_matches, retired_spans
from .retrieval.query import plan as query_plan
from .retrieval.rank import POOL, boost_dates, fuse_neighbours
from .store.index import TantivyIndex, Terms, boolean, const_score, millis
from .store.memory import AUTHORED, MemoryStore
from .store.memory import TURN as TURN_TRAIT
from .store.timeline import Span
from .store_lint import StoreJudge

CLAIM_BOOST = {"claims": 2.0}
NAME_BONUS = 1.0
"""Added to the score of a record by an author the query names (LoCoMo: a constant works
better than matching the name as a word, which lifts every turn by that author)."""
NAME_MIN_EDIT_CHARS = 5
"""Names of this many letters or more match with one typo (a transposition counts one)."""
DEFAULT_WAIT_S = 5.0
MAX_PAGES = 20
"""Pages of ``top_k`` a search hiding expired records reads at most to fill its ``top_k``."""


class WorkspaceReads(Protocol):
    def search_hits(self, query: str, limit: int, *,
                    history: bool) -> tuple[list[dict[str, Any]], int]: ...

    def terms(self, words: list[str]) -> Terms | None: ...

    def changed_since(self, file_hashes: dict[str, str]) -> list[str]: ...

    def current_claims(self, limit: int) -> list[dict[str, Any]]: ...

    def retired_since(self, since: float, limit: int) -> list[dict[str, Any]]: ...

    def conflicts(self, limit: int) -> list[dict[str, Any]]: ...

    def claims_by_id(self, claim_ids: Collection[str]) -> list[dict[str, Any]]: ...

    # what the document lint reads (``lintaid.doclint.check.Documents``)
    root: Path

    def pages(self) -> list[dict[str, Any]]: ...

    def file_states(self, paths: Iterable[str]) -> dict[str, dict[str, Any]]: ...

    def exists(self, rel: str) -> bool: ...


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
    valid_at: float | None = None  # what was true at that time (valid time)
    store: str = "all"
    client: str | None = None  # only what this agent client captured (memory only)
    kind: str | None = None  # None: every kind but prompts; "all": every kind
    now: float | None = None
    passages: bool = False  # mark each hit's matching statements (``Hit.passages``)
    passages_from: float = 0.0  # ...of the hits at least this relevant (the others: none)


def kind_filter(kind: str | None) -> tuple[list[str], list[str]]:
    """``(kinds, excluded)`` for a request's ``kind``: prompts only when asked for."""
    if kind is None:
        return [], [models.PROMPT]
    if kind == models.ALL_KINDS:
        return [], []
    return [kind], []


@dataclass
class StateRequest:
    """What ``Reader.project_state`` gathers. ``since``: list what was retired after it (None:
    nothing). ``branch``: the outcomes' branch. ``session_id``: the session asking; its own
    turns are left out of ``outcomes``, and with ``this_session`` its decisions and turns
    come apart (after a compaction, what the session decided)."""

    user_id: str | None = None
    since: float | None = None
    branch: str | None = None
    session_id: str | None = None
    this_session: bool = False
    decisions: int = 200  # claims read, newest first; the digest keeps what its bytes hold
    changes: int = 20
    conflicts: int = 10
    notes: int = 5
    outcomes: int = 3


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
        """Best first; ``hidden`` counts matches the policy kept out.

        Memory and project files are two indexes whose raw BM25 scores mean different things
        (each grows with how many and how rare the query's words are there), so hits are
        merged by ``relevance``: each score as a share of the most the query can score in
        its own index (``store.index.Terms``)."""
        history = bool(req.history or req.as_of is not None or req.valid_at is not None
                       or is_history_query(req.query))
        text = (strip_history_phrases(req.query, date_phrases(req.query)) if history
                else req.query)
        text = text if text.strip() else req.query
        hits: list[Hit] = []
        hidden = 0
        if req.store in ("memory", "all"):
            mem_hits, mem_hidden = self._search_memory(req, text, history)
            hits.extend(mem_hits)
            hidden += mem_hidden
        # Project files were captured by no agent client, and a kind names memory records:
        # with either filter they are left out.
        files = req.kind in (None, models.ALL_KINDS) and req.client is None
        timed = req.as_of is not None or req.valid_at is not None
        if timed and req.store == "workspace":
            raise protocol.BadRequest("as_of and valid_at cover memory only (project files "
                                      "are searched as they are now): search the memory "
                                      "store", arg="store")
        files = files and not timed  # project files hold no past versions
        if req.store in ("workspace", "all") and files and self.workspace is not None:
            # The same content words as the memory query (``retrieval.query``).
            words = query_plan(text, 0.0).words
            rows, ws_hidden = self.workspace.search_hits(" ".join(words), req.top_k,
                                                         history=history)
            found = [_workspace_hit(row) for row in rows]
            if req.passages and found:
                terms = self.workspace.terms(words)
                if terms is not None:
                    for hit in found:
                        if (hit.relevance or 0.0) >= req.passages_from:
                            _match(hit, terms)
            hits = merge(hits, found)
            hidden += ws_hidden
        return SearchResult(results=hits[: req.top_k], hidden=hidden, history=history)

    def get(self, record_id: str, user_id: str | None) -> Hit:
        if self.memory.visible_row(record_id, normalize_user(user_id)) is None:
            raise protocol.NotFound(f"no memory {record_id!r}")
        return self.hydrate([record_id])[record_id]

    def newest(self, user_id: str | None, limit: int, offset: int = 0,
               include_hidden: bool = False, *, client: str | None = None,
               kind: str | None = None, status: str | None = None,
               branch: str | None = None, session_id: str | None = None,
               since: float | None = None, until: float | None = None) -> list[Hit]:
        """Newest first; only records with ``status`` (a hidden status shows hidden records),
        on ``branch``, of ``session_id``, created in [``since``, ``until``) when given."""
        kinds, excluded = kind_filter(kind)
        ids = self.memory.list_ids(normalize_user(user_id), limit, offset, include_hidden,
                                   client=client, kinds=kinds, excluded=excluded,
                                   status=status, branch=branch, session_id=session_id,
                                   since=since, until=until)
        hits = self.hydrate(ids)
        return [hits[i] for i in ids if i in hits]

    def conflicts(self, user_id: str | None, limit: int) -> list[models.Conflict]:
        """Pairs of statements that disagree, both still marked conflicted: memory records
        and decision documents, newest first."""
        rows = self.memory.conflicts(user_id, limit)
        if self.workspace is not None:
            rows += self.workspace.conflicts(limit)
        found = [models.Conflict(_statement(r, "a", _store(r)), _statement(r, "b", _store(r)))
                 for r in rows]
        if self.workspace is not None:  # a memory against a document: memory's chains
            found += [models.Conflict(i.newer, i.older)
                      for i in review.document_conflicts(self.memory.reviews, user_id,
                                                         self.workspace)]
        found.sort(key=lambda c: -max(c.a.created_at or 0.0, c.b.created_at or 0.0))
        return found[:limit]

    def chains(self, record_id: str, user_id: str | None,
               window: int = 25) -> list[models.Chain]:
        """The chain each claim of a visible record sits on, oldest step first, with the
        relations between its steps; a long chain keeps ``window`` steps on either side of
        the record's claim."""
        if self.memory.visible_row(record_id, normalize_user(user_id)) is None:
            raise protocol.NotFound(f"no memory {record_id!r}")
        out = []
        for claim in self.memory.claims_for([record_id])[record_id]:
            key, rows = self.memory.chain(claim["claim_id"], user_id)
            if key is None:
                continue
            at = next((i for i, r in enumerate(rows) if r["claim_id"] == claim["claim_id"]), 0)
            kept = rows[max(0, at - window): at + window + 1]
            steps = [models.ChainStep.from_dict(r) for r in kept]
            links = self.memory.chain_links([s.claim_id for s in steps])
            out.append(models.Chain(
                claim_id=key["claim_id"], subject=key["subject"], predicate=key["predicate"],
                scope=key["scope"], steps=steps,
                links=[models.ChainLink.from_dict(r) for r in links],
                omitted=len(rows) - len(kept)))
        return out

    def lint(self, user_id: str | None, at: float | None = None, only_flagged: bool = False,
             limit: int | None = None) -> dict[str, Any]:
        """The staleness report over every record a current read may show."""
        return self.judge.lint(user_id, at, only_flagged, limit)

    def lint_docs(self, user_id: str | None, limit: int | None = None) -> dict[str, Any]:
        """``lintaid lint --docs``: the project's Markdown and reStructuredText documents as
        the workspace index holds them, linted with what the policy knows of their
        statements (``lintaid.doclint``); settings from the project's ``pyproject.toml``."""
        if self.workspace is None:
            raise protocol.Unavailable("the workspace is not indexed (the daemon runs without "
                                       "its watcher), so there are no documents to lint")
        try:
            return doc_lint(self.workspace, self.memory, user_id, limit)
        except ConfigError as err:
            raise protocol.BadRequest(str(err)) from None

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
        return [audit_event(a) for a in self.memory.audit_rows(record_id)]

    def audit(self, user_id: str | None, *, record_id: str | None = None,
              since: float | None = None, actor: str | None = None, after: int = 0,
              limit: int = 100, newest_first: bool = False) -> dict[str, Any]:
        """Every mutation of the user's memories in the order made, or newest first (of one
        record, since a time, by one actor when asked), as ``history`` has each; ``next``:
        the ``after`` that reads on in the same order, or None at the end."""
        rows = self.memory.audit_list(normalize_user(user_id), target=record_id, since=since,
                                      actor=actor, after_seq=after, limit=limit + 1,
                                      newest_first=newest_first)
        more = len(rows) > limit
        events = [audit_event(a) for a in rows[:limit]]
        return {"results": events, "next": int(events[-1]["id"]) if more else None}

    def export_page(self, user_id: str | None, after: str | None, limit: int,
                    include_history: bool, include_prompts: bool = False,
                    include_paths: bool = False) -> dict[str, Any]:
        """One page of the user's export (``transfer``'s rows): ``{"rows", "next"}``, where
        ``next`` is the ``after`` of the following page, None after the last. Prompts and
        local paths are left out unless asked for."""
        section, start = _cursor(after)
        user = normalize_user(user_id)
        section, rows, more = self.memory.export_page(user, section, start, limit,
                                                      include_history, include_prompts)
        out: list[dict[str, Any]] = []
        if section == "records":
            hits = self.hydrate([r["id"] for r in rows])
            for row in rows:
                hit = hits[row["id"]]
                item = transfer.record_row(row, hit.status, [c.to_dict() for c in hit.claims],
                                           [r.to_dict() for r in hit.relations])
                out.append(item if include_paths else transfer.without_local_paths(item))
        else:
            for row in rows:
                n = row.pop("n")
                item = {"type": _ROW_TYPE[section], "user_id": user, **row}
                if section == "audit":
                    item["seq"] = n
                    item["detail"] = _json(row.get("detail"), {})
                out.append(item)
        return {"rows": out, "next": f"{more[0]}:{more[1]}" if more else None}

    def ledger(self, *, since: float | None = None, client: str | None = None,
               session_id: str | None = None, limit: int = 14,
               recent: int = 0) -> dict[str, Any]:
        """What memory did (``lintaid.ledger``): totals, then per day, client and session
        (newest first, ``limit`` of each), and the ``recent`` newest injections."""
        table = self.memory.ledger
        found = {"since": since, "client": client, "session_id": session_id}
        out: dict[str, Any] = {"totals": table.totals(since, client, session_id)}
        for by in ("day", "client", "session"):
            out[f"by_{by}"] = table.grouped(by, since, client, session_id, limit)
        out["recent"] = table.recent(recent, since, client, session_id) if recent else []
        return {**found, **out}

    def review_queue(self, user_id: str | None, limit: int) -> list[models.ReviewItem]:
        """Inferred supersessions and conflicts waiting for a person, newest first."""
        return review.queue(self.memory.reviews, user_id, limit, self.workspace)

    # -- the project's state ---------------------------------------------------------------
    def project_state(self, req: StateRequest) -> models.ProjectState:
        """Current decisions (memory and decision documents, newest first), what was retired
        since ``req.since``, unresolved conflicts, the newest notes and turn outcomes."""
        mem, ws, user = self.memory, self.workspace, req.user_id
        out = models.ProjectState(since=req.since)
        rows = mem.current_claims(user, req.decisions)
        out.decisions = self._unretired([_statement(r, "c", models.MEMORY) for r in rows],
                                        _scopes(rows), user)
        retired = mem.retired_since(user, req.since, req.changes) if req.since is not None \
            else []
        if ws is not None:
            # A document's statement a person accepted a memory over is not offered as
            # current beside it (the file still says it; lintaid never edits files).
            overruled = mem.reviews.overruled_documents()
            out.decisions += [_statement(r, "c", models.WORKSPACE)
                              for r in ws.current_claims(req.decisions)
                              if (r["c_record_id"], r["c_value"]) not in overruled]
            out.decisions.sort(key=lambda s: -(s.created_at or 0.0))
            if req.since is not None:
                retired += ws.retired_since(req.since, req.changes)
        # What the project restated or changed before what it said once, newest first in each.
        out.decisions.sort(key=lambda s: not s.standing)
        out.conflicts = self.conflicts(user, req.conflicts)
        out.changes = [_change(r) for r in retired]
        if req.since is not None:
            out.changes += [_bare_change(r)
                            for r in mem.bare_records_retired_since(user, req.since,
                                                                    req.changes)]
        out.changes.sort(key=lambda c: -(c.new.created_at or 0.0))
        del out.changes[req.changes:]
        owner = normalize_user(user)
        out.notes = self._listed(mem.list_ids(owner, req.notes, kinds=[models.NOTE]))
        out.outcomes = _work_first(self._listed(mem.list_ids(
            owner, req.outcomes * 4, doc_types=[TURN], branch=req.branch,
            not_session=req.session_id)), req.outcomes)
        if req.this_session and req.session_id:
            rows = mem.current_claims(user, req.decisions, session_id=req.session_id)
            out.session_decisions = self._unretired(
                [_statement(r, "c", models.MEMORY) for r in rows], _scopes(rows), user)
            out.session_outcomes = self._listed(mem.list_ids(
                owner, req.outcomes * 2, doc_types=[TURN], session_id=req.session_id))
        return out

    def _unretired(self, decisions: list[models.Statement], scopes: Mapping[str, str],
                   user_id: str | None) -> list[models.Statement]:
        """The memory decisions whose quoted statement states no value its record's claims
        on the same evidence retired (``retrieval.passages.quotes_retired``), nor a value a
        later change retired elsewhere (``retrieval.retired``), nor one of a turn that was
        small talk or a question about the craft ("In Flutter, why const constructors?": its
        answer is no decision of the project's); ``scopes`` by claim id."""
        ids = list(dict.fromkeys(d.record_id for d in decisions))
        offside = {rid for rid, row in self.memory.get_rows(ids).items()
                   if off_project(row["content"])}
        decisions = [d for d in decisions if d.record_id not in offside]
        claims = self.memory.claims_for(ids)
        retired: dict[tuple[str, str], list[str]] = {}
        for rid, found in claims.items():
            for c in found:
                if c["status"] == models.SUPERSEDED:
                    retired.setdefault((rid, c["evidence"]), []).append(c["value"])
        table = self._retirements(user_id)
        return [d for d in decisions if not quotes_retired(
            d.evidence, d.value, retired.get((d.record_id, d.evidence), []))
            and retired_elsewhere.retiring(
                table, d.value, predicate=d.predicate, subject=d.subject,
                scope=scopes.get(d.claim_id, ""), evidence=d.evidence,
                record_id=d.record_id, created_at=d.created_at) is None]

    def previous_session_start(self, user_id: str | None, session_id: str | None,
                               provider: str | None = None) -> float | None:
        """When the newest session other than ``session_id`` began: this client's, else any
        client's. None when there was none."""
        previous = self.memory.previous_session(user_id, session_id, provider)
        if previous is None and provider is not None:
            previous = self.memory.previous_session(user_id, session_id)
        span = self.memory.session_span(user_id, previous) if previous else None
        return span[0] if span else None

    def session_span(self, user_id: str | None,
                     session_id: str | None) -> tuple[float, float] | None:
        """When this session's first and last records were captured; None if it has none."""
        return self.memory.session_span(user_id, session_id) if session_id else None

    def _listed(self, ids: list[str]) -> list[Hit]:
        hits = self.hydrate(ids)
        return [hits[i] for i in ids if i in hits]

    # -- memory ----------------------------------------------------------------------------
    def _search_memory(self, req: SearchRequest, text: str,
                       history: bool) -> tuple[list[Hit], int]:
        """Memory hits for ``text``: what the records still say, plus, in history mode, what
        they said before.

        The current hits come from the same query, fields and boosts with history on or off, so
        they keep their scores and their order. A history query adds the records with retired
        statements (superseded ones, and current ones with a superseded sentence) that match on
        their whole text, marks them ``historical`` and interleaves them by score. Outside
        history mode only what a record still says can match (retired claims are cut out of
        ``content``), so a stale statement never wins a current query.

        The query is the text's content words (``retrieval.query``); words naming an author
        of the user's records become a bonus for that author's records. Each user's records
        are an index of their own, so nothing another user stored moves the ranking. When the
        query names a time or the user's records hold conversation turns, the best ``POOL``
        matches are re-ranked (``retrieval.rank``): neighbour fusion, the date boost.
        """
        if req.valid_at is not None:
            return self._search_valid_at(req, text)
        user = normalize_user(req.user_id)
        index = self.memory.index.for_user(user)
        if index is None:
            return [], 0
        now_s = req.now if req.now is not None else time.time()
        plan = query_plan(text, now_s)
        searcher = index.searcher()
        names, words = _names(index, searcher, plan.words)
        text_query = index.words_query(words, ["content", "claims"], CLAIM_BOOST)
        all_text = index.words_query(words, ["content_all"])
        if text_query is None or all_text is None:
            return [], 0
        bonus = [("should", const_score(index.fuzzy("author", name, _edits(name)), NAME_BONUS))
                 for name in names]
        now = millis(now_s)
        scope = _scope(req, index)
        horizon = now if req.as_of is None else millis(req.as_of)
        live = [("must", index.int_range("expires_at", horizon + 1, None))]
        if req.as_of is not None:
            live.append(("must", index.int_range("created_at", None, millis(req.as_of))))
        retired = index.term("status", models.SUPERSEDED)
        everything = _count(searcher.search(boolean([("must", all_text), *scope]), limit=1,
                                            count=True))
        current_query = boolean([("must", text_query), *bonus, *scope, *live,
                                 ("not", retired)])
        turns = searcher.doc_freq("traits", TURN_TRAIT) > 0
        rerank = bool(plan.spans) or turns
        pool = max(POOL, req.top_k) if rerank else req.top_k
        # Injection's reader leaves records expired by staleness out until reconfirmed: page
        # past them so they never take a top-k slot.
        hide = self.hide_expired and not history
        hydrated: dict[str, Hit] = {}
        ranked: list[tuple[str, float, bool]] = []
        matched = dropped = offset = 0
        for _page in range(MAX_PAGES if hide else 1):
            current = searcher.search(current_query, limit=pool, count=True, offset=offset)
            matched = _count(current)
            found = _Found.of(searcher, current.hits)
            if rerank:
                if turns:
                    self._fuse(found, index, searcher, [*scope, *live, ("not", retired)])
                found.boost(plan.spans)
            order = found.ranked()
            for start in range(0, len(order), req.top_k):
                chunk = order[start:start + req.top_k]
                hydrated.update(self.hydrate(chunk, history=history, as_of=req.as_of,
                                             now=req.now))
                for rid in chunk:
                    hit = hydrated.get(rid)
                    if hide and hit is not None and hit.staleness \
                            and hit.staleness.level == models.EXPIRED_LEVEL:
                        dropped += 1
                        continue
                    if len(ranked) < req.top_k:
                        ranked.append((rid, found.scores[rid], False))
                if len(ranked) >= req.top_k:
                    break
            offset += pool
            if len(ranked) >= req.top_k or offset >= matched:
                break
        if not history:
            hidden = everything - matched + dropped
        else:
            seen = {rid for rid, _, _ in ranked}
            with_past = index.term_set("status", [models.SUPERSEDED, models.CONFLICTED])
            past = searcher.search(boolean([("must", all_text), *bonus, *scope, *live,
                                            ("must", with_past)]),
                                   limit=req.top_k + len(seen), count=True)
            earlier = _Found.of(searcher, past.hits)
            earlier.boost(plan.spans)
            ranked = sorted([*ranked, *((rid, earlier.scores[rid], True)
                                        for rid in earlier.ranked() if rid not in seen)],
                            key=lambda r: (-r[1], r[2]))[: req.top_k]
            plain = _count(searcher.search(
                boolean([("must", text_query), *scope, *live, ("not", with_past)]),
                limit=1, count=True))
            hidden = everything - _count(past) - plain
            missing = [rid for rid, _, _ in ranked if rid not in hydrated]
            hydrated.update(self.hydrate(missing, history=history, as_of=req.as_of,
                                         now=req.now))
        out = []
        # Current hits are weighed on what they still say in either mode (so a history query
        # ranks them as the plain one does), retired ones on their whole text.
        without = _unasked(req, index)
        terms = Terms(index, searcher, "content", words, without)
        relevance = terms.relevance("id", [rid for rid, _, old in ranked if not old])
        if history:
            relevance.update(Terms(index, searcher, "content_all", words, without).relevance(
                "id", [rid for rid, _, old in ranked if old]))
        for rid, score, historical in sorted(ranked, key=lambda r: _tie_order(
                r[0], r[1], r[2], hydrated)):
            hit = hydrated.get(rid)
            if hit is not None:
                hit.score = float(score)
                hit.relevance = relevance.get(rid, 0.0)
                # As of a past time, a record retired only later was current then.
                hit.historical = hit.historical or (historical and req.as_of is None)
                if req.passages and hit.relevance >= req.passages_from:
                    _match(hit, terms)
                out.append(hit)
        context.attach(self.memory, out, history=history, now=req.now)
        return out, max(hidden, 0)

    def _search_valid_at(self, req: SearchRequest, text: str) -> tuple[list[Hit], int]:
        """Memory hits that held at ``req.valid_at`` (``valid_time``), best first, on their
        whole text (a statement retired since may be the one that held then). With ``as_of``
        only records learned by then count, and retirements learned later do not. Records
        that did not hold are paged past (counted in ``hidden``), so they never take a slot.
        """
        assert req.valid_at is not None
        index = self.memory.index.for_user(normalize_user(req.user_id))
        if index is None:
            return [], 0
        now_s = req.now if req.now is not None else time.time()
        words = query_plan(text, now_s).words
        query = index.words_query(words, ["content_all", "claims"], CLAIM_BOOST)
        if query is None:
            return [], 0
        clauses = [("must", query), *_scope(req, index),
                   ("must", index.int_range("expires_at", millis(req.valid_at) + 1, None))]
        if req.as_of is not None:
            clauses.append(("must", index.int_range("created_at", None, millis(req.as_of))))
        searcher = index.searcher()
        terms = Terms(index, searcher, "content_all", words, _unasked(req, index))
        built = boolean(clauses)
        out: list[Hit] = []
        dropped = offset = 0
        for _page in range(MAX_PAGES):
            found = searcher.search(built, limit=req.top_k, count=True, offset=offset)
            page = [(str(searcher.doc(addr).get_first("id")), score)
                    for score, addr in found.hits]
            hits = self.hydrate([rid for rid, _ in page], now=req.now)
            spans = self.memory.record_spans([rid for rid, _ in page])
            for rid, score in page:
                hit, span = hits.get(rid), spans.get(rid)
                then = None if hit is None or span is None else valid_time.held(
                    hit, span, req.valid_at, req.as_of)
                if then is None:
                    dropped += 1
                    continue
                then.score = float(score)
                if len(out) < req.top_k:
                    out.append(then)
            offset += req.top_k
            if len(out) >= req.top_k or offset >= _count(found):
                break
        relevance = terms.relevance("id", [h.id for h in out])
        for hit in out:
            hit.relevance = relevance.get(hit.id, 0.0)
        if req.as_of is not None:
            self._text_then({h.id: h for h in out}, req.as_of)
        out.sort(key=lambda h: _tie_order(h.id, h.score, False, {h.id: h}))
        return out, dropped

    def _fuse(self, found: _Found, index: TantivyIndex, searcher: Any,
              admit: list[tuple[str, Any]]) -> None:
        """Neighbour fusion over the candidates that are conversation turns; a successor
        that was no candidate joins only if the query's exclusions let it (``admit``)."""
        turns = [rid for rid, doc in found.docs.items() if doc.turn]
        if not turns:
            return
        near = self.memory.session_neighbours(turns, before=False)
        next_of = {rid: pair[1] for rid, pair in near.items() if pair[1]}
        fused = fuse_neighbours(found.scores, next_of)
        new = [rid for rid in fused if rid not in found.scores]
        if new:
            allowed = searcher.search(boolean([("must", index.term_set("id", new)), *admit]),
                                      limit=len(new))
            found.add(searcher, allowed.hits)
        found.scores = {rid: score for rid, score in fused.items() if rid in found.docs}

    def hydrate(self, ids: list[str], *, history: bool = False, as_of: float | None = None,
                now: float | None = None) -> dict[str, Hit]:
        """Record ids as full hits: status, claims, relations, staleness and provenance."""
        if not ids:
            return {}
        store = self.memory
        rows = store.hit_rows(ids)  # records, claims, spans and relations: one query
        now = time.time() if now is None else now
        staleness = self.judge.judge(ids, as_of or now)
        by_user: dict[str, list[str]] = {}
        for rid, found in rows.items():
            by_user.setdefault(str(found["user_id"]), []).append(rid)
        waiting: dict[str, list[str]] = {}  # review items pending on each record
        for user, user_ids in by_user.items():
            waiting.update(review.pending_by_record(store.reviews, user, user_ids,
                                                    self.workspace))
        # What a later change retired in other records' words (a history read shows it).
        tables = {} if history or as_of is not None else {
            user: self._retirements(user) for user in by_user}
        out: dict[str, Hit] = {}
        for rid in ids:
            row = rows.get(rid)
            if row is None:
                continue
            record_claims = [_with_span(Claim.from_dict(c), row["spans"].get(c["claim_id"]))
                             for c in row["claims"]]
            record_claims = retired_elsewhere.apply(
                record_claims, record_id=rid, created_at=row["created_at"],
                table=tables.get(str(row["user_id"]), {}))
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
                relations=[Relation.from_dict(r) for r in row["relations"]],
                source=row["source"],
                client=row["provider"],
                session_id=row["session_id"],
                turn_id=row["turn_id"],
                event=row["event"],
                doc_type=row["doc_type"],
                user_id=row["user_id"],
                cwd=row["cwd"],
                branch=row["branch"],
                revision=row["revision"],
                member=row["member"],
                machine=row["machine"],
                paths=_json(row["paths"], []),
                tools=_json(row["tools"], []),
                metadata=_json(row["metadata"], {}),
                created_at=row["created_at"],
                updated_at=row["updated_at"],
                valid_at=row["valid_at"],
                expires_at=row["expires_at"],
                changed_files=changed,
                staleness=staleness.get(rid),
                reviews=waiting.get(rid, []),
            )
        if as_of is not None:
            self._text_then(out, as_of)
        return out

    def _text_then(self, hits: dict[str, Hit], at: float) -> None:
        """Hits as of ``at`` show their records' text as it was then (the audit log keeps
        every edit's text before): a record edited since gets its earlier text, when it was
        written, and no claims (those were derived from the text it has now)."""
        for rid, (text, written) in self.memory.texts_at(list(hits), at).items():
            hit = hits[rid]
            hit.content, hit.claims = text, []
            hit.updated_at = written if written is not None else hit.created_at

    def _retirements(self, user_id: str | None
                     ) -> dict[str, list[retired_elsewhere.Retirement]]:
        """The values retired elsewhere, kept until the store's next write (every prompt's
        hits and a SessionStart's decisions read them)."""
        cache, key = self.memory.cache, normalize_user(user_id)
        generation = cache.now()
        kept = cache.found("retirements", [key])
        if key in kept:
            return kept[key]  # type: ignore[no-any-return]
        table = retired_elsewhere.retirements(*self.memory.retired_values(user_id))
        cache.keep("retirements", generation, {key: table})
        return table

    def _created_after(self, record_id: str | None, when: float) -> bool:
        if not record_id:
            return False
        row = self.memory.get_rows([record_id]).get(record_id)
        return row is not None and row["created_at"] > when


def _unasked(req: SearchRequest, index: TantivyIndex) -> Any:
    """The stored prompts, when the request leaves them out (what relevance must not weigh)."""
    return index.term("kind", models.PROMPT) if models.PROMPT in kind_filter(req.kind)[1] \
        else None


def _scope(req: SearchRequest, index: TantivyIndex) -> list[tuple[str, Any]]:
    """The index clauses every memory search keeps: the user, the client, the kinds."""
    scope: list[tuple[str, Any]] = [("must", index.term("user_id", normalize_user(req.user_id)))]
    if req.client is not None:
        scope.append(("must", index.term("client", req.client)))
    kinds, excluded = kind_filter(req.kind)
    if kinds:
        scope.append(("must", index.term_set("kind", kinds)))
    for kind in excluded:
        scope.append(("not", index.term("kind", kind)))
    return scope


def _tie_order(rid: str, score: float, historical: bool,
               hits: dict[str, Hit]) -> tuple[float, bool, float, str]:
    """Best first; among hits that score exactly alike, current before historical, newer
    before older, then by id: the order no longer depends on where the index holds them, so
    a rebuilt or imported index answers in the same order."""
    hit = hits.get(rid)
    created = hit.created_at if hit is not None and hit.created_at is not None else 0.0
    return (-score, historical, -created, rid)


_ROW_TYPE: Final = {"records": "record", "links": "link", "reviews": "review",
                    "confirmations": "confirmation", "tombstones": "tombstone",
                    "audit": "audit"}


def _cursor(after: str | None) -> tuple[str, int]:
    """An export page's start, from the previous page's ``next`` (``section:row``)."""
    if not after:
        return "records", 0
    section, _, row = after.partition(":")
    if section not in _ROW_TYPE or not row.isdigit():
        raise protocol.BadRequest(f"'after' {after!r} is not a page of this export "
                                  "(pass the previous page's 'next')", arg="after")
    return section, int(row)


def audit_event(a: Any) -> dict[str, Any]:
    """One audit row in mem0's history shape, with lintaid's fields (``transfer``)."""
    return transfer.history_event(dict(a))


def _with_span(claim: Claim, span: Span | None) -> Claim:
    """The claim with its valid and record time (``store.timeline``)."""
    if span is not None:
        claim.valid_from, claim.valid_until = span.valid_from, span.valid_until
        claim.learned_at, claim.retracted_at = span.learned_at, span.retracted_at
    return claim


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


def _store(row: dict[str, Any]) -> str:
    return models.WORKSPACE if row.get("a_path") or row.get("o_path") else models.MEMORY


def _statement(row: dict[str, Any], prefix: str, store: str,
               status: str | None = None) -> models.Statement:
    """A claim from a state row whose columns carry ``prefix`` (``c_subject`` ...)."""
    def col(name: str) -> Any:
        return row.get(f"{prefix}_{name}")

    return models.Statement(
        claim_id=col("claim_id") or "", record_id=col("record_id") or "",
        subject=col("subject") or "", predicate=col("predicate") or "",
        value=col("value") or "", evidence=col("evidence") or "",
        status=status or row.get("status") or (
            models.CONFLICTED if prefix in ("a", "b") else models.CURRENT),
        store=store, created_at=col("created_at"), source=col("source"),
        session_id=col("session_id"), path=col("path"), line=col("line"),
        standing=bool(row.get("standing")))


def _scopes(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Each state row's claim scope, by claim id."""
    return {r["c_claim_id"]: r.get("c_scope") or "" for r in rows}


def _change(row: dict[str, Any]) -> models.Change:
    """A retired claim and what retired it: the new claim, else the new record's text."""
    store = models.WORKSPACE if row.get("o_path") else models.MEMORY
    old = _statement(row, "o", store, models.SUPERSEDED)
    if row.get("n_claim_id"):
        new = _statement(row, "n", store, models.CURRENT)
    else:
        new = models.Statement(
            claim_id="", record_id=row["new_record"], subject=old.subject,
            predicate=old.predicate, value="", evidence=_first_line(row["new_text"]),
            store=store, created_at=row["new_created_at"], source=row["new_source"],
            path=row["new_path"])
    return models.Change(old=old, new=new)


def _bare_change(row: dict[str, Any]) -> models.Change:
    """A record without claims retired by an explicit link."""
    def side(name: str, status: str) -> models.Statement:
        return models.Statement(
            claim_id="", record_id=row[f"{name}_id"], subject="", predicate="", value="",
            evidence=_first_line(row[f"{name}_text"]), status=status,
            created_at=row[f"{name}_created_at"], source=row[f"{name}_source"],
            session_id=row[f"{name}_session_id"])

    return models.Change(old=side("old", models.SUPERSEDED), new=side("new", models.CURRENT))


def _work_first(turns: list[Hit], limit: int) -> list[Hit]:
    """The newest ``limit`` turns, those that touched files before those that only talked
    (a question answered is not an outcome on the branch); newest first. Small talk ("thanks,
    have a good weekend") is no outcome at all."""
    turns = [t for t in turns if t.paths or not chit_chat(t.content)]
    worked = [t.id for t in turns if t.paths][:limit]
    talked = [t.id for t in turns if not t.paths][:limit - len(worked)]
    chosen = set(worked) | set(talked)
    return [t for t in turns if t.id in chosen]


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip() and line.strip() != "---":
            return " ".join(line.split())
    return ""


def _count(result: Any) -> int:
    return int(result.count)  # tantivy's stub lacks ``count`` (set when count=True)


def merge(first: list[Hit], second: list[Hit]) -> list[Hit]:
    """Two ranked lists as one: each keeps its own order (an index ranks by more than words:
    claims, neighbours, dates), and at every step the head with the higher ``relevance``
    goes first, ``first``'s on a tie. A historical hit goes with the hit before it, so a
    history query places the current hits exactly as the plain query does."""
    groups: list[list[Hit]] = []
    for hit in first:
        if hit.historical and groups:
            groups[-1].append(hit)
        else:
            groups.append([hit])
    out: list[Hit] = []
    i = j = 0
    while i < len(groups) and j < len(second):
        if (second[j].relevance or 0.0) > (groups[i][0].relevance or 0.0):
            out.append(second[j])
            j += 1
        else:
            out.extend(groups[i])
            i += 1
    return out + [h for g in groups[i:] for h in g] + second[j:]


def _match(hit: Hit, terms: Terms) -> None:
    """The hit's statements that match the query, weighed by ``terms`` (its own index's),
    and the retired claims whose statements do: a current read never points into a
    superseded claim's sentence, and knows which retired claims the query was about."""
    match = _described(terms) if hit.store == models.MEMORY else terms.match
    if hit.historical:
        hit.passages = find_passages(hit.content, [], match)
        return
    hit.passages = find_passages(hit.content, retired_spans(hit.content, hit.claims), match)
    hit.retired_matches = retired_matches(hit.content, hit.claims, match)


def _described(terms: Terms) -> Callable[[str], dict[str, float]]:
    """``terms.match`` over a statement and the words of the kinds of tools it names, as the
    memory index holds them (``MemoryStore(describe=kind_terms)``): "Neon Postgres 16"
    answers "which database"."""
    def match(text: str) -> dict[str, float]:
        return terms.match(f"{text}\n{kind_terms(text)}")
    return match


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


@dataclass
class _Doc:
    turn: bool  # a conversation turn: an author and a session
    times: tuple[float | None, float | None]  # created, valid (seconds)


@dataclass
class _Found:
    """A page of candidates: their scores, stored fields and index order."""

    scores: dict[str, float]
    docs: dict[str, _Doc]
    order: dict[str, int]

    @classmethod
    def of(cls, searcher: Any, hits: list[tuple[float, Any]]) -> _Found:
        found = cls({}, {}, {})
        found.add(searcher, hits)
        return found

    def add(self, searcher: Any, hits: list[tuple[float, Any]]) -> None:
        for score, addr in hits:
            doc = searcher.doc(addr)
            rid = str(doc.get_first("id"))
            created, valid = doc.get_first("created_at"), doc.get_first("valid_at")
            self.scores.setdefault(rid, float(score))
            self.order.setdefault(rid, len(self.order))
            self.docs[rid] = _Doc(
                turn=bool(doc.get_first("author")) and bool(doc.get_first("session_id")),
                times=(created / 1000 if created is not None else None,
                       valid / 1000 if valid is not None else None))

    def boost(self, spans: list[Any]) -> None:
        if spans:
            self.scores = boost_dates(self.scores, {r: d.times for r, d in self.docs.items()},
                                      spans)

    def ranked(self) -> list[str]:
        return sorted(self.scores, key=lambda r: (-self.scores[r], self.order.get(r, 0), r))


def _edits(word: str) -> int:
    return 1 if len(word) >= NAME_MIN_EDIT_CHARS else 0


def _names(index: TantivyIndex, searcher: Any, words: list[str]) -> tuple[list[str], list[str]]:
    """Split the query's words into those naming an author of the user's records (exactly,
    or with one typo when long enough) and the rest; all of them stay words when every one
    names an author."""
    if not words or searcher.doc_freq("traits", AUTHORED) == 0:
        return [], words
    names = [w for w in words if w.isalpha() and _count(searcher.search(
        index.fuzzy("author", w, _edits(w)), limit=1, count=True))]
    rest = [w for w in words if w not in names]
    return (names, rest) if rest else ([], words)
