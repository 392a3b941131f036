"""Re-ranking a search's candidates: neighbour fusion and the date boost.

Both act on ``{record id: score}`` maps of the candidates the index returned (the best
``POOL`` matches), so they cost nothing per stored record. Measured on LoCoMo
(``benchmarks/locomo.py --experiments``): a conversation's reply often shares no word with
the question while the turn before it (the question it answers) does, so a turn is credited
with ``FUSE_WEIGHT`` times its predecessor's score when that is more than its own; a query
naming a time multiplies the score of records from then by ``DATE_BOOST``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from .dates import DAY, Span

POOL: Final = 100
"""Candidates re-ranked per search (LoCoMo: the same recall as re-ranking every match)."""
FUSE_WEIGHT: Final = 0.8
DATE_BOOST: Final = 1.5
DATE_SLACK: Final = 30 * DAY
"""An event is talked about up to a month after it happened."""


def fuse_neighbours(scores: Mapping[str, float],
                    next_of: Mapping[str, str]) -> dict[str, float]:
    """Each record's score is ``max(own, FUSE_WEIGHT x its predecessor's)``; ``next_of`` maps
    a candidate to the record after it in its conversation. A successor that was no candidate
    enters with its predecessor's share."""
    out = dict(scores)
    for rid, successor in next_of.items():
        share = FUSE_WEIGHT * scores.get(rid, 0.0)
        if share > out.get(successor, 0.0):
            out[successor] = share
    return out


def boost_dates(scores: Mapping[str, float], times: Mapping[str, Iterable[float | None]],
                spans: list[Span]) -> dict[str, float]:
    """Scores of records with a time (``times``: created, valid) inside a named span (or up
    to ``DATE_SLACK`` after it) multiplied by ``DATE_BOOST``; unchanged without spans."""
    if not spans:
        return dict(scores)
    out = {}
    for rid, score in scores.items():
        inside = any(t is not None and span.holds(t, DATE_SLACK)
                     for t in times.get(rid, ()) for span in spans)
        out[rid] = score * DATE_BOOST if inside else score
    return out


def ranked(scores: Mapping[str, float], order: Mapping[str, int]) -> list[str]:
    """Best first; ties keep the index's order (``order``), then the id."""
    return sorted(scores, key=lambda r: (-scores[r], order.get(r, len(order)), r))
