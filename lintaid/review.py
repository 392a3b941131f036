"""The review queue: what waits for a person, and their decisions (held beside the derived).

The queue is derived: the relations ``policy.review.waits`` says a person should settle
(an inferred supersession below the hide threshold, a conflict), between live records of the
caller, both sides still standing. The decisions are held (``store.reviews``):

- accept: the newer statement's record explicitly supersedes the older's (a link in
  ``links``, as ``lintaid supersede`` makes), so the older record is retired whatever the
  policy infers later;
- reject: the pair is never related again: the engine reads held rejections whenever it
  relates the chain, so a restart or a full rebuild keeps it.

A rejection may later become an acceptance; an acceptance is a link, and links are never
taken back (forgetting the newer record lifts it, as for every link).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, Protocol

from lintaid_client import protocol
from lintaid_client.models import (
    ACCEPTED,
    MEMORY,
    PENDING,
    REJECTED,
    ReviewItem,
    Statement,
)

from .capture.record import normalize_user
from .policy.relations import CONFLICT, CONFLICTS_WITH, pair_id
from .policy.review import ACCEPT, REJECT, reviewable, waits
from .policy.status import CONFLICTED, SUPERSEDED
from .store.reviews import ReviewTable

_STATUS = {ACCEPT: ACCEPTED, REJECT: REJECTED}


class ReviewWrites(Protocol):
    """What a decision writes through (the memory store, on the writer thread)."""

    reviews: ReviewTable

    def set_supersedes(self, new_id: str, old_id: str, user_id: str, actor: str) -> bool: ...

    def hold_review(self, row: dict[str, Any]) -> None: ...

    def audit(self, actor: str, op: str, target: str, user_id: str, before: str | None,
              after: str | None, detail: dict[str, Any] | None = None) -> None: ...

    def mark_dirty(self, record_ids: Iterable[str]) -> None: ...


def _statement(row: dict[str, Any], side: str) -> Statement:
    def col(name: str) -> Any:
        return row[f"{side}_{name}"]

    return Statement(claim_id=col("claim_id"), record_id=col("record_id"),
                     subject=col("subject"), predicate=col("predicate"), value=col("value"),
                     evidence=col("evidence"), status=col("status"), store=MEMORY,
                     created_at=col("created_at"), source=col("source"),
                     session_id=col("session_id"))


def _item_id(row: dict[str, Any]) -> str:
    return pair_id(row["newer_scope"], row["newer_subject"], row["newer_predicate"],
                   (row["newer_record_id"], row["newer_value"]),
                   (row["older_record_id"], row["older_value"]))


def _item(row: dict[str, Any]) -> ReviewItem:
    return ReviewItem(id=_item_id(row), kind=row["kind"], confidence=row["confidence"],
                      method=row["method"], evidence=row["evidence"],
                      subject=row["newer_subject"], predicate=row["newer_predicate"],
                      newer=_statement(row, "newer"), older=_statement(row, "older"))


def _waiting(row: dict[str, Any]) -> bool:
    """A pending item: the policy left it unsettled and neither side is retired."""
    if not waits(row["kind"], row["confidence"], explicit=False):
        return False
    sides = (row["newer_status"], row["older_status"])
    if row["kind"] == CONFLICTS_WITH:
        return all(s == CONFLICTED for s in sides)  # a conflict with a retired claim is moot
    return SUPERSEDED not in sides


def queue(table: ReviewTable, user_id: str | None, limit: int) -> list[ReviewItem]:
    """Pending items of ``user_id``, newest first."""
    items = [_item(r) for r in table.pairs(normalize_user(user_id), CONFLICT) if _waiting(r)]
    held = table.decisions([i.id for i in items])
    return [i for i in items if i.id not in held][:limit]


def pending_by_record(table: ReviewTable, user_id: str | None,
                      record_ids: list[str]) -> dict[str, list[str]]:
    """For each of ``record_ids``, the ids of the pending items it takes part in."""
    rows = [r for r in table.pairs(normalize_user(user_id), CONFLICT, record_ids=record_ids)
            if _waiting(r)]
    out: dict[str, list[str]] = {}
    wanted = set(record_ids)
    for row in rows:
        item = _item_id(row)
        for side in ("newer", "older"):
            rid = row[f"{side}_record_id"]
            if rid in wanted and item not in out.setdefault(rid, []):
                out[rid].append(item)
    return out


def decide(store: ReviewWrites, item_id: str, decision: str, user_id: str | None,
           actor: str, reason: str | None) -> dict[str, Any]:
    """Writer thread: hold ``decision`` (accept or reject) on one item; audited on both
    records. Deciding the same again changes nothing (event NONE)."""
    if decision not in (ACCEPT, REJECT):
        raise protocol.BadRequest(f"decision must be {ACCEPT} or {REJECT}", arg="decision")
    user = normalize_user(user_id)
    table = store.reviews
    held = table.decisions([item_id], writer=True).get(item_id)
    if held is not None and held["user_id"] != user:
        held = None
    if held is not None:
        row = held
        if held["decision"] == decision:
            return _answer(row, decision, "NONE")
        if held["decision"] == ACCEPT:
            raise protocol.BadRequest(
                f"{item_id} was accepted: {held['newer_record']} explicitly supersedes "
                f"{held['older_record']}, and a link is never taken back (forget the newer "
                "memory, or supersede it, to change what is current)", arg="id")
        table.undo(item_id)  # rejected before, accepted now
    else:
        found = next((r for r in table.pairs(user, CONFLICT, writer=True)
                      if reviewable(r["kind"], r["confidence"], explicit=False)
                      and _item_id(r) == item_id), None)
        if found is None:
            raise protocol.NotFound(f"no review item {item_id!r} (see `lintaid review`)")
        row = {"item_id": item_id, "kind": found["kind"], "confidence": found["confidence"],
               "scope": found["newer_scope"], "subject": found["newer_subject"],
               "predicate": found["newer_predicate"],
               "newer_record": found["newer_record_id"], "newer_value": found["newer_value"],
               "older_record": found["older_record_id"], "older_value": found["older_value"]}
    newer, older = row["newer_record"], row["older_record"]
    if decision == ACCEPT:
        if newer == older:
            raise protocol.BadRequest(
                f"both statements of {item_id} are in one memory ({newer}): edit it "
                f"(`lintaid edit {newer} --text ...`) or reject the item", arg="id")
        store.set_supersedes(newer, older, user, actor)
    _hold(store, {**row, "decision": decision, "user_id": user, "actor": actor,
                  "at": time.time(), "reason": reason})
    return _answer(row, decision, decision.upper())


def hold_rejection(store: ReviewWrites, row: dict[str, Any]) -> bool:
    """Writer thread: hold a rejection made on another machine (a teammate's, pulled), as
    ``decide`` holds a local one; ``row`` has every ``DECISION_COLUMNS`` value. False when
    the item is decided here already: the same rejection again, or an acceptance (never
    taken back). The engine needs no relation between the pair to hold it: the records may
    have arrived in the same batch."""
    if store.reviews.decisions([row["item_id"]], writer=True):
        return False
    _hold(store, {**row, "decision": REJECT})
    return True


def _hold(store: ReviewWrites, row: dict[str, Any]) -> None:
    """Hold one decision, audited on both records, and mark the pair for derivation."""
    store.hold_review(row)
    newer, older = row["newer_record"], row["older_record"]
    for target, role, other in ((older, "older", newer), (newer, "newer", older)):
        if role == "newer" and newer == older:
            break
        detail = {"review": row["item_id"], "role": role, "other": other,
                  "kind": row["kind"], "subject": row["subject"],
                  "value": row[f"{role}_value"]}
        if row["reason"]:
            detail["reason"] = row["reason"]
        store.audit(row["actor"], row["decision"], target, row["user_id"], None, None, detail)
    store.mark_dirty([newer, older])


def _answer(row: dict[str, Any], decision: str, event: str) -> dict[str, Any]:
    return {"id": row["item_id"], "event": event, "status": _STATUS[decision],
            "newer_id": row["newer_record"], "older_id": row["older_record"]}


__all__ = ["PENDING", "ReviewWrites", "decide", "hold_rejection", "pending_by_record", "queue"]
