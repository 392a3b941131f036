"""The typed views every caller shares: a hit (one record or file chunk), its claims and
relations, a search result, and the status vocabulary. The daemon builds them; the protocol
carries them as plain maps (``to_dict``); the CLI, the MCP shim, the Python client and the
injected text read them back (``from_dict``).

A ``Hit`` is also a read-only mapping (``hit["content"]``, ``hit.get("status")``), so code
written against mem0-shaped dicts keeps working; ``hit["memory"]`` is the content. So is a
``SearchResult``; ``json_default`` lets ``json.dumps`` write either.

Standard library only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

# -- the status vocabulary -----------------------------------------------------------------
CURRENT: Final = "current"
PARTLY_SUPERSEDED: Final = "partly_superseded"
"""Still believed, but some of its statements were replaced; those are marked per claim."""
CONFLICTED: Final = "conflicted"
"""Another current memory says something different about the same subject."""
SUPERSEDED: Final = "superseded"
EXPIRED: Final = "expired"
FORGOTTEN: Final = "forgotten"

STATUSES: Final = (CURRENT, PARTLY_SUPERSEDED, CONFLICTED, SUPERSEDED, EXPIRED, FORGOTTEN)
VISIBLE: Final = frozenset({CURRENT, PARTLY_SUPERSEDED, CONFLICTED})
"""Statuses a current (non-history) query may show."""

MEMORY: Final = "memory"
WORKSPACE: Final = "workspace"

# -- record kinds ----------------------------------------------------------------------------
CAPTURE: Final = "capture"
"""A finished agent turn, or what a compaction kept, captured by a hook."""
NOTE: Final = "note"
"""A memory added on purpose (CLI, MCP, the Python client)."""
PROMPT: Final = "prompt"
"""A prompt the person submitted: kept and searchable with ``kind=prompt``, but never a
belief: no claims, never injected, not counted among records, left out of lists and
searches that do not ask for it."""
KINDS: Final = (CAPTURE, NOTE, PROMPT)
ALL_KINDS: Final = "all"

# -- staleness (memlint's levels): how likely a record is out of date, and what to do --------
FRESH: Final = "fresh"
AGING: Final = "aging"
STALE: Final = "stale"
EXPIRED_LEVEL: Final = "expired"
LEVELS: Final = (FRESH, AGING, STALE, EXPIRED_LEVEL)
"""Least to most likely out of date; the same words as the memlint report."""
ACTIONS: Final = {FRESH: "use", AGING: "verify", STALE: "flag", EXPIRED_LEVEL: "discard"}

T = TypeVar("T", bound="_Model")


class _Model:
    """Dataclass helpers: plain-map conversion that ignores unknown keys (newer peers)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, list):
                value = [v.to_dict() if isinstance(v, _Model) else v for v in value]
            elif isinstance(value, _Model):
                value = value.to_dict()
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls: type[T], data: Mapping[str, Any]) -> T:
        known = _FIELDS.get(cls)
        if known is None:  # read once per class: a search builds many models
            known = _FIELDS[cls] = frozenset(
                f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in known})


_FIELDS: dict[type, frozenset[str]] = {}


@dataclass
class Claim(_Model):
    """One statement extracted from a record: subject, predicate, value, and its status."""

    claim_id: str
    record_id: str
    subject: str
    predicate: str
    value: str
    status: str = CURRENT
    evidence: str = ""
    start: int = 0
    end: int = 0
    scope: str = ""
    effective_at: float | None = None
    superseded_by: str | None = None  # the record holding the replacing claim
    superseded_by_claim: str | None = None
    replaced_by_value: str | None = None
    # Valid time (when it held in the project) and record time (when the store knew it):
    # it held from ``valid_from`` (its effective time) until ``valid_until`` (when the claim
    # or link that retired it took effect, or its record expired; None: still holds); the
    # store learned it at ``learned_at`` and learned of its retirement at ``retracted_at``.
    valid_from: float | None = None
    valid_until: float | None = None
    learned_at: float | None = None
    retracted_at: float | None = None


@dataclass
class Relation(_Model):
    """How this record relates to another: ``role`` "source" means this one is the newer."""

    kind: str  # confirms | supersedes | conflicts_with
    other_id: str
    role: str
    confidence: float
    method: str = ""
    evidence: str = ""


@dataclass
class Staleness(_Model):
    """How likely a record is out of date (memlint-style), judged at ``checked_at``.

    ``score`` 0-1 grows with age at the rate of the record's ``category``, less for each
    confirmation, more when a newer record contradicts it; ``level`` and ``action`` follow
    from it. Age counts from the last confirmation. ``when`` projects the time each level is
    reached (``None``: never, as things stand).
    """

    level: str
    score: float
    category: str
    age_days: int
    action: str
    confirmations: int = 0
    last_confirmed_at: float | None = None
    contradicted_by: str | None = None
    reason: str = ""
    when: dict[str, float | None] = field(default_factory=dict)
    checked_at: float | None = None


BEFORE: Final = "before"
AFTER: Final = "after"


