"""Status per claim from its relations, and per record from its claims.

The claim is the unit that is retired. A record is hidden only when every claim in it is retired
and it says nothing else of substance; a record that still carries other guidance stays visible,
marked ``conflicted``, so its superseded sentences can be omitted or flagged when injected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .relations import CONFLICT, CONFLICTS_WITH, HIDE, SUPERSEDES, Relation
from .sentences import frontmatter_end, headings

CURRENT = "current"
SUPERSEDED = "superseded"
CONFLICTED = "conflicted"

SUBSTANCE_MIN_WORDS = 3
"""A record whose leftover text (claims, labels and headings removed) has fewer substantive
words than this says nothing beyond its claims."""


@dataclass(frozen=True)
class ClaimState:
    status: str = CURRENT
    superseded_by_claim: str | None = None
    superseded_by_record: str | None = None
    confidence: float | None = None
    relations: tuple[Relation, ...] = field(default=())


@dataclass(frozen=True)
class RecordState:
    status: str = CURRENT
    superseded_by: str | None = None
    confidence: float | None = None
    evidence: str = ""


class ClaimSpan(Protocol):
    @property
    def claim_id(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


def retiring(relations: Iterable[Relation]) -> dict[str, Relation]:
    """For each claim a supersedes relation at or above HIDE targets, the one that retires
    it: the highest confidence, the first listed on a tie."""
    best: dict[str, Relation] = {}
    for rel in relations:
        if rel.kind == SUPERSEDES and rel.confidence >= HIDE:
            held = best.get(rel.target_claim)
            if held is None or rel.confidence > held.confidence:
                best[rel.target_claim] = rel
    return best


def claim_statuses(relations: Sequence[Relation]) -> dict[str, ClaimState]:
    """State of every claim the relations mention.

    Superseded: a supersedes relation at or above HIDE targets it (highest confidence wins, the
    first listed on a tie). Conflicted: a conflicts_with at or above CONFLICT touches it, or a
    supersedes between CONFLICT and HIDE targets it (likely retired, waiting for review); it
    is not superseded, and neither is the other side: a dispute with a retired claim is moot.
    """
    best = retiring(relations)
    touching: dict[str, list[Relation]] = {}
    for rel in relations:
        touching.setdefault(rel.source_claim, []).append(rel)
        if rel.target_claim != rel.source_claim:
            touching.setdefault(rel.target_claim, []).append(rel)
    conflict: dict[str, float] = {}
    for rel in relations:
        if rel.confidence < CONFLICT or rel.kind not in (CONFLICTS_WITH, SUPERSEDES):
            continue
        if rel.source_claim in best or rel.target_claim in best:
            continue
        if rel.kind == SUPERSEDES:  # below HIDE: the older side is likely retired
            if rel.confidence < HIDE:
                conflict[rel.target_claim] = max(conflict.get(rel.target_claim, 0.0),
                                                 rel.confidence)
            continue
        for side in (rel.source_claim, rel.target_claim):
            conflict[side] = max(conflict.get(side, 0.0), rel.confidence)
    out: dict[str, ClaimState] = {}
    for claim_id, rels in touching.items():
        if claim_id in best:
            rel = best[claim_id]
            out[claim_id] = ClaimState(SUPERSEDED, rel.source_claim, rel.source_record,
                                       rel.confidence, tuple(rels))
        elif claim_id in conflict:
            out[claim_id] = ClaimState(CONFLICTED, None, None, conflict[claim_id], tuple(rels))
        else:
            out[claim_id] = ClaimState(CURRENT, None, None, None, tuple(rels))
    return out


# ---------------------------------------------------------------------------------------------
# What a record says besides its claims

# Lines that are context or metadata, not knowledge: dropped whole.
_CONTEXT_LINE = re.compile(
    r"^\s*(?:memory\s+type|affected\s+paths|request|user\s+prompt|prompt|session|branch|"
    r"revision)\s*:", re.IGNORECASE,
)
# A label or speaker in front of the content: dropped, the content kept.
_LABEL = re.compile(r"^\s*(?:[-*+]\s+)?(?:[A-Za-z][\w-]{0,20}(?:\s+[A-Za-z][\w-]{0,20})?)\s*:\s",
                    re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9][\w'-]*")
_FILLER = frozenset(
    {
        "the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "it", "this",
        "that", "ok", "okay", "done", "thanks", "thank", "you", "yes", "no", "so", "we", "i",
        "now", "also", "note", "result", "outcome", "update", "correction",
    }
)


def substantive_words(text: str, spans: Sequence[tuple[int, int]]) -> int:
    """Words left once claim sentences, frontmatter, headings and capture labels are removed."""
    chars = list(text)

    def blank(start: int, end: int) -> None:
        for i in range(max(start, 0), min(end, len(chars))):
            if chars[i] != "\n":
                chars[i] = " "

    blank(0, frontmatter_end(text))
    for start, _heading in headings(text):
        line_end = text.find("\n", start)
        blank(start, len(text) if line_end < 0 else line_end)
    for start, end in spans:
        blank(start, end)
    count = 0
    for line in "".join(chars).splitlines():
        if _CONTEXT_LINE.match(line):
            continue
        line = _LABEL.sub("", line, count=1)
        count += sum(1 for w in _WORD.findall(line) if len(w) > 1 and w.lower() not in _FILLER)
    return count


def _joined(evidence: list[str]) -> str:
    return "; ".join(dict.fromkeys(e for e in evidence if e))


def _superseding(state: ClaimState) -> Relation | None:
    return next((r for r in state.relations if r.kind == SUPERSEDES
                 and r.source_claim == state.superseded_by_claim
                 and r.confidence == state.confidence), None)


def record_status(record_id: str, text: str, claims: Sequence[ClaimSpan],
                  claim_states: Mapping[str, ClaimState],
                  explicitly_superseded_by: str | None) -> RecordState:
    """A record's state from its claims (see the module docstring)."""
    if explicitly_superseded_by:
        return RecordState(SUPERSEDED, explicitly_superseded_by, 1.0,
                           f"{explicitly_superseded_by} explicitly supersedes {record_id}")
    states = [claim_states.get(c.claim_id, ClaimState()) for c in claims]
    superseded = [s for s in states if s.status == SUPERSEDED]
    conflicted = [s for s in states if s.status == CONFLICTED]
    if not superseded and not conflicted:
        return RecordState()
    replacement: ClaimState | None = None
    for s in superseded:
        if replacement is None or (s.confidence or 0.0) > (replacement.confidence or 0.0):
            replacement = s
    evidence: list[str] = []
    for s in superseded:
        rel = _superseding(s)
        evidence.append(rel.evidence if rel else "")
    for s in conflicted:
        evidence.extend(r.evidence for r in s.relations
                        if r.kind == CONFLICTS_WITH and r.confidence >= CONFLICT)
    by = replacement.superseded_by_record if replacement else None
    confidence = max((s.confidence or 0.0) for s in superseded + conflicted)
    if (len(superseded) == len(states)
            and substantive_words(text, [(c.start, c.end) for c in claims]) < SUBSTANCE_MIN_WORDS):
        return RecordState(SUPERSEDED, by, replacement.confidence if replacement else None,
                           _joined(evidence))
    return RecordState(CONFLICTED, by, confidence, _joined(evidence))
