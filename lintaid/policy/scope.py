"""Claim scope: which claims may meet on a chain at all.

Everything a project's own agents and developer say shares one scope, so a capture can retire
an older capture. Other API users keep their own scope and never retire the project's memory.
Scalar settings in workspace files are narrower: two files both saying "retry attempts: 5"
under different headings or in different folders are usually about different things.
"""

from __future__ import annotations

import posixpath

from lintaid.capture.record import LOCAL_USER

from .claims import canonical

PROJECT = "project"
GENERIC_HEADINGS = frozenset(
    {
        "config", "configuration", "setting", "settings", "policy", "decision", "decisions",
        "default", "defaults", "parameter", "parameters", "option", "options", "notes",
        "overview",
    }
)
_SHARED_KINDS = frozenset({"capture"})
SCALAR_PREDICATES = frozenset({"value", "default", "number", "duration", "percent", "size",
                               "rate", "boolean", "schedule"})
"""Kinds of value a decision document scopes to its file (or heading): a bare setting."""


def is_generic_heading(heading: str | None) -> bool:
    """Empty or a catch-all heading ("Configuration") that says nothing about the topic."""
    return not heading or canonical(heading) in GENERIC_HEADINGS


def heading_at(heads: list[tuple[int, str]], offset: int) -> str | None:
    """The nearest non-generic heading at or before ``offset``."""
    for start, text in reversed(heads):
        if start <= offset and not is_generic_heading(text):
            return text
    return None


def source_kind(kind: str, member: str | None = None) -> str:
    """Workspace files are one kind of source, every memory (capture, prompt, note) the other;
    a teammate's memory (``member``, the team tier) is a kind of its own, so the newer of two
    people's statements never silently retires the other's: they conflict unless a correction
    cue or an explicit decision says otherwise."""
    if kind == "document":
        return "document"
    return "memory" if not member else f"memory@{member}"


def claim_scope(kind: str, user_id: str, predicate: str, path: str | None,
                heading: str | None) -> str:
    """The scope part of a claim's chain key."""
    if kind == "document":
        if predicate not in SCALAR_PREDICATES:
            return PROJECT
        norm_path = (path or "").replace("\\", "/")
        if not is_generic_heading(heading):
            parent = posixpath.dirname(norm_path)
            return f"file:{parent}::heading:{canonical(heading or '')}"
        return f"file:{norm_path}"
    user = (user_id or "").strip() or LOCAL_USER
    if kind in _SHARED_KINDS or user == LOCAL_USER:
        return PROJECT
    return f"user:{user}"
