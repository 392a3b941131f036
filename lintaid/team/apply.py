"""Events between the store and the server: outbox rows out (``outgoing``), pulled events in
(``apply``, a writer job).

A pulled record enters the store as any record does (``put``: a tombstone keeps it forgotten,
the id it had keeps it one record), with its author's stamp as its ``created_at`` (so "newer"
is the hybrid-logical-clock order, never the order of arrival) and its provenance: member,
machine, branch, revision. A pulled decision is carried out by the store's own operations
(forget, supersede, expire, restore, and a review rejection held as ``review.decide`` holds
one) under the teammate's name in the audit log. Neither is noted in
the outbox again. The policy then runs over the batch as over any other.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from lintaid import review
from lintaid.capture.record import LOCAL_USER, NewRecord
from lintaid.logs import get_logger
from lintaid.ops import error_code
from lintaid.policy.relations import pair_id
from lintaid.store.memory import MemoryStore, StoreError, transient
from lintaid.store.outbox import EXPIRE, FORGET, LINK, RECORD, REJECT, RESTORE
from lintaid_client import protocol
from lintaid_client.redact import redact

from .events import Refused, decode, excerpt
from .pg import Event, Row, event_id

log = get_logger("lintaid.team")

_TEXT_FIELDS: Final = ("source", "provider", "session_id", "event", "doc_type", "branch",
                       "revision", "turn_id", "request_hash")


@dataclass
class Outgoing:
    """What one pass over the outbox sends, and the last outbox row it covers."""

    events: list[Event] = field(default_factory=list)
    through: int = 0
    withheld: int = 0  # rows naming a record that was forgotten before it could be sent


def outgoing(rows: Iterable[Mapping[str, Any]], origin: str) -> Outgoing:
    out = Outgoing()
    for row in rows:
        out.through = max(out.through, int(row["seq"]))
        kind, target, other = row["kind"], row["target"], row["other"]
        if kind == RECORD:
            rec = row["record"]
            if rec is None or rec["forgotten_at"] is not None:
                out.withheld += 1  # forgotten before it left: its text reaches no one
                continue
            body: dict[str, Any] = {
                "content": rec["content"], "kind": rec["kind"],
                "paths": _loads(rec["paths"], []), "tools": _loads(rec["tools"], []),
                "file_hashes": _loads(rec["file_hashes"], {}),
                "valid_at": rec["valid_at"], "expires_at": rec["expires_at"],
                **{name: rec[name] for name in _TEXT_FIELDS},
            }
        elif kind in (FORGET, RESTORE, REJECT):
            body = dict(row["detail"])
            reason = body.pop("reason", None)
            if isinstance(reason, str):
                body["reason"] = redact(reason)
        else:
            body = dict(row["detail"])
        out.events.append(Event(event_id=event_id(kind, target, other, row["stamp"], origin),
                                kind=kind, record_id=target, other_id=other,
                                stamp=float(row["stamp"]), body=body))
    return out


def _loads(text: Any, default: Any) -> Any:
    try:
        value = json.loads(text) if isinstance(text, str) else default
    except ValueError:
        return default
    return value if isinstance(value, type(default)) else default


@dataclass
class Applied:
    applied: int = 0
    skipped: int = 0  # already held, or naming a record this store does not hold
    refused: int = 0  # quarantined: malformed, out of range, never shared, refused by the store


_NAMES: Final = {LINK: ("record_id", "other_id"), FORGET: ("record_id",),
                 EXPIRE: ("record_id",), RESTORE: ("record_id",),
                 REJECT: ("record_id", "other_id")}
"""The records each kind of decision names: every one must be a record the team shares."""


def apply(store: MemoryStore, rows: Iterable[Row], cursor_key: str, cursor: int) -> Applied:
    """Writer thread: apply pulled rows, each decoded, checked and applied in its own
    savepoint; refuse one alone into the quarantine; move the cursor in the same transaction
    (so each is applied exactly once, and a refused one never holds the rest back). Only a
    failure that may pass (a full disk) fails the batch, which is then pulled again."""
    done = Applied()
    with store.outbox.quiet():
        for row in rows:
            try:
                with store.savepoint():
                    changed = _apply_one(store, decode(row))
            except Exception as err:
                code, message, _arg = error_code(err)
                if code == protocol.NOT_FOUND:
                    done.skipped += 1
                    continue
                if transient(err):
                    raise  # the disk, not the event: the batch is tried again
                done.refused += 1
                reason = str(err) if isinstance(err, Refused) else (
                    message if isinstance(err, StoreError) else f"{code}: {message}")
                _quarantine(store, row, reason)
                continue
            if changed:
                done.applied += 1
            else:
                done.skipped += 1
        store.outbox.set_state(cursor_key, str(cursor))
    return done


def _quarantine(store: MemoryStore, row: Row, reason: str) -> None:
    store.outbox.quarantine(row.seq, event_id=row.event_id, kind=row.kind, member=row.member,
                            reason=reason, excerpt=excerpt(row))
    log.warning("team_event_refused", seq=row.seq, event_id=str(row.event_id)[:200],
                kind=str(row.kind)[:40], member=str(row.member)[:200], reason=reason[:300])


def _actor(ev: Event) -> str:
    return f"team:{ev.member}"


def _require_shared(store: MemoryStore, ev: Event) -> None:
    """A teammate's decision applies only to records the team shares: one this store does
    not hold is skipped (``not_found``), one it keeps to itself is refused."""
    for name in _NAMES.get(ev.kind, ()):
        rid = getattr(ev, name)
        row = store.sharing_row(rid)
        if row is None:
            raise StoreError(protocol.NOT_FOUND, f"no memory {rid!r}")
        if not store.outbox.sharable(row):
            raise Refused(f"names a record that was never shared ({name})")


def _apply_one(store: MemoryStore, ev: Event) -> bool:
    body = ev.body
    _require_shared(store, ev)
    if ev.kind == RECORD:
        _rid, what = store.put(_record(ev), _actor(ev))
        return what == "ADD"
    if ev.kind == LINK:
        assert ev.other_id is not None  # decode refuses a link without one
        return store.set_supersedes(ev.other_id, ev.record_id, LOCAL_USER, _actor(ev))
    if ev.kind == FORGET:
        store.forget(ev.record_id, LOCAL_USER, body.get("reason"), _actor(ev))
        return True
    if ev.kind == EXPIRE:
        store.expire(ev.record_id, LOCAL_USER, float(body["at"]), _actor(ev))
        return True
    if ev.kind == RESTORE:
        return store.restore(ev.record_id, LOCAL_USER, body.get("reason"), _actor(ev),
                             if_forgotten=True)
    if ev.kind == REJECT:
        return review.hold_rejection(store, _rejection(ev))
    raise Refused(f"unknown event kind {ev.kind!r}")


def _rejection(ev: Event) -> dict[str, Any]:
    """The held decision a pulled rejection carries (checked by ``decode``): it must name the
    pair of the two records it is sent about, by the id every machine derives for that pair."""
    body = ev.body
    assert ev.other_id is not None
    if ev.other_id == ev.record_id:
        raise Refused("a rejection names one record twice")
    text = {name: str(body[name]) for name in
            ("item_id", "kind", "scope", "subject", "predicate", "newer_value", "older_value")}
    derived = pair_id(text["scope"], text["subject"], text["predicate"],
                      (ev.other_id, text["newer_value"]), (ev.record_id, text["older_value"]))
    if derived != text["item_id"]:
        raise Refused(f"a rejection's item id {text['item_id'][:80]!r} does not name its pair")
    return {**text, "confidence": float(body["confidence"]), "newer_record": ev.other_id,
            "older_record": ev.record_id, "user_id": LOCAL_USER, "actor": _actor(ev),
            "at": ev.stamp, "reason": body.get("reason")}


def _record(ev: Event) -> NewRecord:
    """The record a pulled (and checked) event carries; the store redacts it again (a
    teammate's older lintaid may have missed a secret this one knows)."""
    body = ev.body
    return NewRecord(
        content=body["content"], kind=body["kind"], source=body.get("source") or "team",
        user_id=LOCAL_USER, provider=body.get("provider"), session_id=body.get("session_id"),
        event=body.get("event"), doc_type=body.get("doc_type"), branch=body.get("branch"),
        revision=body.get("revision"), paths=list(body.get("paths") or []),
        tools=list(body.get("tools") or []), file_hashes=dict(body.get("file_hashes") or {}),
        created_at=ev.stamp, valid_at=body.get("valid_at"), expires_at=body.get("expires_at"),
        explicit_id=ev.record_id, turn_id=body.get("turn_id"),
        request_hash=body.get("request_hash"), member=ev.member, machine=ev.machine or None,
    )
