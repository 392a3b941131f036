"""History intent: whether a question asks what held before, not what holds now.

Read from the question's meaning in ordinary forms, not from a list of phrases: a question is
about the project's past when it points at a past time ("in 2022", "last quarter", "at
launch", "back in release 3.2", "two years ago", "in the Rails era"), at an earlier or first
state ("previously", "originally", "the old pipeline", "the first CI provider", "at one
point", "has it always been"), at an end ("until March", "before we switched", "prior to the
rewrite"), or at a change and its reasons ("why did we drop Celery?", "what did we change the
TTL from?", "how has the schema evolved?", "history of the decision"). Forms that only look
like these do not count: a step order ("before saving"), a purpose ("is used to build the
docs"), a thing named history ("the history module"), a question still asking about now
("are we still on Postgres 15?", "what is the previous release's tag?" asks how to do
something now only when it says so: "how do I roll back to the previous release").

Each form adds to a score; a question is a history question at ``THRESHOLD``. The weights were
set on the development half of ``benchmarks/data/questions/`` (400 questions written by a
helper that never saw this code) and the other half measures them
(``benchmarks/history_intent.py``). A history query keeps the current hits where the plain
query ranks them and adds labelled historical ones, so a false switch costs top-k slots,
never the answer's rank.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

_I = re.IGNORECASE
THRESHOLD: Final = 1.0

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_PERIOD = (r"(?:year|month|quarter|sprint|week|spring|summer|autumn|fall|winter|release|"
           r"version|major|season|iteration)")

# "before" and what follows it: a change ("before the migration", "before we switched"), a
# past participle, a name ("before Airflow", "before `httpx`"; case-sensitive: under the
# module's IGNORECASE "[A-Z]" is any letter, and "before we commit" would count), not a step
# of a procedure ("before saving", "before each run").
_BEFORE = (r"\b(?:before|prior\s+to|pre)\s+(?:we\s+|the\s+|our\s+|it\s+)?+"
           r"(?!(?:saving|committing|deploying|merging|pushing|running|starting|release|"
           r"you|i\b|calling|sending|writing|reading|opening|closing|each|every|any|a\b|"
           r"an\b|using|doing|making|adding|creating|retrying|returning))")
_BEFORE_CHANGE = (r"switch|mov|migrat|chang|replac|adopt|rewr|refactor|introduc|add|reorg|"
                  r"repartition|upgrad|pagination|trunk|\w+ed\b|(?-i:[A-Z`])")

# (weight, pattern): forms that point at the past state.
_FORMS: Final[tuple[tuple[float, re.Pattern[str]], ...]] = tuple(
    (w, re.compile(p, _I)) for w, p in (
        # a past time
        (1.0, r"\b(?:in|during|since|around|by)\s+(?:early\s+|late\s+|mid[- ]?)?(?:19|20)\d\d\b"),
        (1.0, r"\bthe\s+(?:19|20)\d\d\s+[\w-]+|\b(?:19|20)\d\d\s+(?:rules|model|config|"
              r"release|version|architecture|review|setup|stack|pipeline|schema|pricing)\b"),
        (1.0, r"\blast\s+" + _PERIOD + r"\b"),
        (1.0, r"\b(?:in|since|until|till|before|by)\s+" + _MONTH + r"\b"),
        (1.0, r"\b(?:\d+|two|three|four|five|a\s+few|several)\s+(?:years?|months?|quarters?|"
              r"releases?|versions?)\s+ago\b"),
        (1.0, r"\bin\s+q[1-4]\b"),
        (1.0, r"\bback\s+(?:in|then|when)\b|\bin\s+those\s+days\b|\bin\s+the\s+past\b|"
              r"\bat\s+the\s+time\b|\bthe\s+early\s+days\b|\bearly\s+on\b"),
        (1.0, r"\bat\s+(?:launch|go-?live|the\s+start|the\s+beginning|first|one\s+point)\b|"
              r"\bat\s+some\s+point\b|\bwhen\s+(?:we|the\s+repo|the\s+project|it)\s+"
              r"(?:started|began|was\s+(?:created|on|new)|launched)\b"),
        (1.0, r"\b(?:in|for|of)\s+(?:the\s+)?(?:v?\d+\.(?:x|\d+)(?:\.x)?|\d+\.x|1\.0|v1)\s*"
              r"(?:days|era|releases?|version|line)?\b|\bthe\s+\d+\.x\s+(?:days|releases?)\b"),
        (1.0, r"\b(?:the\s+)?\w+\s+era\b"),
        # an earlier or first state
        (1.2, r"\b(?:previously|formerly|originally|initially|at\s+first|used\s+to\s+"
              r"(?!be\s+(?:able|used))(?:be|have|run|use|own|live|store|sit|go|point|handle|"
              r"ship|send|call|return|work)|once\s+(?:used|had|ran|was))\b"),
        (1.0, r"\b(?:the\s+|our\s+|its\s+|a\s+)?(?:previous|former|original|prior|earlier|"
              r"initial|first|pre-\w+)\s+[\w`'-]+|\b(?:the|our|its)\s+(?:old|legacy|v1)\s+"
              r"[\w`'-]+|^\W*(?:old|legacy|previous|former)\s+\S+(?:\s+\S+){0,2}\W*$"),
        (1.0, r"\b(?:start(?:ed)?\s+out|started\s+on|begin|began|come\s+first|came\s+first)\b"),
        (1.0, r"\b(?:has|have|was|were|did)\b[^?]{0,60}\balways\b"),
        (0.6, r"\ball\s+along\b"),
        # an end, or what came before something
        (1.0, r"\buntil\s+(?!(?:it|the\s+\w+)\s+(?:is|are|finishes|passes|succeeds))[\w`'-]+"),
        (1.0, _BEFORE + r"(?:" + _BEFORE_CHANGE + r")"),
        # ... or before something else ("before sqlalchemy", "before updating status"): a
        # step order as often as the past, so it counts only beside another past form
        (0.5, _BEFORE + r"(?!" + _BEFORE_CHANGE + r")\w"),
        # "before" closing the question: earlier than now ("who owned this before?"), not
        # an event seen earlier ("have we seen this error before?")
        (1.0, r"(?<!\bseen\s)(?<!\bhappened\s)(?<!\bthis\serror\s)\bbefore\W*$"),
        (0.5, r"\bbefore\s+(?:\w+\s+)?(?:was|were)\b"),
        # a change, its direction, its reasons
        (1.2, r"\bwhy\s+(?:did|do|have|had)\s+(?:we|you|they|the\s+team|i)\s+"
              r"(?:change|switch|move|migrate|replace|drop|stop|remove|revert|go\s+back|"
              r"abandon|leave|ditch|give\s+up|pick|choose|rewrite|retire)"),
        (1.0, r"\bwhy\s+is\s+there\s+no\b|\bno\s+longer\b|\banymore\b"),
        (1.2, r"\b(?:reason|motivat\w*|story|rationale|reasoning)\b[^?]{0,40}"
              r"\b(?:for|behind|to|of|we|going|dropping|moving|switching)\b"),
        (1.2, r"\b(?:changed?|switched|moved|migrated|went)\s+(?:\w+\s+){0,3}?from\b|"
              r"\bmigrate\s+away\s+from\b|\bgoing\s+from\b"),
        (1.2, r"\bwhat\s+(?:has\s+|have\s+|'s\s+)?changed\b|\bhow\s+(?:has|have|did)\s+"
              r"[^?]{1,50}\b(?:change|evolve|look)\w*|\bevolved?\b"),
        (1.2, r"\bhistory\s+of\b|\btimeline\s+of\b|\bchangelog\s+of\b|\bover\s+time\b|"
              r"\bwhat\s+did\s+[^?]{1,40}\b(?:replace|supersede)\b|\bsuperseded?\b"),
        (0.8, r"\b(?:got\s+)?(?:renamed|removed|dropped|replaced|deprecated|retired)\s+in\b"),
        (0.5, r"\b(?:renamed|removed|dropped|replaced|deprecated|retired|changed)\b[^?]{0,60}"
              r"\band\s+why\b"),
        (0.6, r"\b(?:diff|difference)\s+between\s+(?:the\s+)?(?:v\d|old|new|\d)"),
        # the past tense about the project's own state
        (0.6, r"^\W*(?:what|which|who|how|where|was|were|did)\b[^?]*\b(?:did|was|were|had)\b"),
    ))

# Forms that only look like the past: they take the score back.
_NOT_PAST: Final[tuple[tuple[float, re.Pattern[str]], ...]] = tuple(
    (w, re.compile(p, _I)) for w, p in (
        (1.5, r"\b(?:is|are|be|being|get|gets)\s+used\s+(?:to|for)\b"),
        (1.5, r"\bhistory\s+(?:module|table|file|page|endpoint|api|view|tab|service|log)\b|"
              r"\b(?:change|audit|order|version|edit|commit|git|browser|shell|undo|chat)\s+"
              r"history\b"),
        (1.2, r"\bhow\s+(?:do|can|should|would)\s+(?:i|we|you)\b"),
        (1.0, r"\b(?:still|currently|right\s+now|nowadays|today|these\s+days|at\s+the\s+moment|"
              r"as\s+of\s+now)\b"),
        (1.0, r"\b(?:is|are)\s+(?:we|it|the|our)\b[^?]{0,40}\bstill\b"),
        (1.0, r"\bnow\b(?![-\s]+(?:that|we|than))"),
        (1.0, r"\b(?:outage|incident|crash(?:ed)?|failed|failure|errored|alerted|paged|broke|"
              r"went\s+(?:down|wrong)|timed?\s+out|finish(?:ed)?|succeed(?:ed)?|meeting|"
              r"standup|rejected|rollout|hand-?off|last\s+night|yesterday|this\s+morning|"
              r"errors\s+did)\b"),
        (1.0, r"\b(?:in\s+general|best\s+practice|what\s+is\s+the\s+difference\s+between\s+"
              r"(?!the\s+(?:old|v\d)))"),
    ))


def score(query: str) -> float:
    """How strongly ``query`` asks about the past state (see the module docstring)."""
    q = " ".join((query or "").split())
    if not q:
        return 0.0
    up = sum(w for w, rx in _FORMS if rx.search(q))
    down = sum(w for w, rx in _NOT_PAST if rx.search(q))
    return up - down


def is_history_query(query: str) -> bool:
    """True when the query asks how the project's state changed or what held before."""
    return score(query) >= THRESHOLD


