"""The one policy engine: claims, relations and states for memory records and workspace files.

Pure code over a narrow protocol (``PolicyStore``): the caller adapts its storage to it. Given
the ids of changed records, ``derive`` re-extracts their claims, relates again only the chains
those claims leave or join (and the chains whose membership an explicit link changes),
restates those chains' claims and the records touched, and returns the records whose state
changed. ``rebuild`` is the same run over every record, in batches, from empty derived tables;
a randomized test holds incremental runs equal to it.

A chain may also hold *external* members (``ClaimRef.external``: memory's chains hold the
decision documents' claims on their key). They are related like any member, but only the
relations with an end of this store's own are written, and their states never are; a caller
whose external claims changed names their chains (``derive(..., chains=...)``).

After the chains, sentences bound by a weak claim are retired together (``lintaid.policy.weak``):
their relations are derived from what the chains decided and change only the statuses of the
claims they target, whose chains are then stated again.

Rules this module keeps (the rules themselves live in claims, relations and status):
- a record that takes no part (a forgotten memory, a file with no claims and no link) has no
  derived rows: the store leaves it out of ``records`` and ``links``, so held records take no
  part in chains or links, and forgetting the newer record brings the older one back;
- claims an explicit link retires stay out of inference: an explicit decision wins;
- a pair of claims a person rejected in review is never related (``PolicyStore.rejections``,
  held state read whenever a chain is related, so a rebuild keeps the rejection);
- expiry is not derived: it is applied at read time, since time passing changes it.

The store must keep one invariant: a record stops taking part only while it is among the
changed ids, or when it has no claims (a file that took part only as a link's target).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from .inputs import RecordInput, record_claims
from .relations import (
    SENTENCE,
    ChainKey,
    ClaimRef,
    Relation,
    chain_key,
    explicit_relations,
    relate_chain,
)
from .status import ClaimState, RecordState, claim_statuses, record_status, retiring
from .weak import binds, sentence_relations, sentences

REBUILD_BATCH = 1000
"""Records per engine run in a full rebuild: bounds memory, not correctness."""


class PolicyStore(Protocol):
    """Where the engine reads its inputs and reads and writes derived state.

    Claims, relations and states come back exactly as the engine wrote them. Relations are
    listed explicit ones first (by link: new record, old record, then the order written), then
    each chain's in the order written.
    """

    # -- inputs (held state applied) -----------------------------------------------------------
    def records(self, ids: Collection[str]) -> Mapping[str, RecordInput]:
        """The records among ``ids`` that take part; the others are absent."""
        ...

    def links(self, ids: Collection[str]) -> set[tuple[str, str]]:
        """Declared links ``(new, old)`` with an end in ``ids`` whose both ends take part."""
        ...

    def rejections(self, key: ChainKey) -> Collection[str]:
        """Pair ids (``relations.pair_id``) on this chain a person rejected in review: held
        state, which the store keeps whatever is derived."""
        ...

    # -- derived state -------------------------------------------------------------------------
    def claims(self, record_ids: Collection[str]) -> list[ClaimRef]:
        """Stored claims of these records, by record then claim order."""
        ...

    def chain(self, key: ChainKey) -> list[ClaimRef]:
        """Stored claims on one chain, and any external members (``ClaimRef.external``)."""
        ...

    def explicit_relations(self, record_ids: Collection[str]) -> list[Relation]:
        """Stored explicit relations with an end (record) in ``record_ids``."""
        ...

    def explicit_relations_of_claims(self, claim_ids: Collection[str]) -> list[Relation]:
        """Stored explicit relations with an end (claim) in ``claim_ids``."""
        ...

    def relations_of_claims(self, claim_ids: Collection[str]) -> list[Relation]:
        """Every stored relation with an end (claim) in ``claim_ids``."""
        ...

    def sentence_relations(self, record_ids: Collection[str]) -> list[Relation]:
        """Stored sentence relations (method ``sentence``) aimed at these records' claims."""
        ...

    def claim_states(self, claim_ids: Collection[str]) -> dict[str, ClaimState]:
        """Stored claim states (their ``relations`` left empty)."""
        ...

    def record_states(self, record_ids: Collection[str]) -> dict[str, RecordState]:
        ...

    def replace_claims(self, record_ids: Collection[str], claims: Sequence[ClaimRef]) -> None:
        """Drop these records' claims and claim states; store ``claims``."""
        ...

    def replace_explicit_relations(self, record_ids: Collection[str],
                                   relations: Sequence[Relation]) -> None:
        """Drop explicit relations with an end in ``record_ids``; store ``relations``."""
        ...

    def replace_chain_relations(self, key: ChainKey, relations: Sequence[Relation]) -> None:
        ...

    def replace_sentence_relations(self, record_ids: Collection[str],
                                   relations: Sequence[Relation]) -> None:
        """Drop the sentence relations aimed at ``record_ids``; store ``relations``."""
        ...

    def write_claim_states(self, states: Sequence[tuple[ClaimRef, ClaimState]]) -> None:
        ...

    def write_record_states(self, states: Mapping[str, RecordState | None]) -> None:
        """Store each state; None removes the record's state."""
        ...


