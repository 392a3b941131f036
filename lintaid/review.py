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

A pair may join a memory and a decision document (a project file whose claims take part in
memory's chains): the document's end is read from the workspace (``Documents``). Rejecting
it works as between memories. Accepting it when the memory is the newer statement settles
the pair the only way memory may, since memory never writes a document's state: the two are
never related again, so the memory's statement stands unmarked, and the answer says which
file still says otherwise (``document``). When the document is the newer statement (equal
times: a newer document supersedes an older memory by itself), accepting is refused with
what to do instead.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable
from typing import Any, Protocol

from lintaid_client import protocol
from lintaid_client.models import (
    ACCEPTED,
    MEMORY,
    PENDING,
    REJECTED,
    WORKSPACE,
    ReviewItem,
    Statement,
)

from .capture.record import normalize_user
from .policy.relations import CONFLICT, CONFLICTS_WITH, SUPERSEDES, pair_id
from .policy.review import ACCEPT, REJECT, reviewable, waits
from .policy.status import CONFLICTED, SUPERSEDED
from .store.reviews import ReviewTable

_STATUS = {ACCEPT: ACCEPTED, REJECT: REJECTED}


class ReviewWrites(Protocol):
    """What a decision writes through (the memory store, on the writer thread)."""

    reviews: ReviewTable

    def set_supersedes(self, new_id: str, old_id: str, user_id: str, actor: str) -> bool: ...

    def audit(self, actor: str, op: str, target: str, user_id: str, before: str | None,
              after: str | None, detail: dict[str, Any] | None = None) -> None: ...

    def hold_review(self, row: dict[str, Any], documents: Collection[str] = ()) -> None: ...

    def mark_dirty(self, record_ids: Iterable[str]) -> None: ...


class Documents(Protocol):
    """The workspace as the queue reads it: decision documents' claims by id (state rows,
    ``c_*`` columns and ``status``)."""

    def claims_by_id(self, claim_ids: Collection[str]) -> list[dict[str, Any]]: ...


def _statement(row: dict[str, Any], side: str) -> Statement:
    def col(name: str) -> Any:
        return row.get(f"{side}_{name}")

    return Statement(claim_id=col("claim_id"), record_id=col("record_id"),
                     subject=col("subject"), predicate=col("predicate"), value=col("value"),
                     evidence=col("evidence"), status=col("status"), store=col("store") or MEMORY,
                     created_at=col("created_at"), source=col("source"),
                     session_id=col("session_id"), path=col("path"), line=col("line"))


def _chain(row: dict[str, Any]) -> tuple[str, str, str]:
    """The pair's chain key: its memory end's claim's (a document's claim sits on memory's
    chain by that key; the relation's ``chain`` also names sentence groups)."""
    side = "older" if row["newer_external"] else "newer"
    return row[f"{side}_scope"], row[f"{side}_subject"], row[f"{side}_predicate"]


def _item_id(row: dict[str, Any]) -> str:
    return pair_id(*_chain(row), (row["newer_record_id"], row["newer_value"]),
                   (row["older_record_id"], row["older_value"]))


def _item(row: dict[str, Any]) -> ReviewItem:
    _scope, subject, predicate = _chain(row)
    return ReviewItem(id=_item_id(row), kind=row["kind"], confidence=row["confidence"],
                      method=row["method"], evidence=row["evidence"],
                      subject=subject, predicate=predicate,
                      newer=_statement(row, "newer"), older=_statement(row, "older"))


def _completed(rows: list[dict[str, Any]],
               documents: Documents | None) -> list[dict[str, Any]]:
    """The rows with each document end read from the workspace (value, evidence, its file's
    time, path and line); a row whose document is not read (no workspace) or no longer holds
    that claim is left out."""
    wanted = {row[f"{side}_claim_id"] for row in rows for side in ("newer", "older")
              if row[f"{side}_external"]}
    if not wanted:
        return rows
    found = {d["c_claim_id"]: d for d in documents.claims_by_id(wanted)} if documents else {}
    out = []
    for row in rows:
        for side in ("newer", "older"):
            if not row[f"{side}_external"]:
                continue
            doc = found.get(row[f"{side}_claim_id"])
            if doc is None:
                break
            row = {**row, **{f"{side}_{name}": doc[f"c_{name}"]
                             for name in ("subject", "predicate", "value", "evidence",
                                          "created_at", "source", "path", "line")},
                   f"{side}_store": WORKSPACE, f"{side}_document_status": doc["status"]}
        else:
            out.append(row)
    return out


def _over_document(row: dict[str, Any]) -> bool:
    """A memory's supersession of a decision document, however sure ("Signature max age is
    now 600 seconds" against the file's 300): memory never marks a document, so the file's
    statement still stands as a current decision beside the memory's, and only a person
    settles it."""
    return (row["kind"] == SUPERSEDES and bool(row["older_external"])
            and not row["newer_external"])


def _waiting(row: dict[str, Any]) -> bool:
    """A pending item: the policy left it unsettled and neither side is retired. A document's
    end stands while the workspace has not retired it (memory never marks a document)."""
    if not (waits(row["kind"], row["confidence"], explicit=False)
            or (_over_document(row)
                and reviewable(row["kind"], row["confidence"], explicit=False))):
        return False
    if any(row.get(f"{side}_document_status") == SUPERSEDED for side in ("newer", "older")):
        return False
    sides = [row[f"{side}_status"] for side in ("newer", "older") if not row[f"{side}_external"]]
    if row["kind"] == CONFLICTS_WITH:
        return all(s == CONFLICTED for s in sides)  # a conflict with a retired claim is moot
    return SUPERSEDED not in sides


def _pairs(table: ReviewTable, user: str, documents: Documents | None, *,
           record_ids: list[str] | None = None, writer: bool = False) -> list[dict[str, Any]]:
    return _completed(table.pairs(user, CONFLICT, record_ids=record_ids, writer=writer),
                      documents)


def queue(table: ReviewTable, user_id: str | None, limit: int,
          documents: Documents | None = None) -> list[ReviewItem]:
    """Pending items of ``user_id``, newest first: between memories, and between a memory and
    a decision document of the workspace (``documents``, when the daemon reads one)."""
    items = [_item(r) for r in _pairs(table, normalize_user(user_id), documents)
             if _waiting(r)]
    held = table.decisions([i.id for i in items])
    return [i for i in items if i.id not in held][:limit]


def document_conflicts(table: ReviewTable, user_id: str | None,
                       documents: Documents) -> list[ReviewItem]:
    """Conflicts between a memory and a decision document still standing (pending), newest
    first: the project's state lists them with the other unresolved conflicts."""
    return [_item(r) for r in _pairs(table, normalize_user(user_id), documents)
            if r["kind"] == CONFLICTS_WITH and (r["newer_external"] or r["older_external"])
            and _waiting(r)]


def pending_by_record(table: ReviewTable, user_id: str | None, record_ids: list[str],
                      documents: Documents | None = None) -> dict[str, list[str]]:
    """For each of ``record_ids``, the ids of the pending items it takes part in."""
    rows = [r for r in _pairs(table, normalize_user(user_id), documents, record_ids=record_ids)
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
           actor: str, reason: str | None,
           documents: Documents | None = None) -> dict[str, Any]:
    """Writer thread: hold ``decision`` (accept or reject) on one item; audited on its
    memory records. Deciding the same again changes nothing (event NONE)."""
    if decision not in (ACCEPT, REJECT):
        raise protocol.BadRequest(f"decision must be {ACCEPT} or {REJECT}", arg="decision")
    user = normalize_user(user_id)
    table = store.reviews
    held = table.decisions([item_id], writer=True).get(item_id)
    if held is not None and held["user_id"] != user:
        held = None
    if held is not None:
        row = held
        files = {row["newer_record"], row["older_record"]} - table.records_here(
            [row["newer_record"], row["older_record"]])
        if held["decision"] == decision:
            return _answer(row, decision, "NONE", files)
        if held["decision"] == ACCEPT:
            raise protocol.BadRequest(
                f"{item_id} was accepted: {held['newer_record']} explicitly supersedes "
                f"{held['older_record']}, and a link is never taken back (forget the newer "
                "memory, or supersede it, to change what is current)", arg="id")
        table.undo(item_id)  # rejected before, accepted now
    else:
        found = next((r for r in _pairs(table, user, documents, writer=True)
                      if reviewable(r["kind"], r["confidence"], explicit=False)
                      and _item_id(r) == item_id), None)
        if found is None:
            raise protocol.NotFound(f"no review item {item_id!r} (see `lintaid review`)")
        scope, subject, predicate = _chain(found)
        row = {"item_id": item_id, "kind": found["kind"], "confidence": found["confidence"],
               "scope": scope, "subject": subject, "predicate": predicate,
               "newer_record": found["newer_record_id"], "newer_value": found["newer_value"],
               "older_record": found["older_record_id"], "older_value": found["older_value"]}
        files = {found[f"{side}_record_id"] for side in ("newer", "older")
                 if found[f"{side}_external"]}
    newer, older = row["newer_record"], row["older_record"]
    if decision == ACCEPT:
        if newer == older:
            raise protocol.BadRequest(
                f"both statements of {item_id} are in one memory ({newer}): edit it "
                f"(`lintaid edit {newer} --text ...`) or reject the item", arg="id")
        if newer in files:
            raise protocol.BadRequest(
                f"the newer statement of {item_id} is {newer}'s, and memory never retires "
                f"itself on a file's word: correct the memory (`lintaid edit {older} --text "
                f"...`), forget it, or reject the item", arg="id")
        if older not in files:  # between memories: the newer one supersedes, explicitly
            store.set_supersedes(newer, older, user, actor)
    _hold(store, {**row, "decision": decision, "user_id": user, "actor": actor,
                  "at": time.time(), "reason": reason}, files)
    return _answer(row, decision, decision.upper(), files)


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


def _hold(store: ReviewWrites, row: dict[str, Any], files: Collection[str] = ()) -> None:
    """Hold one decision, audited on its memory records (``files``: the ends that are
    decision documents), and mark the pair for derivation."""
    store.hold_review(row, documents=files)
    newer, older = row["newer_record"], row["older_record"]
    for target, role, other in ((older, "older", newer), (newer, "newer", older)):
        if role == "newer" and newer == older:
            break
        if target in files:
            continue
        detail = {"review": row["item_id"], "role": role, "other": other,
                  "kind": row["kind"], "subject": row["subject"],
                  "value": row[f"{role}_value"]}
        if row["reason"]:
            detail["reason"] = row["reason"]
        store.audit(row["actor"], row["decision"], target, row["user_id"], None, None, detail)
    store.mark_dirty([rid for rid in (newer, older) if rid not in files])


def _answer(row: dict[str, Any], decision: str, event: str,
            files: Collection[str] = ()) -> dict[str, Any]:
    out = {"id": row["item_id"], "event": event, "status": _STATUS[decision],
           "newer_id": row["newer_record"], "older_id": row["older_record"]}
    if decision == ACCEPT and row["older_record"] in files:
        out["document"] = (f"{row['older_record']} still says {row['older_value']!r}: edit "
                           f"it to agree (lintaid never writes project files)")
    return out


__all__ = ["PENDING", "Documents", "ReviewWrites", "decide", "document_conflicts",
           "hold_rejection", "pending_by_record", "queue"]
