"""Current-state policy: claims, chains, relations and statuses, derived from records."""

from __future__ import annotations

from .beliefs import record_claims_of
from .claims import Claim, canonical, extract_claims, has_correction_cue, normalize_value
from .engine import REBUILD_BATCH, PolicyStore, claim_keys, derive, rebuild
from .history import HISTORY_PATTERNS, is_history_query, strip_history_phrases
from .inputs import RecordInput, record_claims
from .relations import (
    CONFIRMS,
    CONFLICT,
    CONFLICTS_WITH,
    HIDE,
    SUPERSEDES,
    ClaimRef,
    Relation,
    chain_order,
    claim_pair_id,
    explicit_relations,
    pair_id,
    pseudo_claim_id,
    relate,
)
from .scope import (
    GENERIC_HEADINGS,
    PROJECT,
    claim_scope,
    heading_at,
    is_generic_heading,
    source_kind,
)
from .sentences import Span, frontmatter_end, headings, split_sentences
from .status import (
    CONFLICTED,
    CURRENT,
    SUBSTANCE_MIN_WORDS,
    SUPERSEDED,
    ClaimState,
    RecordState,
    claim_statuses,
    record_status,
    substantive_words,
)

DOCUMENT_KIND = "document"
"""The record kind of a project file read as a decision document."""

__all__ = [
    "CONFIRMS", "DOCUMENT_KIND", "CONFLICT", "CONFLICTED", "CONFLICTS_WITH", "CURRENT", "GENERIC_HEADINGS",
    "HIDE", "HISTORY_PATTERNS", "PROJECT", "REBUILD_BATCH", "SUBSTANCE_MIN_WORDS", "SUPERSEDED",
    "SUPERSEDES", "Claim", "ClaimRef", "ClaimState", "PolicyStore", "RecordInput",
    "RecordState", "Relation", "Span", "canonical", "chain_order", "claim_keys", "claim_scope",
    "claim_pair_id", "claim_statuses", "derive", "explicit_relations",
    "extract_claims", "frontmatter_end", "has_correction_cue", "heading_at", "headings",
    "is_generic_heading", "is_history_query", "normalize_value", "pair_id", "pseudo_claim_id",
    "rebuild", "record_claims", "record_claims_of", "record_status", "relate", "source_kind", "split_sentences",
    "strip_history_phrases", "substantive_words",
]
