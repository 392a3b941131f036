"""A ``PolicyStore`` in dicts: the engine's reference store, for tests and benchmarks of the
rules (the daemon's stores are SQLite, ``lintaid.derivation``)."""

from __future__ import annotations

import bisect
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from .engine import NEAREST, claim_keys, derive, rebuild
from .inputs import RecordInput
from .relations import ClaimRef, Relation
from .status import ClaimState, RecordState


@dataclass
class MemoryPolicyStore:
    """Records and links are the inputs; a held record is simply absent from ``inputs``.
    ``external``: another store's claims, read as candidates (memory reads documents')."""

    inputs: dict[str, RecordInput] = field(default_factory=dict)
    declared: set[tuple[str, str]] = field(default_factory=set)
    claim_rows: dict[str, ClaimRef] = field(default_factory=dict)
    explicit: dict[tuple[str, str, str], tuple[Relation, int]] = field(default_factory=dict)
    inferred: dict[tuple[str, str, str], Relation] = field(default_factory=dict)
    claim_state: dict[str, ClaimState] = field(default_factory=dict)
    record_state: dict[str, RecordState] = field(default_factory=dict)
    rejected_pairs: set[str] = field(default_factory=set)
    external: list[ClaimRef] = field(default_factory=list)

    # -- helpers for callers -------------------------------------------------------------------
    def put(self, *records: RecordInput) -> set[str]:
        for r in records:
            self.inputs[r.record_id] = r
        return derive(self, [r.record_id for r in records])

    def drop(self, *ids: str) -> set[str]:
        for rid in ids:
            self.inputs.pop(rid, None)
        return derive(self, ids)

    def link(self, new: str, old: str) -> set[str]:
        self.declared.add((new, old))
        return derive(self, [new, old])

    def unlink(self, new: str, old: str) -> set[str]:
        self.declared.discard((new, old))
        return derive(self, [new, old])

    def reject(self, pair: str, *records: str) -> set[str]:
        """Hold a rejection of ``pair`` and derive its records again, as the writer does."""
        self.rejected_pairs.add(pair)
        return derive(self, records)

    def status(self, rid: str) -> str:
        return self.record_state[rid].status

    def claim_statuses(self, rid: str) -> list[str]:
        return [self.claim_state.get(c.claim_id, ClaimState()).status
                for c in self.claims([rid])]

    def all_claims(self) -> list[ClaimRef]:
        return sorted(self.claim_rows.values(), key=lambda c: (c.record_id, c.order_key))

    def all_relations(self) -> list[Relation]:
        return [r for r, _n in self.explicit.values()] + [self.inferred[k]
                                                         for k in sorted(self.inferred)]

    def claim_state_map(self) -> dict[str, str]:
        return {cid: s.status for cid, s in self.claim_state.items()}

    def snapshot(self) -> tuple[object, ...]:
        return (sorted(self.claim_rows.items()), sorted(self.explicit.items()),
                sorted(self.inferred.items()), sorted(self.claim_state.items()),
                sorted(self.record_state.items()))

    def fresh(self) -> MemoryPolicyStore:
        """The same inputs, derived from scratch."""
        full = MemoryPolicyStore(dict(self.inputs), set(self.declared),
                                 rejected_pairs=set(self.rejected_pairs),
                                 external=list(self.external))
        rebuild(full, full.inputs)
        return full

    # -- PolicyStore ---------------------------------------------------------------------------
    def records(self, ids: Collection[str]) -> dict[str, RecordInput]:
        return {i: self.inputs[i] for i in ids if i in self.inputs}

    def links(self, ids: Collection[str]) -> set[tuple[str, str]]:
        wanted = set(ids)
        return {(n, o) for n, o in self.declared
                if (n in wanted or o in wanted) and n in self.inputs and o in self.inputs}

    def rejected(self, pair_ids: Collection[str]) -> set[str]:
        return set(pair_ids) & self.rejected_pairs

    def claims(self, record_ids: Collection[str]) -> list[ClaimRef]:
        wanted = set(record_ids)
        return sorted((c for c in self.claim_rows.values() if c.record_id in wanted),
                      key=lambda c: (c.record_id, c.order_key))

    def candidates(self, claims: Sequence[ClaimRef]) -> dict[str, list[ClaimRef]]:
        scopes = {c.scope for c in claims}
        own = _nearest(claims, [c for c in self.claim_rows.values() if c.scope in scopes])
        ext = _nearest(claims, self.external)
        return {cid: [*own.get(cid, ()), *ext.get(cid, ())] for cid in own.keys() | ext.keys()}

    def claims_with_keys(self, keys: Collection[str]) -> list[ClaimRef]:
        found: dict[str, ClaimRef] = {}
        for key in set(keys):
            holders = sorted((c for c in self.claim_rows.values() if key in claim_keys(c)),
                             key=lambda c: (-c.order_key[0], c.claim_id))
            found.update((c.claim_id, c) for c in holders[:NEAREST])
        return [found[k] for k in sorted(found)]

    def explicit_relations(self, record_ids: Collection[str]) -> list[Relation]:
        wanted = set(record_ids)
        rels = [(r, n) for r, n in self.explicit.values()
                if r.source_record in wanted or r.target_record in wanted]
        rels.sort(key=lambda x: (x[0].source_record, x[0].target_record, x[1]))
        return [r for r, _n in rels]

    def explicit_relations_of_claims(self, claim_ids: Collection[str]) -> list[Relation]:
        wanted = set(claim_ids)
        rels = [(r, n) for r, n in self.explicit.values()
                if r.source_claim in wanted or r.target_claim in wanted]
        rels.sort(key=lambda x: (x[0].source_record, x[0].target_record, x[1]))
        return [r for r, _n in rels]

    def relations_of_claims(self, claim_ids: Collection[str]) -> list[Relation]:
        wanted = set(claim_ids)
        explicit = self.explicit_relations_of_claims(wanted)
        inferred = [self.inferred[k] for k in sorted(self.inferred)
                    if k[0] in wanted or k[2] in wanted]
        return explicit + inferred

    def claim_states(self, claim_ids: Collection[str]) -> dict[str, ClaimState]:
        return {c: self.claim_state[c] for c in claim_ids if c in self.claim_state}

    def record_states(self, record_ids: Collection[str]) -> dict[str, RecordState]:
        return {r: self.record_state[r] for r in record_ids if r in self.record_state}

    def replace_claims(self, record_ids: Collection[str], claims: Sequence[ClaimRef]) -> None:
        wanted = set(record_ids)
        for cid in [c for c, ref in self.claim_rows.items() if ref.record_id in wanted]:
            del self.claim_rows[cid]
            self.claim_state.pop(cid, None)
        for c in claims:
            self.claim_rows[c.claim_id] = c

    def replace_explicit_relations(self, record_ids: Collection[str],
                                   relations: Sequence[Relation]) -> None:
        wanted = set(record_ids)
        for key in [k for k, (r, _n) in self.explicit.items()
                    if r.source_record in wanted or r.target_record in wanted]:
            del self.explicit[key]
        link: tuple[str, str] | None = None
        n = 0
        for r in relations:
            if (r.source_record, r.target_record) != link:
                link, n = (r.source_record, r.target_record), 0
            self.explicit[(r.source_claim, r.kind, r.target_claim)] = (r, n)
            n += 1

    def replace_inferred_relations(self, claim_ids: Collection[str],
                                   relations: Sequence[Relation]) -> None:
        wanted = set(claim_ids)
        for key in [k for k in self.inferred if k[0] in wanted or k[2] in wanted]:
            del self.inferred[key]
        for r in relations:
            self.inferred[(r.source_claim, r.kind, r.target_claim)] = r

    def write_claim_states(self, states: Sequence[tuple[ClaimRef, ClaimState]]) -> None:
        for c, s in states:
            self.claim_state[c.claim_id] = s

    def write_record_states(self, states: Mapping[str, RecordState | None]) -> None:
        for rid, s in states.items():
            if s is None:
                self.record_state.pop(rid, None)
            else:
                self.record_state[rid] = s


