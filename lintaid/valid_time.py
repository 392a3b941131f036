"""What was true at a time: a hit as it stood on the valid-time axis.

``search --valid-at T`` asks what held in the project at T, whatever the store learned when;
``--as-of`` asks what the store believed at a time (record time). Both at once ask what the
store, knowing only what it had learned by the ``as_of`` time, held true at T: a retirement
learned later does not count.

A record holds at T from its effective time (its valid time, else its creation) until it was
wholly retired (an explicit link took effect, or its last claim was superseded) or expired.
Each of its claims holds from its effective time until the claim or link that replaced it took
effect (``Claim.valid_from``/``valid_until``); at T a claim replaced later reads current, one
replaced by T reads superseded, and the record's status follows from its claims as it does
now.
"""

from __future__ import annotations

import dataclasses

from lintaid_client import models
from lintaid_client.models import Claim, Hit

from .store.timeline import Span


def _known(until: float | None, retracted: float | None, expires: float | None,
           known_at: float | None) -> float | None:
    """``until``, unless the store learned of it only after ``known_at``: then only the
    record's own expiry ends it."""
    if known_at is not None and retracted is not None and retracted > known_at:
        return expires
    return until


def claim_until(claim: Claim, expires_at: float | None, known_at: float | None) -> float | None:
    return _known(claim.valid_until, claim.retracted_at, expires_at, known_at)


def record_until(hit: Hit, span: Span, known_at: float | None) -> float | None:
    """When the record stopped holding (None: it holds on, as far as is known)."""
    if span.retracted_at is None:  # never wholly retired: only its expiry ends it
        return hit.expires_at
    if span.explicit or not hit.claims:
        return _known(span.valid_until, span.retracted_at, hit.expires_at, known_at)
    ends = [claim_until(c, hit.expires_at, known_at) for c in hit.claims]
    if any(end is None for end in ends):
        return None
    return max(e for e in ends if e is not None)


def held(hit: Hit, span: Span, at: float, known_at: float | None = None) -> Hit | None:
    """``hit`` as it stood at valid time ``at`` (claims' and record's statuses then, marked
    historical when it no longer holds now), or None when it did not hold at ``at``."""
    if span.valid_from > at:
        return None
    until = record_until(hit, span, known_at)
    if until is not None and until <= at:
        return None
    claims = []
    for claim in hit.claims:
        end = claim_until(claim, hit.expires_at, known_at)
        if end is not None and end <= at:
            status = models.SUPERSEDED
        elif claim.status == models.SUPERSEDED:
            status = models.CURRENT  # replaced after ``at`` (or not known to be, then)
        else:
            status = claim.status
        claims.append(dataclasses.replace(claim, status=status))
    statuses = {c.status for c in claims}
    status = (models.CONFLICTED if models.CONFLICTED in statuses
              else models.PARTLY_SUPERSEDED if models.SUPERSEDED in statuses
              else models.CURRENT)
    return dataclasses.replace(hit, claims=claims, status=status,
                               historical=hit.status not in models.VISIBLE)


__all__ = ["claim_until", "held", "record_until"]
