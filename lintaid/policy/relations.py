"""Relations between claims on one chain (same scope, subject, predicate), and explicit links.

Pure functions of their inputs: the incremental update recomputes a chain by calling
``relate_chain`` on its claims again, which is what makes it equal to a full rebuild.

Walk a chain oldest first. Each claim is compared with its nearest earlier neighbour from a
different record (same value: confirms; a correction cue in its own sentence, or naming the old
value: supersedes 0.95; strictly newer and the same kind of source: supersedes 0.90; otherwise
conflicts_with 0.75). Unlike the reference, which only ever looks at neighbours, the newer claim
is then also held against every older claim still *live* (not yet superseded) whose value
differs, by the same rules: so "x, x, y-with-cue" retires both x claims, not just the newer one,
and the chain's current value is the newest claim's. Each retired claim points at the claim that
actually replaced it. Live claims of the claim's own record count too: one note stating two
values for one subject is marked conflicted (or, with a cue, the later statement wins), so two
values are never both current without a mark.

"Newer" is a later effective time; on equal effective times (two notes without a valid time
are effective when created), a later ``created_at``, which the store stamps from its clock.
Equal on both counts is no order at all, and the two conflict.

Sources. Memories (captures, notes) are one kind of source, decision documents (workspace
files, effective at their mtime) the other. A memory chain also holds the documents' claims on
its key as read-only *external* members (``lintaid.derivation``). A newer document supersedes
an older memory as it supersedes an older document: the project's decision documents inform
memory. A newer memory does not outrank a document: without a cue it conflicts with it (the
memory side is marked; a document's own state is never written from memory), with a cue
naming the document's value it supersedes it in memory's view. A document retired by another
(frontmatter ``supersedes:``, or a newer document on its own chain) is no member at all.

Weak claims (``ClaimRef.weak``: the actor of "the gateway uses requests for outbound calls")
relate only by naming: the same value confirms, a newer claim whose cue names the weak
claim's value (``replaces``) supersedes it, and a weak claim naming an older value supersedes
that; nothing else, so neither newer-same-kind supersession nor conflicts touch them.

A pair a person rejected in review (``pair_id``) is skipped: neither claim relates to the
other, whatever the rules above would say.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass

HIDE = 0.90
"""A supersedes relation at or above this confidence hides the older claim."""
CONFLICT = 0.65
"""A conflicts_with relation at or above this confidence marks both sides conflicted."""

CONFIRMS = "confirms"
SUPERSEDES = "supersedes"
CONFLICTS_WITH = "conflicts_with"

EXPLICIT = "explicit"
"""Method of a record-level link's relations."""
SENTENCE = "sentence"
"""Method of the relations that retire a sentence's claims together (``lintaid.policy.weak``)."""
DOCUMENT = "document"
MEMORY = "memory"

ChainKey = tuple[str, str, str]


@dataclass(frozen=True)
class ClaimRef:
    """A claim as the relation engine sees it: where it sits, what it says, when it held."""

    claim_id: str
    record_id: str
    scope: str
    subject: str
    predicate: str
    value: str
    effective_at: float | None = None
    source_kind: str = MEMORY
    cue: bool = False
    replaces: str | None = None
    order_key: tuple[float, str, int] = (0.0, "", 0)
    evidence: str = ""
    start: int = 0
    end: int = 0
    weak: bool = False
    external: bool = False  # another store's claim on this chain: read, related, never stated


@dataclass(frozen=True)
class Relation:
    """``source_claim`` is the newer (confirming/superseding) side, ``target_claim`` the older."""

    kind: str
    source_claim: str
    target_claim: str
    source_record: str
    target_record: str
    confidence: float
    method: str
    evidence: str


def chain_key(claim: ClaimRef) -> ChainKey:
    return (claim.scope, claim.subject, claim.predicate)


def chain_order(claim: ClaimRef) -> tuple[int, float, int, tuple[float, str, int]]:
    """Undated first, then by effective time; on a tie a claim carrying a correction counts as
    the later one (it knows about the other value); then record creation time and ids."""
    dated = claim.effective_at is not None
    corrective = claim.cue or claim.replaces is not None
    return (int(dated), claim.effective_at or 0.0, int(corrective), claim.order_key)


def _changed(newer: ClaimRef, older: ClaimRef) -> str:
    return f"{newer.subject} changed from '{older.value}' to '{newer.value}'"


def is_newer(newer: ClaimRef, older: ClaimRef) -> bool:
    """Strictly later: effective time, then creation time (``order_key[0]``); undated never."""
    if newer.effective_at is None or older.effective_at is None:
        return False
    return (newer.effective_at, newer.order_key[0]) > (older.effective_at, older.order_key[0])


def outranks(newer_kind: str, older_kind: str) -> bool:
    """Whether a strictly newer source of ``newer_kind`` supersedes one of ``older_kind``
    without a cue: the same kind, or a document over a memory (see the module docstring)."""
    return newer_kind == older_kind or (newer_kind == DOCUMENT and older_kind == MEMORY)