def derive(store: PolicyStore, changed: Iterable[str], chains: Iterable[ChainKey] = ()) -> set[str]:
    """Bring derived state in step after ``changed`` records were written, edited or dropped,
    and after the external members of ``chains`` changed.

    Returns the records whose record state or claim statuses changed (their index entries
    must be rewritten); the changed records themselves are the caller's to re-index.
    """
    ids = set(changed)
    keys = set(chains)
    if not ids and not keys:
        return set()
    run = _Run(store)
    if ids:
        keys |= run.extract(ids)
        keys |= run.relink(ids)
    run.relate(keys)
    run.restate()
    return run.reindex


def rebuild(store: PolicyStore, ids: Iterable[str], batch: int = REBUILD_BATCH) -> set[str]:
    """Derive every record in ``ids`` from empty derived tables (the caller empties them)."""
    items = sorted(set(ids))
    out: set[str] = set()
    for i in range(0, len(items), batch):
        out |= derive(store, items[i:i + batch])
    return out


def _by_record(claims: Iterable[ClaimRef]) -> dict[str, list[ClaimRef]]:
    out: dict[str, list[ClaimRef]] = {}
    for claim in claims:
        out.setdefault(claim.record_id, []).append(claim)
    return out


def _explicit(links: set[tuple[str, str]],
              claims_by_record: dict[str, list[ClaimRef]]) -> list[Relation]:
    return explicit_relations(sorted(links), claims_by_record)


@dataclass(frozen=True)
class _Walk:
    """One chain as related: its own claims, the explicit relations aimed at them, and every
    relation of the walk (external ends included)."""

    local: list[ClaimRef]
    explicit: list[Relation]
    relations: list[Relation]


