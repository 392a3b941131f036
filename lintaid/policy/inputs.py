"""What the policy reads about one record, and the claims it extracts from it."""

from __future__ import annotations

from dataclasses import dataclass

from lintaid.capture.record import LOCAL_USER

from .beliefs import record_claims_of
from .relations import ClaimRef
from .scope import claim_scope, heading_at, source_kind
from .sentences import headings


@dataclass(frozen=True)
class RecordInput:
    """A record taking part in the policy: a memory record, or a workspace file (kind
    ``document``, id and path the file's path, created and valid at its mtime)."""

    record_id: str
    text: str
    kind: str = "capture"
    user_id: str = LOCAL_USER
    created_at: float = 0.0
    valid_at: float | None = None
    path: str | None = None
    member: str | None = None
    """The teammate who wrote it (a record pulled from the team); None: this store's own.
    Claims of different people are different kinds of source, so a newer one supersedes an
    older one only by a correction cue or an explicit link, and otherwise conflicts."""


def record_claims(record: RecordInput) -> list[ClaimRef]:
    """The claims of one record, with ids ``{record_id}::c{n}`` (n from 1) and chain scope."""
    heads = headings(record.text) if record.kind == "document" else []
    effective = record.valid_at if record.valid_at is not None else record.created_at
    out: list[ClaimRef] = []
    for n, claim in enumerate(record_claims_of(record.text, record.kind), start=1):
        heading = heading_at(heads, claim.start) if heads else None
        scope = claim_scope(record.kind, record.user_id, claim.predicate, record.path, heading)
        out.append(ClaimRef(
            claim_id=f"{record.record_id}::c{n}", record_id=record.record_id, scope=scope,
            subject=claim.subject, predicate=claim.predicate, value=claim.value,
            effective_at=effective, source_kind=source_kind(record.kind, record.member), cue=claim.cue,
            replaces=claim.replaces, order_key=(record.created_at, record.record_id, n),
            evidence=claim.evidence, start=claim.start, end=claim.end,
            topic=claim.topic, cue_kind=claim.cue_kind, peers=claim.peers,
        ))
    return out