def classify(newer: ClaimRef, older: ClaimRef) -> Relation | None:
    """The relation between two claims on one chain, ``newer`` later in chain order; None when
    a weak claim has nothing to do with the other."""
    def rel(kind: str, confidence: float, method: str, evidence: str) -> Relation:
        return Relation(kind, newer.claim_id, older.claim_id, newer.record_id, older.record_id,
                        confidence, method, evidence)

    if newer.value == older.value:
        return rel(CONFIRMS, 0.95, "canonical_claim", "same canonical claim and value")
    # A cue that names a different old value ("instead of Postgres" vs. an older "MySQL") is
    # about something else, so it does not count against this older claim.
    names = newer.replaces == older.value if newer.replaces else None
    if newer.weak or older.weak:
        return rel(SUPERSEDES, 0.95, "correction_cue", _changed(newer, older)) if names else None
    cue = names if names is not None else newer.cue
    if cue:
        return rel(SUPERSEDES, 0.95, "correction_cue", _changed(newer, older))
    if is_newer(newer, older) and outranks(newer.source_kind, older.source_kind):
        method = "newer_same_kind" if newer.source_kind == older.source_kind else \
            "newer_document"
        return rel(SUPERSEDES, 0.90, method, _changed(newer, older))
    return rel(CONFLICTS_WITH, 0.75, "canonical_claim_conflict", _changed(newer, older))


def pair_id(scope: str, subject: str, predicate: str, a: tuple[str, str],
            b: tuple[str, str]) -> str:
    """The id of the pair of statements ``a`` and ``b``, each ``(record_id, value)``, on the
    chain (scope, subject, predicate), whichever comes first: a review item's id."""
    sides = sorted(f"{record}\x1e{value}" for record, value in (a, b))
    key = "\x1f".join((scope, subject, predicate, *sides))
    return "rv" + hashlib.sha256(key.encode()).hexdigest()[:22]


def claim_pair_id(a: ClaimRef, b: ClaimRef) -> str:
    return pair_id(a.scope, a.subject, a.predicate, (a.record_id, a.value),
                   (b.record_id, b.value))


def relate_chain(claims: list[ClaimRef], rejected: Collection[str] = ()) -> list[Relation]:
    """All relations of one chain, in chain order (see the module docstring).

    ``rejected``: pair ids (``pair_id``) a person rejected in review; such a pair is never
    related, as if neither claim had seen the other.
    """
    ordered = sorted(claims, key=chain_order)
    out: list[Relation] = []
    live: list[ClaimRef] = []

    def allowed(newer: ClaimRef, older: ClaimRef) -> bool:
        return not rejected or claim_pair_id(newer, older) not in rejected

    for i, claim in enumerate(ordered):
        neighbour = next(
            (c for c in reversed(ordered[:i]) if c.record_id != claim.record_id), None
        )
        retired: set[str] = set()
        if neighbour is not None and allowed(claim, neighbour):
            first = classify(claim, neighbour)
            if first is not None:
                out.append(first)
                if first.kind == SUPERSEDES:
                    retired.add(neighbour.claim_id)
        for older in live:
            if older is neighbour or older.value == claim.value or not allowed(claim, older):
                continue
            rel = classify(claim, older)
            if rel is None:
                continue
            out.append(rel)
            if rel.kind == SUPERSEDES:
                retired.add(older.claim_id)
        live = [c for c in live if c.claim_id not in retired]
        live.append(claim)
    return out


def pseudo_claim_id(record_id: str) -> str:
    """Stands for a whole record in an explicit link when it has no claims of its own."""
    return f"{record_id}::record"


def explicit_relations(links: list[tuple[str, str]],
                       claims_by_record: dict[str, list[ClaimRef]]) -> list[Relation]:
    """Record-level supersession (frontmatter ``supersedes:``, the API's ``supersedes``).

    It retires every claim of the old record regardless of content. The source side is the new
    record's claim on the same chain when it has one, else its first claim, else the record.
    """
    out: list[Relation] = []
    for new_id, old_id in sorted(set(links)):
        if new_id == old_id:
            continue
        new_claims = claims_by_record.get(new_id, [])
        old_claims = claims_by_record.get(old_id, [])
        evidence = f"{new_id} explicitly supersedes {old_id}"
        targets: list[tuple[str, ChainKey | None]] = [
            (c.claim_id, chain_key(c)) for c in old_claims] or [(pseudo_claim_id(old_id), None)]
        for target_id, key in targets:
            source = next((c for c in new_claims if chain_key(c) == key), None)
            if source is None and new_claims:
                source = new_claims[0]
            source_id = source.claim_id if source else pseudo_claim_id(new_id)
            out.append(Relation(SUPERSEDES, source_id, target_id, new_id, old_id, 1.0,
                                EXPLICIT, evidence))
    return out
