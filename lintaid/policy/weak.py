"""Sentences that stand or fall as one: a weak actor claim and the claims beside it.

"The gateway uses requests for outbound HTTP calls" yields ``(outbound http calls,
implementation, requests)`` and the weak ``(gateway, implementation, requests)``. The sentence
is one statement, so its claims are retired together:

- when its weak claim is superseded (a later claim on the actor's chain names the value: "the
  gateway now uses httpx instead of requests"), every other claim of the sentence is
  superseded by the same claim;
- when every other claim of the sentence is superseded (a newer "we use httpx for outbound
  HTTP calls"), the weak claim is too: it only ever stood for the sentence.

Both read only what each chain decided on its own (its relations and the explicit links). The
relations written here (method ``sentence``) count for claim statuses but never in a chain's
walk, so no chain depends on another through them and nothing circles.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .relations import SENTENCE, SUPERSEDES, ClaimRef, Relation

Sentence = tuple[str, int, int]  # record id, start, end


def sentences(claims: Iterable[ClaimRef]) -> dict[Sentence, list[ClaimRef]]:
    """Claims grouped by the sentence they were read from, in the order given."""
    out: dict[Sentence, list[ClaimRef]] = {}
    for claim in claims:
        out.setdefault((claim.record_id, claim.start, claim.end), []).append(claim)
    return out


def binds(group: list[ClaimRef]) -> bool:
    """A sentence whose claims are retired together: a weak claim and another beside it."""
    return any(c.weak for c in group) and any(not c.weak for c in group)


def sentence_relations(claims: Iterable[ClaimRef],
                       retired: Mapping[str, Relation]) -> list[Relation]:
    """The relations retiring sentences together (see the module docstring).

    ``claims``: every claim of the records concerned, in claim order. ``retired``: for each
    claim its chain (or an explicit link) retires, the relation that does.
    """
    out: list[Relation] = []
    for _sentence, group in sorted(sentences(claims).items()):
        if not binds(group):
            continue
        weak = [c for c in group if c.weak]
        strong = [c for c in group if not c.weak]
        by = next((retired[c.claim_id] for c in weak if c.claim_id in retired), None)
        targets = strong
        if by is None and all(c.claim_id in retired for c in strong):
            by, targets = retired[strong[0].claim_id], weak
        if by is None:
            continue
        for claim in targets:
            if claim.claim_id in retired:
                continue  # already retired on its own
            out.append(Relation(SUPERSEDES, by.source_claim, claim.claim_id, by.source_record,
                                claim.record_id, by.confidence, SENTENCE,
                                by.evidence))
    return out


__all__ = ["Sentence", "binds", "sentence_relations", "sentences"]
