"""Values retired elsewhere: an older record that states a value a later change retired.

The policy relates claims two at a time, so a supersession retires the claims it was drawn
between. The same value is often stated in other records too, in words no relation reaches:
"make migrate-new → Atlas diffs and writes the versioned file" beside "replace goose with
Atlas", when a later turn went "back to goose". Read as it is stored, that sentence reaches
the agent as current, and the retired value with it.

So at read time a value carries its retirement across records: a believed claim whose record
was written before a retirement of its value (the same value, value type and scope) is read
as retired with it, and named in the entry's note with what replaced it. Not when:

- the value was stated again after that retirement by a claim still believed, other than in
  the retiring record or beside the replacing value ("we tried Sentry, back to Crashlytics"
  names Sentry beside Crashlytics): it came back, or it is a second thing of the same name;
- the two claims' subjects share no word, counting the subject of the claim that retired
  it ("20" of a pool is not "20" workers; "Atlas" of a "versioned workflow" is the Atlas
  of "writes the versioned file");
- the claim's own statement states the replacing value too (it is the transition itself).

Pure: the store hands in the rows (``MemoryStore.retired_values``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from lintaid.policy import topics
from lintaid_client.models import CONFLICTED, CURRENT, SUPERSEDED, Claim

from .passages import MIN_RETIRED_TEXT, states

REMOVED: Final = "-"
"""The value of a claim that removes something (``policy.relations.REMOVED``)."""


@dataclass(frozen=True)
class Retirement:
    """A value a claim of ``by_record`` retired at ``at``, and what replaced it."""

    value: str
    predicate: str
    about: frozenset[str]  # the words of what the value was of, on either side
    scope: str
    at: float
    by_record: str
    by_claim: str
    new_value: str | None


def retirements(retired: Sequence[Mapping[str, Any]],
                holders: Sequence[Mapping[str, Any]]) -> dict[str, list[Retirement]]:
    """The retirements that still hold, by value: from ``retired`` (``state.retired_values``
    rows), those no believed claim in ``holders`` (``state.value_holders`` rows) restated
    after them."""
    by_value: dict[str, list[Mapping[str, Any]]] = {}
    for h in holders:
        by_value.setdefault(_norm(h["c_value"]), []).append(h)
    out: dict[str, list[Retirement]] = {}
    for row in retired:
        value = _norm(row["o_value"])
        new = _norm(row["n_value"] or "")
        if not value or value == REMOVED or value == new:
            continue  # a newer statement of the same value retires no value
        about = frozenset(topics.words(f"{row['o_subject'] or ''} {row['n_subject'] or ''}"))
        r = Retirement(value, row["o_predicate"], about, row["o_scope"],
                       float(row["new_created_at"] or 0.0), row["n_record_id"],
                       row["n_claim_id"], None if new in ("", REMOVED) else row["n_value"])
        if any(_restates_after(h, r) for h in by_value.get(value, ())):
            continue
        out.setdefault(value, []).append(r)
    return out


def apply(claims: Sequence[Claim], *, record_id: str, created_at: float | None,
          table: Mapping[str, Sequence[Retirement]]) -> list[Claim]:
    """``claims`` (of one record written at ``created_at``), each believed one whose value a
    later retirement in ``table`` retired read as superseded by it (the newest such)."""
    out: list[Claim] = []
    for claim in claims:
        found = None
        if claim.status in (CURRENT, CONFLICTED):
            found = retiring(table, claim.value, predicate=claim.predicate,
                             subject=claim.subject, scope=claim.scope,
                             evidence=claim.evidence, record_id=record_id,
                             created_at=created_at)
        out.append(claim if found is None else replace(
            claim, status=SUPERSEDED, superseded_by=found.by_record,
            superseded_by_claim=found.by_claim, replaced_by_value=found.new_value))
    return out


def retiring(table: Mapping[str, Sequence[Retirement]], value: str, *, predicate: str,
             subject: str, scope: str, evidence: str, record_id: str,
             created_at: float | None) -> Retirement | None:
    """The newest retirement in ``table`` of a believed claim stating ``value`` (of that
    type, subject and scope, on ``evidence``) in a record written at ``created_at``: one
    after it, by another record, in the same slot, and not named on the same evidence as
    its replacing value. None when it still holds."""
    if created_at is None:
        return None
    found = None
    for r in table.get(_norm(value), ()):
        if (r.at > created_at and r.by_record != record_id
                and _same_slot(predicate, subject, scope, r)
                and not (r.new_value and states(evidence, r.new_value))
                and (found is None or r.at > found.at)):
            found = r
    return found


def _restates_after(holder: Mapping[str, Any], r: Retirement) -> bool:
    if float(holder["c_created_at"] or 0.0) <= r.at or holder["c_record_id"] == r.by_record:
        return False
    if r.new_value and states(holder["c_evidence"] or "", r.new_value):
        return False
    return _same_slot(holder["c_predicate"], holder["c_subject"] or "", holder["c_scope"], r)


def _same_slot(predicate: str, subject: str, scope: str, r: Retirement) -> bool:
    """The same type of value, of the same scope, and of the same thing: the two subjects
    share a word (a retirement drawn wrongly, "Tom" of an alert rule replaced by "Sentry",
    must not take every other sentence naming Tom with it)."""
    if predicate != r.predicate or scope != r.scope:
        return False
    shared = r.about & set(topics.words(subject))
    if len(r.value) >= MIN_RETIRED_TEXT and not re.fullmatch(r"[\d.,%]+", r.value):
        return bool(shared)  # a name, a path, a URL: any word of what it was of
    return bool(shared - topics.GENERIC)  # a number recurs by chance: a word that tells


def _norm(value: str) -> str:
    return value.strip().lower()
