"""Context around a hit: the turns just before and after it in its conversation.

A record is a conversation turn when it has an author (``metadata.author``) and a session
(``session_id``): one utterance, which often makes sense only beside the question it answers
or the reply it got. A captured coding turn holds its request and its result already, so it
gets none. Neighbours are the same user's records of the same session, in creation order,
neither forgotten nor prompts; in a current read, superseded and expired ones are left out
and superseded statements are cut out of the rest.
"""

from __future__ import annotations

import json
import time
from typing import Any, Final, Protocol

from lintaid_client import models
from lintaid_client.models import Context, Hit

from .store.memory import blank

CONTEXT_CHARS: Final = 300


class Neighbours(Protocol):
    def session_neighbours(self, ids: list[str]) -> dict[str, tuple[str | None, str | None]]:
        ...

    def get_rows(self, ids: list[str]) -> dict[str, Any]: ...

    def claims_for(self, ids: list[str]) -> dict[str, list[dict[str, Any]]]: ...


def author(metadata: dict[str, Any] | None) -> str | None:
    value = (metadata or {}).get("author")
    return " ".join(value.split()) if isinstance(value, str) and value.strip() else None


def is_turn(hit: Hit) -> bool:
    return hit.is_memory and bool(hit.session_id) and author(hit.metadata) is not None


def attach(store: Neighbours, hits: list[Hit], *, history: bool,
           now: float | None = None) -> None:
    """Fill ``context`` of the hits that are conversation turns."""
    turns = [h for h in hits if is_turn(h)]
    if not turns:
        return
    near = store.session_neighbours([h.id for h in turns])
    wanted = sorted({n for pair in near.values() for n in pair if n})
    rows = store.get_rows(wanted)
    claims = store.claims_for(wanted)
    at = time.time() if now is None else now
    for hit in turns:
        before, after = near.get(hit.id, (None, None))
        hit.context = [c for c in (
            _context(rows.get(rid), claims.get(rid, []), position, history, at)
            for rid, position in ((before, models.BEFORE), (after, models.AFTER)) if rid)
            if c is not None]


def _context(row: Any, claims: list[dict[str, Any]], position: str, history: bool,
             at: float) -> Context | None:
    if row is None or row["forgotten_at"] is not None:
        return None
    retired = row["state"] == models.SUPERSEDED or (
        row["expires_at"] is not None and row["expires_at"] <= at)
    if retired and not history:
        return None
    text = row["content"]
    if not history:
        text = blank(text, [(c["start"], c["end"]) for c in claims
                            if c["status"] == models.SUPERSEDED])
    flat = " ".join(text.split())
    if len(flat) > CONTEXT_CHARS:
        flat = flat[: CONTEXT_CHARS - 1].rstrip() + "…"
    try:
        meta = json.loads(row["metadata"]) if row["metadata"] else {}
    except ValueError:
        meta = {}
    return Context(id=row["id"], position=position, content=flat,
                   author=author(meta if isinstance(meta, dict) else {}),
                   created_at=row["created_at"])