# The words of a question that only say "the past": stripped for ranking. The rest ("owner"
# in "the previous owner", "retry policy" in "how has the retry policy changed") names what
# is asked about and stays.
_PAST_WORDS = frozenset(
    """what which who why how has have had 's was were is did do we you they i the team
    changed change switched switch moved move migrated migrate replaced replace adopted dropped
    reverted revert upgraded downgraded rewrote refactored stop go back previously previous
    before formerly superseded history of timeline changelog used use to true this decision
    decisions changes old original originally initially first former legacy prior earlier
    until always ago last back then era evolved evolve""".split()
)
HISTORY_PATTERNS: Final = tuple(rx.pattern for _w, rx in _FORMS)
"""The forms read (for documentation and the viewer's help text)."""


def strip_history_phrases(query: str, keep: Sequence[tuple[int, int]] = ()) -> str:
    """The query without its past-time scaffolding, for ranking (only for a history query:
    a current one is ranked as asked). Words inside ``keep`` (character ranges: the times
    the query names, "last week") stay, so the ranking still reads the time."""
    if not is_history_query(query):
        return query
    kept = [m.group(0) for m in re.finditer(r"\S+", query)
            if m.group(0).lower().strip("?.,!") not in _PAST_WORDS
            or any(a <= m.start() < b for a, b in keep)]
    return " ".join(kept) or query


__all__ = ["HISTORY_PATTERNS", "THRESHOLD", "is_history_query", "score",
           "strip_history_phrases"]
