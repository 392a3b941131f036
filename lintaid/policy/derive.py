"""Full and incremental derivation of claims, relations and states from records.

``derive`` computes everything from scratch; ``derive_incremental`` recomputes only the chains
that changed or removed records touch (their old and new keys), re-reads the explicit links, and
re-states only the records whose claims sit on those chains or whose explicit link changed. The
two must agree exactly, and a randomized test holds them side by side.

Held records (forgotten, expired) keep their claims, stated with the hold, but take no part in
chains or explicit links: forgetting the newer record brings the older one back. Claims retired
by an explicit link stay out of chains too: an explicit decision wins over inference, so an old
file with a newer timestamp cannot retire the record that explicitly replaced it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from lintaid.capture.record import LOCAL_USER

from .claims import extract_claims
from .relations import (
    ChainKey,
    ClaimRef,
    Relation,
    chain_key,
    chain_order,
    explicit_relations,
    relate_chain,
)
from .scope import claim_scope, heading_at, source_kind
from .sentences import headings
from .status import ClaimState, RecordState, claim_statuses, record_status


@dataclass(frozen=True)
class RecordInput:
    """What the policy needs to know about one record."""

    record_id: str
    text: str
    kind: str = "capture"
    user_id: str = LOCAL_USER
    created_at: float = 0.0
    valid_at: float | None = None
    path: str | None = None
    explicit_supersedes: str | None = None
    status_hold: str | None = None  # None | "forgotten" | "expired"


@dataclass(frozen=True)
class RecordMeta:
    created_at: float
    hold: str | None
    explicit_supersedes: str | None


@dataclass
class Derived:
    """The derived policy state of a set of records."""

    claims: dict[str, ClaimRef] = field(default_factory=dict)
    claims_by_record: dict[str, tuple[str, ...]] = field(default_factory=dict)
    claims_by_key: dict[ChainKey, frozenset[str]] = field(default_factory=dict)  # not held
    chains: dict[ChainKey, tuple[str, ...]] = field(default_factory=dict)  # in chain order
    chain_relations: dict[ChainKey, tuple[Relation, ...]] = field(default_factory=dict)
    explicit: tuple[Relation, ...] = ()
    explicit_by: dict[str, str] = field(default_factory=dict)  # old record -> replacing record
    claim_states: dict[str, ClaimState] = field(default_factory=dict)
    record_states: dict[str, RecordState] = field(default_factory=dict)
    meta: dict[str, RecordMeta] = field(default_factory=dict)

    @property
    def relations(self) -> list[Relation]:
        """Explicit relations first, then each chain's in chain-key order."""
        out = list(self.explicit)
        for key in sorted(self.chain_relations):
            out.extend(self.chain_relations[key])
        return out

    def record_claims(self, record_id: str) -> list[ClaimRef]:
        return [self.claims[c] for c in self.claims_by_record.get(record_id, ())]


RecordLookup = Mapping[str, RecordInput] | Callable[[str], RecordInput | None]


# ---------------------------------------------------------------------------------------------
# Pieces shared by both paths


def record_claims(record: RecordInput) -> list[ClaimRef]:
    """The claims of one record, with ids ``{record_id}::c{n}`` (n from 1) and chain scope."""
    heads = headings(record.text) if record.kind == "document" else []
    effective = record.valid_at if record.valid_at is not None else record.created_at
    out: list[ClaimRef] = []
    for n, claim in enumerate(extract_claims(record.text), start=1):
        heading = heading_at(heads, claim.start) if heads else None
        scope = claim_scope(record.kind, record.user_id, claim.predicate, record.path, heading)
        out.append(ClaimRef(
            claim_id=f"{record.record_id}::c{n}", record_id=record.record_id, scope=scope,
            subject=claim.subject, predicate=claim.predicate, value=claim.value,
            effective_at=effective, source_kind=source_kind(record.kind), cue=claim.cue,
            replaces=claim.replaces, order_key=(record.created_at, record.record_id, n),
            evidence=claim.evidence, start=claim.start, end=claim.end,
        ))
    return out