@dataclass
class Passage(_Model):
    """A statement of a hit that matches the query: ``content[start:end]``; ``terms``, the
    query's terms (stems) it holds, each with its share of the query's weight (the term's idf
    in the hit's own index over the query's total), and ``weight``, their sum. Filled when a
    search asks for passages (hook injection does)."""

    start: int
    end: int
    weight: float
    terms: dict[str, float] = field(default_factory=dict)


@dataclass
class Context(_Model):
    """A record beside a hit in its conversation (the same session): said just ``before`` or
    ``after`` it. Short: the start of its text, superseded statements cut out."""

    id: str
    position: str  # BEFORE | AFTER
    content: str
    author: str | None = None
    created_at: float | None = None

    def said(self) -> str:
        """``Name: text`` (the text alone when it names its speaker already, or none)."""
        if self.author and not self.content.startswith(f"{self.author}:"):
            return f"{self.author}: {self.content}"
        return self.content


@dataclass
class Hit(_Model, Mapping[str, Any]):
    """One memory record or one workspace chunk, with everything needed to judge it."""

    id: str
    content: str
    status: str = CURRENT
    store: str = MEMORY
    kind: str = NOTE  # KINDS, or "file" for a workspace chunk
    historical: bool = False  # shown only because the query asked about the past
    score: float = 0.0  # the index's own score (BM25): comparable within one index only
    # ``score`` as a share of the most the query's words can score in the hit's index, in
    # [0, 1]: comparable across the memory and workspace indexes; what results are merged by
    relevance: float | None = None
    confidence: float = 1.0
    superseded_by: str | None = None
    supersedes: list[str] = field(default_factory=list)
    evidence: str | None = None
    claims: list[Claim] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    # provenance
    source: str | None = None
    client: str | None = None
    session_id: str | None = None
    turn_id: str | None = None  # a captured turn's identity within its session
    event: str | None = None
    doc_type: str | None = None
    user_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    revision: str | None = None
    member: str | None = None  # the teammate who wrote it (team tier); None: written here
    machine: str | None = None  # and on which machine
    paths: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: float | None = None
    updated_at: float | None = None
    valid_at: float | None = None
    expires_at: float | None = None
    changed_files: list[str] = field(default_factory=list)
    staleness: Staleness | None = None  # memory records only
    reviews: list[str] = field(default_factory=list)  # review items waiting on this record
    context: list[Context] = field(default_factory=list)  # conversation turns only
    passages: list[Passage] = field(default_factory=list)  # what matched, best first
    # retired claims whose statements match the query, each with the share of the query's
    # weight matched there: filled with the passages
    retired_matches: dict[str, float] = field(default_factory=dict)
    # workspace chunks
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    heading: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Hit:
        hit = super().from_dict(data)
        hit.claims = [c if isinstance(c, Claim) else Claim.from_dict(c) for c in hit.claims]
        hit.relations = [r if isinstance(r, Relation) else Relation.from_dict(r)
                         for r in hit.relations]
        if isinstance(hit.staleness, Mapping):
            hit.staleness = Staleness.from_dict(hit.staleness)
        hit.context = [c if isinstance(c, Context) else Context.from_dict(c)
                       for c in hit.context or []]
        hit.passages = [p if isinstance(p, Passage) else Passage.from_dict(p)
                        for p in hit.passages or []]
        return hit

    # -- read-only mapping, for mem0-shaped callers ---------------------------------------
    def __getitem__(self, key: str) -> Any:
        if key == "memory":
            return self.content
        if key in _HIT_FIELDS:
            value = getattr(self, key)
            if isinstance(value, list) and value and isinstance(value[0], _Model):
                return [v.to_dict() for v in value]
            if isinstance(value, _Model):
                return value.to_dict()
            return value
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(_HIT_FIELDS)

    def __len__(self) -> int:
        return len(_HIT_FIELDS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Hit):
            return self.to_dict() == other.to_dict()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @property
    def is_memory(self) -> bool:
        return self.store == MEMORY

    def location(self) -> str:
        """``path:start-end`` for a chunk, the source for a record."""
        if self.store == WORKSPACE and self.path:
            return f"{self.path}:{self.start_line or 1}-{self.end_line or self.start_line or 1}"
        return self.source or self.id


_HIT_FIELDS: Final = tuple(f.name for f in dataclasses.fields(Hit))


@dataclass
class Statement(_Model):
    """One claim as the project's state shows it, with where it comes from: a memory record
    (``record_id``) or a decision document (``path`` and ``line``)."""

    claim_id: str
    record_id: str
    subject: str
    predicate: str
    value: str
    evidence: str
    status: str = CURRENT
    store: str = MEMORY
    created_at: float | None = None
    source: str | None = None
    session_id: str | None = None
    path: str | None = None
    line: int | None = None
    standing: bool = False  # it restates or replaces an earlier statement

    def location(self) -> str:
        """``path:line`` for a document, the record id for a memory."""
        if self.path:
            return f"{self.path}:{self.line}" if self.line else self.path
        return self.record_id


