"""A pulled row is untrusted input: ``decode`` checks it as the daemon checks a local write.

Whoever holds a member's credentials can write any row into the team's table (the server only
vouches for its ``member``), so nothing of a pulled row reaches the store, an index or a
formatter before it is checked here, inside the per-event guard of ``apply``: every column
and every body field by the same declarations as the local ops (``lintaid_client.ops``: the
types, the 256 KiB of a record's text, the 2,000 bytes of a reason, times within 1970-9999,
finite), the body decoded from text with its nesting bounded. A row that fails is refused
alone, with a reason a person can read (``Refused``), and quarantined by the caller; the
cursor moves past it either way.
"""

from __future__ import annotations

import json
from typing import Any, Final

from lintaid.store.outbox import (
    EXPIRE,
    FORGET,
    KINDS,
    LINK,
    RECORD,
    REJECT,
    RESTORE,
    SHARED_KINDS,
)
from lintaid_client import protocol
from lintaid_client.ops import (
    LIST,
    MAP,
    MAX_CONTENT_BYTES,
    MAX_ID_BYTES,
    MAX_META_DEPTH,
    MAX_PATH_BYTES,
    STR,
    TEXT,
    TIME,
    Arg,
    check,
)
from lintaid_client.redact import redact

from .pg import MAX_BODY_BYTES, Event, Row

MAX_NAME_BYTES: Final = 200  # a member's or a machine's name, as ``ops.ACTOR``
MAX_LIST_ITEMS: Final = 1000  # paths and tools of one record


class Refused(Exception):
    """A pulled row that is not a valid event; the message says why, for a person."""


# -- the declarations: the local ops' own limits --------------------------------------------
_ROW: Final = {
    "event_id": Arg("event_id", STR, required=True, max_bytes=MAX_ID_BYTES),
    "record_id": Arg("record_id", STR, required=True, max_bytes=MAX_ID_BYTES),
    "other_id": Arg("other_id", STR, max_bytes=MAX_ID_BYTES),
    "member": Arg("member", STR, required=True, max_bytes=MAX_NAME_BYTES),
    "machine": Arg("machine", STR, max_bytes=MAX_NAME_BYTES),
    "stamp": Arg("stamp", TIME, required=True),
}
_TEXT_FIELDS: Final = ("source", "provider", "session_id", "event", "doc_type", "branch",
                       "revision", "turn_id", "request_hash")
_REASON: Final = Arg("reason", STR, max_bytes=2000)  # as the forget and restore ops
_BODIES: Final[dict[str, dict[str, Arg]]] = {
    RECORD: {
        "content": Arg("content", TEXT, required=True, max_bytes=MAX_CONTENT_BYTES),
        "kind": Arg("kind", STR, required=True, max_bytes=16),
        **{name: Arg(name, STR, max_bytes=MAX_PATH_BYTES) for name in _TEXT_FIELDS},
        "paths": Arg("paths", LIST, lo=0, hi=MAX_LIST_ITEMS),
        "tools": Arg("tools", LIST, lo=0, hi=MAX_LIST_ITEMS),
        "file_hashes": Arg("file_hashes", MAP),
        "valid_at": Arg("valid_at", TIME),
        "expires_at": Arg("expires_at", TIME),
    },
    LINK: {},
    FORGET: {"reason": _REASON},
    RESTORE: {"reason": _REASON},
    EXPIRE: {"at": Arg("at", TIME, required=True)},
    REJECT: {
        **{name: Arg(name, STR, required=True, max_bytes=MAX_PATH_BYTES) for name in
           ("item_id", "kind", "scope", "subject", "predicate", "newer_value", "older_value")},
        "reason": _REASON,
    },
}
_NEEDS_OTHER: Final = frozenset({LINK, REJECT})


def _checked(arg: Arg, value: Any) -> Any:
    if value is None:
        if arg.required:
            raise Refused(f"'{arg.name}' is missing")
        return None
    try:
        return check(arg, value)
    except protocol.RemoteError as err:
        raise Refused(err.message) from None