def _meta(record: RecordInput) -> RecordMeta:
    return RecordMeta(record.created_at, record.status_hold, record.explicit_supersedes)


def _active_links(meta: Mapping[str, RecordMeta]) -> list[tuple[str, str]]:
    """Declared links whose both ends exist and are not held."""
    out = []
    for new_id, m in meta.items():
        old_id = m.explicit_supersedes
        if (old_id and old_id != new_id and m.hold is None and old_id in meta
                and meta[old_id].hold is None):
            out.append((new_id, old_id))
    return sorted(out)


def _explicit(derived: Derived) -> tuple[tuple[Relation, ...], dict[str, str]]:
    links = _active_links(derived.meta)
    ends = {rid for link in links for rid in link}
    by_record = {rid: derived.record_claims(rid) for rid in ends}
    relations = tuple(explicit_relations(links, by_record))
    newest: dict[str, tuple[float, str]] = {}
    for new_id, old_id in links:
        rank = (derived.meta[new_id].created_at, new_id)
        if old_id not in newest or rank > newest[old_id]:
            newest[old_id] = rank
    return relations, {old: rank[1] for old, rank in newest.items()}


def _retired(explicit: Iterable[Relation], derived: Derived) -> set[str]:
    """Claims an explicit link retires: they take no part in inference."""
    return {r.target_claim for r in explicit if r.target_claim in derived.claims}


def _relate(derived: Derived, key: ChainKey, retired: set[str]) -> None:
    members = [derived.claims[c] for c in derived.claims_by_key.get(key, ()) if c not in retired]
    ordered = sorted(members, key=chain_order)
    if not ordered:
        derived.chains.pop(key, None)
        derived.chain_relations.pop(key, None)
        return
    derived.chains[key] = tuple(c.claim_id for c in ordered)
    derived.chain_relations[key] = tuple(relate_chain(ordered))


def _state_claims(derived: Derived, keys: Iterable[ChainKey]) -> None:
    keys = sorted(set(keys))
    relations = list(derived.explicit)
    for key in keys:
        relations.extend(derived.chain_relations.get(key, ()))
    states = claim_statuses(relations)
    for key in keys:
        for claim_id in derived.claims_by_key.get(key, ()):
            derived.claim_states[claim_id] = states.get(claim_id, ClaimState())


def _state_record(derived: Derived, record_id: str, text: str) -> None:
    meta = derived.meta[record_id]
    if meta.hold:
        derived.record_states[record_id] = RecordState(meta.hold)
        return
    derived.record_states[record_id] = record_status(
        record_id, text, derived.record_claims(record_id), derived.claim_states,
        derived.explicit_by.get(record_id),
    )


def _add_record(derived: Derived, record: RecordInput) -> set[ChainKey]:
    """Add a record's claims; returns the chain keys it joins (none when held)."""
    refs = record_claims(record)
    derived.meta[record.record_id] = _meta(record)
    derived.claims_by_record[record.record_id] = tuple(c.claim_id for c in refs)
    keys: set[ChainKey] = set()
    for ref in refs:
        derived.claims[ref.claim_id] = ref
        if record.status_hold:
            derived.claim_states[ref.claim_id] = ClaimState(record.status_hold)
            continue
        key = chain_key(ref)
        derived.claims_by_key[key] = derived.claims_by_key.get(key, frozenset()) | {ref.claim_id}
        keys.add(key)
    return keys


