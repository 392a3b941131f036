"""The one policy engine: claims, relations and states for memory records and workspace files.

Pure code over a narrow protocol (``PolicyStore``): the caller adapts its storage to it.

Claims relate pairwise. Each claim has *keys* (``claim_keys``: its topic's terms, its value,
the old values it names); two claims of one scope that share a key are *candidates*, and
``relations.relate`` decides, from the two claims alone and the similarity of their topics,
whether one confirms, supersedes or conflicts with the other. Because a relation depends on
its two claims only, deriving after one record changed is the same as deriving everything
again: ``derive`` re-extracts the changed records' claims, drops every inferred relation
touching their old claims, relates each new claim with its candidates, and restates the claims
whose relations changed (and, one step further, the claims in conflict with them, since a
conflict with a retired claim is moot). ``rebuild`` is the same run over every record, in
batches, from empty derived tables; a randomized test holds incremental runs equal to it.

A store may also offer *external* candidates (``ClaimRef.external``: memory reads the decision
documents' claims). They are related like any claim, but only relations with an end of this
store's own are written, and their states never are; a caller whose external claims changed
names their keys (``derive(..., keys=...)``), and the own claims holding those keys are
related again.

Rules this module keeps (the rules themselves live in beliefs, relations and status):
- a record that takes no part (a forgotten memory, a file with no claims and no link) has no
  derived rows: the store leaves it out of ``records`` and ``links``;
- claims an explicit link retires stay out of inference: an explicit decision wins;
- a pair of claims a person rejected in review is never related (``PolicyStore.rejected``,
  held state read whenever a pair is related, so a rebuild keeps the rejection);
- expiry is not derived: it is applied at read time, since time passing changes it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from . import topics
from .inputs import RecordInput, record_claims
from .relations import (
    CONFLICTS_WITH,
    REMOVED,
    SUPERSEDES,
    ClaimRef,
    Relation,
    chain_order,
    claim_pair_id,
    explicit_relations,
    relate,
    replaced,
    value_template,
)
from .status import ClaimState, RecordState, claim_statuses, record_status
from .values import CODE

REBUILD_BATCH = 1000
"""Records per engine run in a full rebuild: bounds memory, not correctness."""


NEAREST = 16
"""Per key, a claim is related with at most this many claims before it and after it in time
(the nearest): bounds the work on a key thousands of claims share. Derivation is exactly
order-independent while no key has more claims than this; beyond it, the nearest decide."""
TOPIC_KEYS = 4
"""A claim is found by its heaviest topic terms only, at most this many (ties by name)."""


def claim_keys(claim: ClaimRef) -> dict[str, bool]:
    """What a claim can be found by, each key with whether it holds it strongly: its topic's
    terms (strong at full weight) and those of its subject (strong), its value, the values it names and its subject (strong),
    the other values its statement states (weak).
    Two claims are candidates when they share a key that one of them holds strongly, which
    is what ``relations.relate`` needs of them (``topics.strong_overlap``)."""
    heavy = sorted(claim.topic, key=lambda tw: (-tw[1], tw[0]))[:TOPIC_KEYS]
    keys = {"t:" + term: w >= topics.LEAD_WEIGHT for term, w in heavy}
    # The words of what the value is of ("retention" of "retention in days retention log
    # groups"): a long statement's heaviest topic terms can all be other words.
    for term in topics.words(claim.subject):
        if term not in topics.GENERIC and len(term) > 2 and term in dict(claim.topic):
            keys["t:" + term] = True
    if claim.value and claim.value != REMOVED:
        keys["v:" + claim.value] = True
        if claim.predicate == CODE and (template := value_template(claim.value)):
            keys["p:" + template] = True  # the same setting with another number in it
    for old in replaced(claim.replaces):
        keys["v:" + old] = True
    for peer in replaced(claim.peers):  # what its statement also says: found by its removal
        keys.setdefault("v:" + peer, False)
    keys["s:" + claim.subject + "\x1f" + claim.predicate] = True
    return keys


def similarity(a: ClaimRef, b: ClaimRef) -> float:
    return topics.shaped_similarity(topics.shape(a.topic), topics.shape(b.topic))


class PolicyStore(Protocol):
    """Where the engine reads its inputs and reads and writes derived state.

    Claims, relations and states come back exactly as the engine wrote them.
    """

    # -- inputs (held state applied) -----------------------------------------------------------
    def records(self, ids: Collection[str]) -> Mapping[str, RecordInput]:
        """The records among ``ids`` that take part; the others are absent."""
        ...

    def links(self, ids: Collection[str]) -> set[tuple[str, str]]:
        """Declared links ``(new, old)`` with an end in ``ids`` whose both ends take part."""
        ...

    def rejected(self, pair_ids: Collection[str]) -> Collection[str]:
        """Those of ``pair_ids`` (``relations.claim_pair_id``) a person rejected in review:
        held state, which the store keeps whatever is derived."""
        ...

    # -- derived state -------------------------------------------------------------------------
    def claims(self, record_ids: Collection[str]) -> list[ClaimRef]:
        """Stored claims of these records, by record then claim order."""
        ...

    def candidates(self, claims: Sequence[ClaimRef]) -> Mapping[str, Sequence[ClaimRef]]:
        """For each of ``claims`` (by id), the stored claims (and external ones, marked) that
        may relate to it: the same scope (or external), sharing a key (``claim_keys``) that
        either side holds strongly; per key, the NEAREST before and after it in time order."""
        ...

    def claims_with_keys(self, keys: Collection[str]) -> list[ClaimRef]:
        """This store's own claims holding any of ``keys``."""
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

    def claim_states(self, claim_ids: Collection[str]) -> dict[str, ClaimState]:
        """Stored claim states (their ``relations`` left empty)."""
        ...

    def record_states(self, record_ids: Collection[str]) -> dict[str, RecordState]:
        ...

    def replace_claims(self, record_ids: Collection[str], claims: Sequence[ClaimRef]) -> None:
        """Drop these records' claims, their keys and claim states; store ``claims``."""
        ...

    def replace_explicit_relations(self, record_ids: Collection[str],
                                   relations: Sequence[Relation]) -> None:
        """Drop explicit relations with an end in ``record_ids``; store ``relations``."""
        ...

    def replace_inferred_relations(self, claim_ids: Collection[str],
                                   relations: Sequence[Relation]) -> None:
        """Drop inferred relations with an end in ``claim_ids``; store ``relations``."""
        ...

    def write_claim_states(self, states: Sequence[tuple[ClaimRef, ClaimState]]) -> None:
        ...

    def write_record_states(self, states: Mapping[str, RecordState | None]) -> None:
        """Store each state; None removes the record's state."""
        ...


