"""The review queue's rules: which relations wait for a person, and what a person may settle.

Pure. An item is a pair of statements on one chain that the policy related without settling
it: an inferred supersession too weak to hide the older statement (``CONFLICT`` <= confidence
< ``HIDE``) or a conflict (``conflicts_with`` at or above ``CONFLICT``), while neither side is
superseded by something else. A person accepts it (the newer statement wins: an explicit link)
or rejects it (the pair is never related again: ``relations.relate_chain`` skips it). The
item's id (``relations.pair_id``) derives from the chain and the two sides' records and
values, so the same pair has the same id after any rebuild, and a held rejection keeps
matching it; an edit that changes either value makes a new pair.
"""

from __future__ import annotations

from lintaid_client.models import ACCEPT, DECISIONS, REJECT

from .relations import CONFLICT, CONFLICTS_WITH, HIDE, SUPERSEDES, pair_id


def reviewable(kind: str, confidence: float, explicit: bool) -> bool:
    """Whether a person may settle a relation of this kind and confidence: an inferred
    supersession or conflict (an explicit link is a decision already)."""
    if explicit or confidence < CONFLICT:
        return False
    return kind in (SUPERSEDES, CONFLICTS_WITH)


def waits(kind: str, confidence: float, explicit: bool) -> bool:
    """Whether such a relation waits in the queue: a reviewable one the policy did not settle
    by itself (a supersession below the hide threshold, or any conflict)."""
    if not reviewable(kind, confidence, explicit):
        return False
    return kind == CONFLICTS_WITH or confidence < HIDE


__all__ = ["ACCEPT", "DECISIONS", "REJECT", "pair_id", "reviewable", "waits"]