@dataclass
class Change(_Model):
    """A statement retired since a time (``old``) and the one that retired it (``new``)."""

    old: Statement
    new: Statement


@dataclass
class Conflict(_Model):
    """Two statements that disagree, both still marked conflicted: ``a`` the newer."""

    a: Statement
    b: Statement


PENDING: Final = "pending"
ACCEPTED: Final = "accepted"
REJECTED: Final = "rejected"
ACCEPT: Final = "accept"
REJECT: Final = "reject"
DECISIONS: Final = (ACCEPT, REJECT)
"""What a person may decide on a review item."""


@dataclass
class ReviewItem(_Model):
    """Two statements on one chain that the policy related without settling: ``newer``
    supersedes ``older`` too weakly to hide it, or the two conflict. ``status`` is pending
    until a person accepts it (the newer wins: an explicit link) or rejects it (the two are
    never related again)."""

    id: str
    kind: str  # supersedes | conflicts_with
    confidence: float
    method: str
    evidence: str
    subject: str
    predicate: str
    newer: Statement
    older: Statement
    status: str = PENDING
    decided_at: float | None = None
    decided_by: str | None = None
    reason: str | None = None

    @property
    def same_record(self) -> bool:
        """Both statements sit in one record: accepting cannot link it to itself."""
        return self.newer.record_id == self.older.record_id

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReviewItem:
        item = super().from_dict(data)
        for side in ("newer", "older"):
            value = getattr(item, side)
            if isinstance(value, Mapping):
                setattr(item, side, Statement.from_dict(value))
        return item


@dataclass
class ChainStep(_Model):
    """One claim on a chain (claims about the same subject and predicate), oldest first."""

    claim_id: str
    record_id: str
    value: str
    evidence: str = ""
    status: str = CURRENT
    effective_at: float | None = None
    created_at: float | None = None
    superseded_by_claim: str | None = None


@dataclass
class ChainLink(_Model):
    """How two claims of a chain relate: ``source_claim`` is the newer (it supersedes,
    conflicts with or confirms ``target_claim``)."""

    kind: str
    source_claim: str
    target_claim: str
    confidence: float
    method: str = ""
    evidence: str = ""


@dataclass
class Chain(_Model):
    """The chain one claim of a record sits on: what it replaced, what replaced it, and why.
    ``omitted``: steps left out at either end of a long chain."""

    claim_id: str
    subject: str
    predicate: str
    scope: str = ""
    steps: list[ChainStep] = field(default_factory=list)
    links: list[ChainLink] = field(default_factory=list)
    omitted: int = 0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Chain:
        chain = super().from_dict(data)
        chain.steps = [s if isinstance(s, ChainStep) else ChainStep.from_dict(s)
                       for s in chain.steps]
        chain.links = [x if isinstance(x, ChainLink) else ChainLink.from_dict(x)
                       for x in chain.links]
        return chain


@dataclass
class ProjectState:
    """What SessionStart brings: current decisions, what changed since ``since``, what is
    unresolved, and the newest notes and outcomes. Built in the daemon, read by the
    renderer; not sent over the protocol."""

    decisions: list[Statement] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    notes: list[Hit] = field(default_factory=list)
    outcomes: list[Hit] = field(default_factory=list)
    since: float | None = None
    session_decisions: list[Statement] = field(default_factory=list)
    session_outcomes: list[Hit] = field(default_factory=list)

    def empty(self) -> bool:
        return not any((self.decisions, self.changes, self.conflicts, self.notes,
                        self.outcomes, self.session_decisions, self.session_outcomes))


@dataclass
class SearchResult(_Model, Mapping[str, Any]):
    """Hits best first; ``hidden`` counts matches the policy kept out (superseded, expired).

    A read-only mapping too, as mem0-shaped callers use a search's answer:
    ``result["results"]``, ``result.get("hidden")``, ``result.keys()``, ``dict(result)``
    (the hits stay ``Hit`` objects, themselves mappings). ``to_dict()`` is the plain JSON
    value; ``json.dumps(result, default=json_default)`` writes it directly.
    """

    results: list[Hit]
    hidden: int = 0
    history: bool = False

    def __getitem__(self, key: str) -> Any:
        if key in _RESULT_FIELDS:
            return getattr(self, key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(_RESULT_FIELDS)

    def __len__(self) -> int:
        return len(_RESULT_FIELDS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SearchResult):
            return self.to_dict() == other.to_dict()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchResult:
        return cls(results=[Hit.from_dict(h) for h in data.get("results") or []],
                   hidden=int(data.get("hidden") or 0), history=bool(data.get("history")))


_RESULT_FIELDS: Final = tuple(f.name for f in dataclasses.fields(SearchResult))


def json_default(value: Any) -> Any:
    """The ``default`` hook for ``json.dumps``: a lintaid model (a ``SearchResult``, a
    ``Hit`` ...) as its plain value (``to_dict()``); anything else is refused as
    ``json`` refuses it."""
    if isinstance(value, _Model):
        return value.to_dict()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
