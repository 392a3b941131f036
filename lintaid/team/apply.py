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

import structlog

from lintaid import review
from lintaid.capture.record import LOCAL_USER, NewRecord
from lintaid.policy.relations import pair_id
from lintaid.store.memory import MemoryStore, StoreError
from lintaid.store.outbox import EXPIRE, FORGET, LINK, RECORD, REJECT, RESTORE
from lintaid_client import models
from lintaid_client.redact import redact

from .pg import Event, event_id

log = structlog.get_logger("lintaid.team")

SHARED_KINDS: Final = frozenset({models.CAPTURE, models.NOTE})
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
    skipped: int = 0  # already held, or naming a record this store does not show
    refused: int = 0  # malformed, or refused by the store (logged)


def apply(store: MemoryStore, events: Iterable[Event], cursor_key: str, cursor: int) -> Applied:
    """Writer thread: apply pulled events, each in its own savepoint, and move the cursor in
    the same transaction (so each is applied exactly once)."""
    done = Applied()
    with store.outbox.quiet():
        for ev in events:
            try:
                with store.savepoint():
                    changed = _apply_one(store, ev)
            except (StoreError, ValueError, TypeError, KeyError) as err:
                code = getattr(err, "code", None)
                if code == "not_found":
                    done.skipped += 1
                    continue
                done.refused += 1
                log.warning("team_event_refused", event_id=ev.event_id, kind=ev.kind,
                            member=ev.member, reason=str(err)[:200])
                continue
            if changed:
                done.applied += 1
            else:
                done.skipped += 1
        store.outbox.set_state(cursor_key, str(cursor))
    return done


def _actor(ev: Event) -> str:
    return f"team:{ev.member}"


def _apply_one(store: MemoryStore, ev: Event) -> bool:
    body = ev.body
    if ev.kind == RECORD:
        rec = _record(ev)
        _rid, what = store.put(rec, _actor(ev))
        return what == "ADD"
    if ev.kind == LINK:
        if not ev.other_id:
            raise ValueError("a link names no newer record")
        return store.set_supersedes(ev.other_id, ev.record_id, LOCAL_USER, _actor(ev))
    if ev.kind == FORGET:
        reason = body.get("reason")
        store.forget(ev.record_id, LOCAL_USER, reason if isinstance(reason, str) else None,
                     _actor(ev))
        return True
    if ev.kind == EXPIRE:
        at = body.get("at")
        if isinstance(at, bool) or not isinstance(at, (int, float)):
            raise ValueError("an expiry without a time")
        store.expire(ev.record_id, LOCAL_USER, float(at), _actor(ev))
        return True
    if ev.kind == RESTORE:
        return store.restore(ev.record_id, LOCAL_USER, _reason(body), _actor(ev),
                             if_forgotten=True)
    if ev.kind == REJECT:
        return review.hold_rejection(store, _rejection(ev))
    raise ValueError(f"unknown event kind {ev.kind!r}")


def _reason(body: Mapping[str, Any]) -> str | None:
    reason = body.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise ValueError("a reason that is not text")
    return redact(reason) if reason else None


def _rejection(ev: Event) -> dict[str, Any]:
    """The held decision a pulled rejection carries, checked: it must name the pair of the
    two records it is sent about, by the id every machine derives for that pair."""
    body = ev.body
    if not ev.other_id or ev.other_id == ev.record_id:
        raise ValueError("a rejection names no second record")
    text = {name: _text(body.get(name), name) for name in
            ("item_id", "kind", "scope", "subject", "predicate", "newer_value", "older_value")}
    missing = sorted(name for name, value in text.items() if not value)
    if missing:
        raise ValueError(f"a rejection without {', '.join(missing)}")
    confidence = body.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        raise ValueError("a rejection without a confidence")
    derived = pair_id(str(text["scope"]), str(text["subject"]), str(text["predicate"]),
                      (ev.other_id, str(text["newer_value"])),
                      (ev.record_id, str(text["older_value"])))
    if derived != text["item_id"]:
        raise ValueError(f"a rejection's item id {text['item_id']!r} does not name its pair")
    return {**text, "confidence": float(confidence), "newer_record": ev.other_id,
            "older_record": ev.record_id, "user_id": LOCAL_USER, "actor": _actor(ev),
            "at": ev.stamp, "reason": _reason(body)}


def _record(ev: Event) -> NewRecord:
    """The record a pulled event carries, checked field by field and redacted again (a
    teammate's older lintaid may have missed a secret this one knows)."""
    body = ev.body
    content, kind = body.get("content"), body.get("kind")
    if not isinstance(content, str) or not content.strip():
        raise ValueError("a record without text")
    if kind not in SHARED_KINDS:
        raise ValueError(f"a record of kind {kind!r} is never shared")
    text = {name: _text(body.get(name), name) for name in _TEXT_FIELDS}
    paths, tools = body.get("paths") or [], body.get("tools") or []
    hashes = body.get("file_hashes") or {}
    if not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)
            and isinstance(tools, list) and all(isinstance(t, str) for t in tools)
            and isinstance(hashes, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in hashes.items())):
        raise ValueError("paths, tools or file hashes of the wrong shape")
    return NewRecord(
        content=redact(content), kind=kind, source=text["source"] or "team",
        user_id=LOCAL_USER, provider=text["provider"], session_id=text["session_id"],
        event=text["event"], doc_type=text["doc_type"], branch=text["branch"],
        revision=text["revision"], paths=paths, tools=tools, file_hashes=hashes,
        created_at=ev.stamp, valid_at=_time(body.get("valid_at")),
        expires_at=_time(body.get("expires_at")), explicit_id=ev.record_id,
        turn_id=text["turn_id"], request_hash=text["request_hash"],
        member=ev.member or "unknown", machine=ev.machine or None,
    )


def _text(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} is not text")
    return value


def _time(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("a time that is not a number")
    return float(value)