def _drop_record(derived: Derived, record_id: str) -> set[ChainKey]:
    """Remove a record's claims; returns the chain keys it left."""
    meta = derived.meta.pop(record_id, None)
    derived.record_states.pop(record_id, None)
    keys: set[ChainKey] = set()
    for claim_id in derived.claims_by_record.pop(record_id, ()):
        ref = derived.claims.pop(claim_id)
        derived.claim_states.pop(claim_id, None)
        if meta is None or meta.hold is not None:
            continue
        key = chain_key(ref)
        rest = derived.claims_by_key.get(key, frozenset()) - {claim_id}
        if rest:
            derived.claims_by_key[key] = rest
        else:
            derived.claims_by_key.pop(key, None)
        keys.add(key)
    return keys


# ---------------------------------------------------------------------------------------------
# Full derivation


def derive(records: Iterable[RecordInput]) -> Derived:
    """Everything, from scratch."""
    derived = Derived()
    texts: dict[str, str] = {}
    for record in records:
        texts[record.record_id] = record.text
        _add_record(derived, record)
    derived.explicit, derived.explicit_by = _explicit(derived)
    retired = _retired(derived.explicit, derived)
    for key in list(derived.claims_by_key):
        _relate(derived, key, retired)
    _state_claims(derived, derived.claims_by_key)
    for record_id, text in texts.items():
        _state_record(derived, record_id, text)
    return derived


# ---------------------------------------------------------------------------------------------
# Incremental derivation


def _lookup(lookup: RecordLookup, record_id: str) -> RecordInput | None:
    if callable(lookup):
        return lookup(record_id)
    return lookup.get(record_id)


def derive_incremental(previous: Derived, changed_records: Iterable[RecordInput],
                       removed_ids: Iterable[str], all_records_lookup: RecordLookup) -> Derived:
    """``previous`` updated for upserted ``changed_records`` and deleted ``removed_ids``.

    ``all_records_lookup`` maps a record id to its current RecordInput; it is read only for the
    text of records that must be re-stated. ``previous`` is not modified.
    """
    changed = {r.record_id: r for r in changed_records}
    gone = set(removed_ids) | set(changed)
    derived = Derived(
        claims=dict(previous.claims), claims_by_record=dict(previous.claims_by_record),
        claims_by_key=dict(previous.claims_by_key), chains=dict(previous.chains),
        chain_relations=dict(previous.chain_relations), explicit=previous.explicit,
        explicit_by=dict(previous.explicit_by), claim_states=dict(previous.claim_states),
        record_states=dict(previous.record_states), meta=dict(previous.meta),
    )
    touched: set[ChainKey] = set()
    for record_id in gone:
        touched |= _drop_record(derived, record_id)
    for record in changed.values():
        touched |= _add_record(derived, record)

    old_explicit, old_by = previous.explicit, previous.explicit_by
    derived.explicit, derived.explicit_by = _explicit(derived)
    retired = _retired(derived.explicit, derived)
    # A claim entering or leaving the retired set changes its chain's membership.
    for claim_id in _retired(old_explicit, previous) ^ retired:
        for source in (previous, derived):
            ref = source.claims.get(claim_id)
            if ref is not None and ref.record_id not in gone:
                touched.add(chain_key(ref))
    for key in touched:
        _relate(derived, key, retired)

    state_keys = set(touched)
    for rel in set(old_explicit) ^ set(derived.explicit):
        for claim_id in (rel.source_claim, rel.target_claim):
            ref = derived.claims.get(claim_id)
            if ref is not None and derived.meta[ref.record_id].hold is None:
                state_keys.add(chain_key(ref))
    _state_claims(derived, state_keys)

    restate = set(changed)
    restate.update(old for old in set(old_by) | set(derived.explicit_by)
                   if old_by.get(old) != derived.explicit_by.get(old))
    for key in state_keys:
        restate.update(derived.claims[c].record_id for c in derived.claims_by_key.get(key, ()))
    for record_id in sorted(restate):
        if record_id not in derived.meta:
            continue
        record = changed.get(record_id) or _lookup(all_records_lookup, record_id)
        if record is None:
            raise KeyError(f"record {record_id} is derived but missing from the lookup")
        _state_record(derived, record_id, record.text)
    return derived