def _strings(arg: Arg, value: Any, limit: int) -> None:
    for item in value:
        if not isinstance(item, str) or len(item.encode("utf-8", "surrogatepass")) > limit:
            raise Refused(f"'{arg.name}' must hold strings of at most {limit} bytes")


def decode_body(row: Row) -> dict[str, Any]:
    """The row's body as a map, decoded with its size and nesting bounded."""
    if row.body is None:
        raise Refused(f"the body is {row.body_bytes} bytes of JSON, over the "
                      f"{MAX_BODY_BYTES} a pulled event may hold")
    try:
        value = json.loads(row.body)
    except RecursionError:
        raise Refused(f"the body nests deeper than {MAX_META_DEPTH} levels") from None
    except ValueError as err:
        raise Refused(f"the body is not JSON ({err})") from None
    if not isinstance(value, dict):
        raise Refused(f"the body is a JSON {type(value).__name__}, not a map")
    try:
        protocol.check_depth(value, MAX_META_DEPTH + 2)
    except (protocol.RemoteError, ValueError):
        raise Refused(f"the body nests deeper than {MAX_META_DEPTH} levels") from None
    return value


def decode(row: Row) -> Event:
    """The event a pulled row carries, every field checked; ``Refused`` for anything a local
    write could not have been."""
    kind = row.kind
    if not isinstance(kind, str) or kind not in KINDS:
        raise Refused(f"unknown event kind {str(kind)[:40]!r}")
    head = {name: _checked(arg, getattr(row, name)) for name, arg in _ROW.items()}
    if kind in _NEEDS_OTHER and not head["other_id"]:
        raise Refused(f"a {kind} names no second record")
    raw = decode_body(row)
    declared = _BODIES[kind]
    body: dict[str, Any] = {}
    for name, arg in declared.items():
        value = _checked(arg, raw.get(name))
        if value is not None:
            body[name] = value
    if kind == REJECT:
        confidence = raw.get("confidence")
        if (isinstance(confidence, bool) or not isinstance(confidence, (int, float))
                or not 0.0 <= confidence <= 1.0):  # NaN fails both comparisons
            raise Refused("'confidence' must be a number between 0 and 1")
        body["confidence"] = float(confidence)
    if kind == RECORD:
        if body["kind"] not in SHARED_KINDS:
            raise Refused(f"a record of kind {body['kind']!r} is never shared")
        for name in ("paths", "tools"):
            _strings(declared[name], body.get(name) or [], MAX_PATH_BYTES)
        hashes = body.get("file_hashes") or {}
        _strings(declared["file_hashes"], [*hashes, *hashes.values()], MAX_PATH_BYTES)
        if len(hashes) > MAX_LIST_ITEMS:
            raise Refused(f"'file_hashes' holds more than {MAX_LIST_ITEMS} entries")
    return Event(event_id=head["event_id"], kind=kind, record_id=head["record_id"],
                 other_id=head["other_id"], stamp=head["stamp"], body=body,
                 origin=str(row.origin or ""), member=head["member"],
                 machine=head["machine"] or "", seq=row.seq, pushed_at=row.pushed_at)


EXCERPT_SLACK: Final = 8192
"""Read past an excerpt's end before redacting it: a secret the cut would halve is still
whole (and found) when redaction runs, so no piece of it is left behind the cut."""


def _shown(text: str, limit: int) -> str:
    """The start of ``text``, redacted before it is cut."""
    return redact(text[: limit + EXCERPT_SLACK])[:limit]


def excerpt(row: Row, limit: int = 300) -> str:
    """What a person is shown of a refused row: its head and the start of its body, each
    redacted before it is cut."""
    parts = [f"{name}={_shown(str(getattr(row, name)), 80)!r}" for name in
             ("kind", "member", "record_id", "other_id", "stamp")]
    body = (_shown(row.body, limit) if row.body is not None
            else f"<{row.body_bytes} bytes, not fetched>")
    return (" ".join(parts) + " body=" + body)[: limit + 400]
