"""History-query detection: the switch that turns superseded evidence back on.

Matched on word boundaries rather than substrings, so "what must happen before deployment" or
"validate inputs before saving" stay ordinary queries: only phrases that ask about the past count.
"""

from __future__ import annotations

import re

HISTORY_PHRASES: tuple[str, ...] = (
    "history",
    "historical",
    "previous",
    "previously",
    "formerly",
    "superseded",
    "what changed",
    "what has changed",
    "why did we change",
    "what was true before",
    "what did we use before",
    "who owned this before",
    "who was responsible before",
    "before the change",
    "before we changed",
    "used to",
    "timeline",
    "changelog of",
)

_PHRASE = re.compile(
    r"\b(?:" + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in
                        sorted(HISTORY_PHRASES, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
# "the script is used to build the docs" is about purpose, not the past.
_PASSIVE_BEFORE_USED = frozenset(
    {"is", "are", "was", "were", "be", "been", "being", "get", "gets", "got", "getting", "it's",
     "that's", "what's", "isn't", "aren't"}
)


def _counts(query: str, m: re.Match[str]) -> bool:
    if not m.group(0).lower().startswith("used"):
        return True
    before = query[: m.start()].split()
    return not (before and before[-1].lower() in _PASSIVE_BEFORE_USED)


def _matches(query: str) -> list[re.Match[str]]:
    return [m for m in _PHRASE.finditer(query) if _counts(query, m)]


def is_history_query(query: str) -> bool:
    """True when the query asks about earlier or replaced state."""
    return bool(_matches(query))


def strip_history_phrases(query: str) -> str:
    """The query without its history phrases, for ranking on the remaining terms."""
    out, cursor = [], 0
    for m in _matches(query):
        out.append(query[cursor: m.start()])
        cursor = m.end()
    out.append(query[cursor:])
    return " ".join("".join(out).split())
