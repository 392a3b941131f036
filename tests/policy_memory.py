"""A ``PolicyStore`` in dicts, for unit tests of the engine's rules (the real ones are SQLite)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from lintaid.policy import (
    ChainKey,
    ClaimRef,
    ClaimState,
    RecordInput,
    RecordState,
    Relation,
    chain_key,
    derive,
    rebuild,
)


@dataclass
class DictPolicy:
    """Records and links are the inputs; a held record is simply absent from ``inputs``."""

    inputs: dict[str, RecordInput] = field(default_factory=dict)
    declared: set[tuple[str, str]] = field(default_factory=set)
    claim_rows: dict[str, ClaimRef] = field(default_factory=dict)
    explicit: dict[tuple[str, str, str], tuple[Relation, int]] = field(default_factory=dict)
    chains: dict[ChainKey, list[Relation]] = field(default_factory=dict)
    sentence: dict[str, list[Relation]] = field(default_factory=dict)  # by target record
    claim_state: dict[str, ClaimState] = field(default_factory=dict)
    record_state: dict[str, RecordState] = field(default_factory=dict)
    rejected: set[str] = field(default_factory=set)  # pair ids a person rejected in review

    # -- test helpers ----------------------------------------------------------------------------
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
        self.rejected.add(pair)
        return derive(self, records)

    def status(self, rid: str) -> str:
        return self.record_state[rid].status

    def claim_statuses(self, rid: str) -> list[str]:
        return [self.claim_state.get(c.claim_id, ClaimState()).status
                for c in self.claims([rid])]

    def snapshot(self) -> tuple:
        return (
            sorted(self.claim_rows.items()),
            sorted(self.explicit.items()),
            sorted((k, v) for k, v in self.chains.items() if v),
            sorted((k, v) for k, v in self.sentence.items() if v),
            sorted(self.claim_state.items()),
            sorted(self.record_state.items()),
        )

    def fresh(self) -> DictPolicy:
        """The same inputs, derived from scratch."""
        full = DictPolicy(dict(self.inputs), set(self.declared), rejected=set(self.rejected))
        rebuild(full, full.inputs)
        return full

    # -- PolicyStore -----------------------------------------------------------------------------
    def records(self, ids: Collection[str]) -> dict[str, RecordInput]:
        return {i: self.inputs[i] for i in ids if i in self.inputs}

    def links(self, ids: Collection[str]) -> set[tuple[str, str]]:
        return {(n, o) for n, o in self.declared if (n in ids or o in ids) and n != o
                and n in self.inputs and o in self.inputs}

    def rejections(self, key: ChainKey) -> Collection[str]:
        return self.rejected

    def claims(self, record_ids: Collection[str]) -> list[ClaimRef]:
        out = [c for c in self.claim_rows.values() if c.record_id in record_ids]
        return sorted(out, key=lambda c: (c.record_id, c.order_key[2]))

    def chain(self, key: ChainKey) -> list[ClaimRef]:
        return sorted((c for c in self.claim_rows.values() if chain_key(c) == key),
                      key=lambda c: (c.record_id, c.order_key[2]))

    def _explicit(self, keep: Iterable[bool]) -> list[Relation]:
        rows = [v for v, k in zip(self.explicit.values(), keep, strict=True) if k]
        rows.sort(key=lambda v: (v[0].source_record, v[0].target_record, v[1]))
        return [r for r, _n in rows]

    def explicit_relations(self, record_ids: Collection[str]) -> list[Relation]:
        return self._explicit(r.source_record in record_ids or r.target_record in record_ids
                              for r, _ in self.explicit.values())

    def explicit_relations_of_claims(self, claim_ids: Collection[str]) -> list[Relation]:
        return self._explicit(r.source_claim in claim_ids or r.target_claim in claim_ids
                              for r, _ in self.explicit.values())

    def relations_of_claims(self, claim_ids: Collection[str]) -> list[Relation]:
        out = self.explicit_relations_of_claims(claim_ids)
        for rid in sorted(self.sentence):  # as SQLite orders them: before every chain
            out.extend(r for r in self.sentence[rid]
                       if r.source_claim in claim_ids or r.target_claim in claim_ids)
        for key in sorted(self.chains):
            out.extend(r for r in self.chains[key]
                       if r.source_claim in claim_ids or r.target_claim in claim_ids)
        return out

    def sentence_relations(self, record_ids: Collection[str]) -> list[Relation]:
        return [r for rid in sorted(self.sentence) if rid in record_ids
                for r in self.sentence[rid]]

    def replace_sentence_relations(self, record_ids: Collection[str],
                                   relations: Sequence[Relation]) -> None:
        for rid in record_ids:
            self.sentence.pop(rid, None)
        for rel in relations:
            self.sentence.setdefault(rel.target_record, []).append(rel)

    def claim_states(self, claim_ids: Collection[str]) -> dict[str, ClaimState]:
        return {c: self.claim_state[c] for c in claim_ids if c in self.claim_state}

    def record_states(self, record_ids: Collection[str]) -> dict[str, RecordState]:
        return {r: self.record_state[r] for r in record_ids if r in self.record_state}

    def replace_claims(self, record_ids: Collection[str], claims: Sequence[ClaimRef]) -> None:
        for cid in [c for c, ref in self.claim_rows.items() if ref.record_id in record_ids]:
            del self.claim_rows[cid]
            self.claim_state.pop(cid, None)
        self.claim_rows.update((c.claim_id, c) for c in claims)

    def replace_explicit_relations(self, record_ids: Collection[str],
                                   relations: Sequence[Relation]) -> None:
        for key in [k for k, (r, _) in self.explicit.items()
                    if r.source_record in record_ids or r.target_record in record_ids]:
            del self.explicit[key]
        n, link = 0, None
        for r in relations:
            if (r.source_record, r.target_record) != link:
                n, link = 0, (r.source_record, r.target_record)
            self.explicit[(r.source_claim, r.kind, r.target_claim)] = (r, n)
            n += 1

    def replace_chain_relations(self, key: ChainKey, relations: Sequence[Relation]) -> None:
        self.chains[key] = list(relations)

    def write_claim_states(self, states: Sequence[tuple[ClaimRef, ClaimState]]) -> None:
        self.claim_state.update((c.claim_id, replace(s, relations=())) for c, s in states)

    def write_record_states(self, states: Mapping[str, RecordState | None]) -> None:
        for rid, state in states.items():
            if state is None:
                self.record_state.pop(rid, None)
            else:
                self.record_state[rid] = state