def _nearest(claims: Sequence[ClaimRef], pool: list[ClaimRef]) -> dict[str, list[ClaimRef]]:
    """What ``candidates`` returns from ``pool`` (see ``PolicyStore.candidates``)."""
    holders: dict[tuple[str, bool], list[tuple[float, str, ClaimRef]]] = {}
    for c in pool:
        for key, strong in claim_keys(c).items():
            holders.setdefault((key, False), []).append((c.order_key[0], c.claim_id, c))
            if strong:
                holders.setdefault((key, True), []).append((c.order_key[0], c.claim_id, c))
    for rows in holders.values():
        rows.sort(key=lambda r: (r[0], r[1]))
    times = {k: [r[0] for r in rows] for k, rows in holders.items()}
    out: dict[str, list[ClaimRef]] = {}
    for c in claims:
        at = c.order_key[0]
        found: dict[str, ClaimRef] = {}
        for key, strong in claim_keys(c).items():
            rows = holders.get((key, not strong), [])
            i = bisect.bisect_right(times.get((key, not strong), []), at)
            for row in rows[max(0, i - NEAREST):i + NEAREST]:
                found[row[1]] = row[2]
        out[c.claim_id] = [found[k] for k in sorted(found)]
    return out


__all__ = ["MemoryPolicyStore"]