def derive(store: PolicyStore, changed: Iterable[str], keys: Iterable[str] = ()) -> set[str]:
    """Bring derived state in step after ``changed`` records were written, edited or dropped,
    and after the external claims holding ``keys`` changed.

    Returns the records whose record state or claim statuses changed (their index entries
    must be rewritten); the changed records themselves are the caller's to re-index.
    """
    ids = set(changed)
    key_set = set(keys)
    if not ids and not key_set:
        return set()
    run = _Run(store)
    relating: dict[str, ClaimRef] = {}
    dropped: set[str] = set()
    if ids:
        old, new = run.extract(ids)
        dropped = {c.claim_id for c in old}
        relating.update((c.claim_id, c) for c in new)
        relating.update((c.claim_id, c) for c in run.relink(ids))
    if key_set:
        relating.update((c.claim_id, c) for c in store.claims_with_keys(key_set))
    run.relate(relating, dropped)
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


class _Run:
    """One derivation: the claims and records to restate and to re-index gather as it goes."""

    def __init__(self, store: PolicyStore) -> None:
        self.store = store
        self.inputs: dict[str, RecordInput] = {}
        self.restating: set[str] = set()  # records
        self.claims_to_state: set[str] = set()
        self.reindex: set[str] = set()
        self.absent: set[str] = set()  # asked for, and taking no part
        self.prior: dict[str, str] = {}  # claim -> status, for claims re-extracted here

    def extract(self, ids: set[str]) -> tuple[list[ClaimRef], list[ClaimRef]]:
        """Re-extract the changed records' claims: (old claims, new claims)."""
        old = self.store.claims(ids)
        self.prior = {cid: s.status for cid, s in
                      self.store.claim_states([c.claim_id for c in old]).items()}
        self._load(ids)
        new = [c for rid in sorted(ids) if rid in self.inputs
               for c in record_claims(self.inputs[rid])]
        self.store.replace_claims(ids, new)
        self.restating |= ids
        self.claims_to_state.update(c.claim_id for c in new)
        return old, new

    def relink(self, ids: set[str]) -> list[ClaimRef]:
        """Recompute the explicit relations naming a changed record; return the claims whose
        explicit retirement changed (they enter or leave inference)."""
        store = self.store
        old = store.explicit_relations(ids)
        links = store.links(ids)
        ends = {rid for link in links for rid in link}
        new = explicit_relations(sorted(links), _by_record(store.claims(ends)))
        store.replace_explicit_relations(ids, new)
        both = (*old, *new)
        for rel in both:
            self.restating.update((rel.source_record, rel.target_record))
        flipped = {r.target_claim for r in old} ^ {r.target_claim for r in new}
        touched = [c for c in store.claims({r.target_record for r in both})
                   if c.claim_id in flipped]
        self.claims_to_state.update(c.claim_id for c in store.claims(
            {r.source_record for r in both} | {r.target_record for r in both}))
        return touched

    def relate(self, relating: Mapping[str, ClaimRef], dropped: set[str]) -> None:
        """Relate ``relating`` again with their candidates (``dropped`` claims are gone), and
        note the claims whose relations changed."""
        store = self.store
        ends = set(relating) | dropped
        if not ends:
            return
        before = [r for r in store.relations_of_claims(ends) if r.method != "explicit"]
        mine = [c for c in relating.values() if not c.external]
        found = store.candidates(mine) if mine else {}
        pool = {d.claim_id: d for ds in found.values() for d in ds}
        pool.update(relating)
        retired = {r.target_claim for r in
                   store.explicit_relations_of_claims(list(pool))}
        pairs: dict[tuple[str, str], tuple[ClaimRef, ClaimRef]] = {}
        for c in mine:
            if c.claim_id in retired:
                continue
            for d in found.get(c.claim_id, ()):
                if d.claim_id == c.claim_id or d.claim_id in retired:
                    continue
                if d.scope != c.scope and not (d.external or c.external):
                    continue
                newer, older = (c, d) if chain_order(c) > chain_order(d) else (d, c)
                pairs[(newer.claim_id, older.claim_id)] = (newer, older)
        asked = {claim_pair_id(n, o) for n, o in pairs.values()}
        rejected = set(store.rejected(asked)) if asked else set()
        new: dict[tuple[str, str, str], Relation] = {}
        for newer, older in pairs.values():
            if newer.external and older.external:
                continue
            if rejected and claim_pair_id(newer, older) in rejected:
                continue
            rel = relate(newer, older, similarity(newer, older))
            if rel is not None:
                new.setdefault((rel.source_claim, rel.kind, rel.target_claim), rel)
        relations = self._said_again(new)
        store.replace_inferred_relations(ends, relations)
        for rel in (*before, *relations):
            self.claims_to_state.update((rel.source_claim, rel.target_claim))
        self.claims_to_state.update(relating)

    def _said_again(self, found: dict[tuple[str, str, str], Relation]) -> list[Relation]:
        """``found``'s relations, and for each supersession the same value said again in the
        older claim's statement: "cron `0 */6 * * *`, so the drift check runs 4 times per
        day" states one schedule twice, under two subjects; the revert that retires the cron
        retires the other saying of it too (``method`` "same_statement")."""
        out = dict(found)
        retiring = [r for r in found.values() if r.kind == SUPERSEDES]
        if retiring:
            claims = self.store.claims({r.target_record for r in retiring})
            by_id = {c.claim_id: c for c in claims}
            for rel in retiring:
                old = by_id.get(rel.target_claim)
                if old is None:
                    continue
                for again in claims:
                    if again.record_id == old.record_id and again.claim_id != old.claim_id \
                            and (again.start, again.end) == (old.start, old.end) \
                            and _said_as(again.value) == _said_as(old.value):
                        out.setdefault((rel.source_claim, SUPERSEDES, again.claim_id), replace(
                            rel, target_claim=again.claim_id, method="same_statement"))
        return [out[k] for k in sorted(out)]

    def restate(self) -> None:
        """State every touched claim from its relations, then every touched record."""
        store = self.store
        wanted = set(self.claims_to_state)
        if wanted:
            touching = store.relations_of_claims(wanted)
            partners = {end for r in touching if r.kind == CONFLICTS_WITH
                        for end in (r.source_claim, r.target_claim)} - wanted
            if partners:
                wanted |= partners
                touching = store.relations_of_claims(wanted)
            states = claim_statuses(touching)
            own = [c for c in _claims_by_id(store, wanted).values() if not c.external]
            before = store.claim_states([c.claim_id for c in own])
            rows = [(c, states.get(c.claim_id, ClaimState())) for c in own]
            for claim, state in rows:
                was = self.prior.get(claim.claim_id)
                if was is None:
                    was = before.get(claim.claim_id, ClaimState()).status
                if was != state.status:
                    self.reindex.add(claim.record_id)
                self.restating.add(claim.record_id)
            store.write_claim_states(rows)
        self._restate_records()

    def _restate_records(self) -> None:
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


_NUMBER_SAID = re.compile(r"^(?:[a-z][\w.+-]*\s+)*(\d+(?:\.\d+)*)s?$")


def _said_as(value: str) -> str:
    """What a value says beside its name and unit: "python 3.10" and "3.10", "1800s" and
    "1800" (``SESSION_TTL=1800`` beside "30 minutes"), "every 21600s" and "21600"."""
    m = _NUMBER_SAID.match(value)
    if m is None or (len(m.group(1)) < 3 and "." not in m.group(1)):
        return value  # "2" and "2" in one statement are as often two things as one
    return m.group(1)


def _claims_by_id(store: PolicyStore, claim_ids: set[str]) -> dict[str, ClaimRef]:
    """The stored claims among ``claim_ids`` (by their records: ids are ``record::cN``)."""
    records = {cid.rsplit("::", 1)[0] for cid in claim_ids}
    return {c.claim_id: c for c in store.claims(records) if c.claim_id in claim_ids}


__all__ = ["NEAREST", "REBUILD_BATCH", "PolicyStore", "claim_keys", "derive", "rebuild",
           "similarity"]