class _Run:
    """One derivation: the records to restate and to re-index gather as the steps go."""

    def __init__(self, store: PolicyStore) -> None:
        self.store = store
        self.inputs: dict[str, RecordInput] = {}
        self.restating: set[str] = set()
        self.reindex: set[str] = set()
        self.absent: set[str] = set()  # asked for, and taking no part
        self.prior: dict[str, str] = {}  # claim -> status, for claims re-extracted here

    def extract(self, ids: set[str]) -> set[ChainKey]:
        """Re-extract the changed records' claims; return the chains they leave and join."""
        old = self.store.claims(ids)
        self.prior = {cid: s.status for cid, s in
                      self.store.claim_states([c.claim_id for c in old]).items()}
        self._load(ids)
        new = [c for rid in sorted(ids) if rid in self.inputs
               for c in record_claims(self.inputs[rid])]
        self.store.replace_claims(ids, new)
        self.restating |= ids
        return {chain_key(c) for c in (*old, *new)}

    def relink(self, ids: set[str]) -> set[ChainKey]:
        """Recompute the explicit relations naming a changed record.

        A claim entering or leaving the retired set changes its chain's membership, so those
        chains are related again.
        """
        store = self.store
        old = store.explicit_relations(ids)
        links = store.links(ids)
        ends = {rid for link in links for rid in link}
        new = _explicit(links, _by_record(store.claims(ends)))
        store.replace_explicit_relations(ids, new)
        both = (*old, *new)
        for rel in both:
            self.restating.update((rel.source_record, rel.target_record))
        retired = {r.target_claim for r in new}
        flipped = {r.target_claim for r in old} ^ retired
        touched: set[ChainKey] = set()
        for claim in store.claims({r.target_record for r in both}):
            if claim.claim_id in flipped or claim.claim_id in retired:
                touched.add(chain_key(claim))
        touched.update(chain_key(c) for c in store.claims({r.source_record for r in both}))
        return touched

    def relate(self, keys: set[ChainKey]) -> None:
        """Relate each chain again (retired claims left out), retire bound sentences, and
        restate the claims of every chain concerned."""
        walks = {key: self._walk(key) for key in sorted(keys)}
        for key in sorted(self._sentences(walks) - walks.keys()):
            walks[key] = self._walk(key)  # written as before: only its statuses change
        aimed: dict[str, list[Relation]] = {}
        for rel in self.store.sentence_relations({c.record_id for walk in walks.values()
                                                  for c in walk.local}):
            aimed.setdefault(rel.target_claim, []).append(rel)
        for key in sorted(walks):
            self._state(walks[key], aimed)

    def _walk(self, key: ChainKey) -> _Walk:
        store = self.store
        members = store.chain(key)
        local = [c for c in members if not c.external]
        ids = [c.claim_id for c in local]
        explicit = store.explicit_relations_of_claims(ids) if ids else []
        retired = {r.target_claim for r in explicit}
        relations = relate_chain([c for c in members if c.claim_id not in retired],
                                   store.rejections(key) if members else ())
        external = {c.claim_id for c in members if c.external}
        store.replace_chain_relations(key, [r for r in relations if r.source_claim not in external
                                            or r.target_claim not in external])
        return _Walk(local, explicit, relations)

    def _sentences(self, walks: Mapping[ChainKey, _Walk]) -> set[ChainKey]:
        """Derive again the sentence relations of every record on these chains (and of the
        changed records); return the chains of the claims whose sentence relations changed."""
        store = self.store
        records = {c.record_id for walk in walks.values() for c in walk.local} | self.restating
        claims = store.claims(records)
        bound = [c for group in sentences(claims).values() if binds(group) for c in group]
        old = store.sentence_relations(records)
        if not bound and not old:
            return set()
        decided = [r for r in store.relations_of_claims([c.claim_id for c in bound])
                   if r.method != SENTENCE]
        new = sentence_relations(bound, retiring(decided))
        store.replace_sentence_relations(records, new)
        changed = {r.target_claim for r in set(old) ^ set(new)}
        return {chain_key(c) for c in claims if c.claim_id in changed}

    def _state(self, walk: _Walk, aimed: Mapping[str, list[Relation]]) -> None:
        """State a chain's own claims from its relations and the sentence relations aimed at
        them (``aimed``, by claim); note the records whose claims' statuses changed."""
        store = self.store
        ids = [c.claim_id for c in walk.local]
        if not ids:
            return
        sentence = [r for cid in ids for r in aimed.get(cid, ())]
        states = claim_statuses([*walk.explicit, *walk.relations, *sentence])
        before = store.claim_states(ids)
        new = [(c, states.get(c.claim_id, ClaimState())) for c in walk.local]
        for claim, state in new:
            was = self.prior.get(claim.claim_id)
            if was is None:
                was = before.get(claim.claim_id, ClaimState()).status
            if was != state.status:
                self.reindex.add(claim.record_id)
        store.write_claim_states(new)
        self.restating.update(c.record_id for c in walk.local)

    def restate(self) -> None:
        """State every touched record from its claims and the explicit links naming it."""
        store = self.store
        ids = self.restating
        self._load(ids)
        live = sorted(rid for rid in ids if rid in self.inputs)
        claims = _by_record(store.claims(live))
        claim_ids = [c.claim_id for cs in claims.values() for c in cs]
        touching: dict[str, list[Relation]] = {}
        for rel in store.relations_of_claims(claim_ids):
            touching.setdefault(rel.source_claim, []).append(rel)
            if rel.target_claim != rel.source_claim:
                touching.setdefault(rel.target_claim, []).append(rel)
        states = {cid: replace(s, relations=tuple(touching.get(cid, ())))
                  for cid, s in store.claim_states(claim_ids).items()}
        by = self._explicitly_superseded_by(live)
        before = store.record_states(ids)
        after: dict[str, RecordState | None] = {}
        for rid in sorted(ids):
            record = self.inputs.get(rid)
            after[rid] = None if record is None else record_status(
                rid, record.text, claims.get(rid, []), states, by.get(rid))
            if before.get(rid) != after[rid]:
                self.reindex.add(rid)
        store.write_record_states(after)

    def _explicitly_superseded_by(self, ids: list[str]) -> dict[str, str]:
        """For each record, the newest record linked as replacing it (created time, then id)."""
        wanted = set(ids)
        links = [(new, old) for new, old in self.store.links(wanted) if old in wanted]
        self._load({new for new, _ in links})
        newest: dict[str, tuple[float, str]] = {}
        for new, old in links:
            record = self.inputs.get(new)
            if record is None:
                continue
            rank = (record.created_at, new)
            if old not in newest or rank > newest[old]:
                newest[old] = rank
        return {old: rank[1] for old, rank in newest.items()}

    def _load(self, ids: set[str]) -> None:
        missing = ids - self.inputs.keys() - self.absent
        if missing:
            found = self.store.records(missing)
            self.inputs.update(found)
            self.absent |= missing - found.keys()


__all__ = ["REBUILD_BATCH", "PolicyStore", "derive", "rebuild"]
