"""History-query detection: the switch that turns superseded evidence back on.

Only a phrase about a change in the project's state counts: "what changed", "previously used",
"before we switched", "what did we use before", "why did we change", "who owned it before".
"used to" and "history" alone never do ("the script is used to build the docs", "the history
module"), nor does "before" alone ("validate inputs before saving"). A history query keeps the
current hits where the plain query ranks them and adds labelled historical ones, so a false
switch costs top-k slots, never the answer's rank; still, it should not happen.
"""

from __future__ import annotations

import re

_WHO = r"(?:we|you|they|i|the\s+team)"
_CHANGED = (r"(?:switched|changed|moved|migrated|replaced|adopted|dropped|reverted|upgraded|"
            r"downgraded|rewrote|refactored)")
HISTORY_PATTERNS: tuple[str, ...] = (
    r"what\s+(?:has\s+|have\s+|'s\s+|was\s+|were\s+)?changed",
    r"how\s+(?:has|have|did)\s+(?:\S+\s+){1,5}?chang(?:ed|e)",
    r"what\s+did\s+" + _WHO + r"\s+(?:change|switch|replace|drop|revert)",
    r"why\s+(?:did|do|have|had)\s+" + _WHO + r"\s+(?:change|switch|move|migrate|replace|drop|stop"
    r"|revert|go\s+back)",
    r"why\s+(?:was|were)\s+(?:\S+\s+){1,4}?(?:changed|switched|replaced|dropped|moved|reverted)",
    r"previously\s+(?:used|using|use|owned|chose|chosen|picked|set|had|decided|configured|ran)",
    r"(?:did|do|have)\s+" + _WHO + r"\s+previously",
    r"previous\s+(?:owner|owners|value|values|version|versions|decision|decisions|choice|setting|"
    r"settings|approach|implementation|default|config(?:uration)?|tool|library|database|setup)",
    r"before\s+" + _WHO + r"\s+" + _CHANGED,
    r"before\s+the\s+(?:change|switch|migration|move|upgrade|rewrite|revert|refactor|reorg)",
    r"(?:what|which)\s+(?:\S+\s+){0,2}?did\s+(?:\S+\s+){1,3}?(?:use|have|pick|choose|run|own)"
    r"\s+before",
    r"did\s+" + _WHO + r"\s+used?\s+to",
    r"who\s+(?:owned|was\s+responsible|were\s+responsible|had|ran)\b(?:\s+\S+){0,5}?\s+before",
    r"what\s+was\s+true\s+before",
    r"formerly",
    r"superseded",
    r"(?:change|decision)\s+history",
    r"history\s+of\s+(?:the\s+)?(?:changes|decisions)",
    r"timeline\s+of",
    r"changelog\s+of",
)

_PHRASE = re.compile(r"\b(?:" + "|".join(f"(?:{p})" for p in HISTORY_PATTERNS) + r")\b",
                     re.IGNORECASE)


def _matches(query: str) -> list[re.Match[str]]:
    return list(_PHRASE.finditer(query))


def is_history_query(query: str) -> bool:
    """True when the query asks how the project's state changed or what held before."""
    return bool(_matches(query))


# The words of a history phrase that only say "the past": stripped for ranking. The rest of a
# phrase ("owner" in "previous owner", "retry policy" in "how has the retry policy changed")
# names what is asked about and stays.
_PAST_WORDS = frozenset(
    """what which who why how has have had 's was were is did do we you they i the team
    changed change switched switch moved move migrated migrate replaced replace adopted dropped
    reverted revert upgraded downgraded rewrote refactored stop go back previously previous
    before formerly superseded history of timeline changelog used use to true this decision
    decisions changes""".split()
)


def strip_history_phrases(query: str) -> str:
    """The query without the past-tense scaffolding of its history phrases, for ranking."""
    out, cursor = [], 0
    for m in _matches(query):
        out.append(query[cursor: m.start()])
        kept = [w for w in m.group(0).split() if w.lower().strip("?.,!") not in _PAST_WORDS]
        out.append(" " + " ".join(kept) + " ")
        cursor = m.end()
    out.append(query[cursor:])
    return " ".join("".join(out).split())
