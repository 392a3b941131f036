"""What a search query asks for: its content words and the times it names.

Stop words are dropped from the query side only (the index keeps every word); a query made of
nothing but stop words keeps them all. The list is a general English one (function words,
auxiliaries, question words), measured on LoCoMo (``benchmarks/locomo.py``), not tuned to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from .dates import Span, date_spans

QUERY_SPECIALS: Final = frozenset('+-&|!(){}[]^"~*?:\\/<>=\'`')
MAX_QUERY_CHARS: Final = 20_000
MAX_QUERY_TERMS: Final = 256

_SPECIALS_TO_SPACE: Final = str.maketrans(dict.fromkeys(QUERY_SPECIALS, " "))

STOP_WORDS: Final = frozenset("""
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
don't down during each few for from further had hadn't has hasn't have haven't having he he'd
he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into
is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only
or other ought our ours ourselves out over own same shan't she she'd she'll she's should
shouldn't so some such than that that's the their theirs them themselves then there there's
these they they'd they'll they're they've this those through to too under until up very was
wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while
who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours
yourself yourselves also just will s t d ll m re ve get got gets kind sort type thing things
many much use uses using
""".split())


def words(text: str) -> list[str]:
    """The query's distinct words in order: query-syntax characters become spaces, lowercase;
    the first ``MAX_QUERY_TERMS`` of the first ``MAX_QUERY_CHARS`` characters (a pasted log
    must not become a million-term query)."""
    text = text[:MAX_QUERY_CHARS]
    return list(dict.fromkeys(text.translate(_SPECIALS_TO_SPACE).lower().split()))[
        :MAX_QUERY_TERMS]


def content_words(all_words: list[str]) -> list[str]:
    """``all_words`` without stop words; all of them when nothing else is left."""
    kept = [w for w in all_words if w not in STOP_WORDS]
    return kept or all_words


@dataclass
class QueryPlan:
    """``words``: the content words to match; ``spans``: the times the query names
    (empty for almost every coding query, which then ranks exactly as without them)."""

    text: str
    words: list[str]
    spans: list[Span] = field(default_factory=list)


def plan(text: str, now: float) -> QueryPlan:
    return QueryPlan(text, content_words(words(text)), date_spans(text, now))


_ASKS: Final = (r"(?:what|which|who|whom|whose|where|when|why|how|is|are|was|were|do|does|did|"
                r"can|could|should|would|will|has|have)")
# A new question inside a prompt: after "?" or after ", and" / "; " / " and also" when a
# question word follows ("Who owns billing, and what is the pool size?").
_NEXT_QUESTION: Final = re.compile(
    rf"\?\s+(?=\S)|[,;]\s*(?:and\s+(?:also\s+)?)?(?={_ASKS}\b)|\s+and\s+(?:also\s+)?(?={_ASKS}\b)",
    re.IGNORECASE)
_STARTS_ASKING: Final = re.compile(rf"{_ASKS}\b", re.IGNORECASE)
MAX_PARTS: Final = 3
MAX_ASKING_CHARS: Final = 1000
"""A prompt longer than this is not split into questions."""


def parts(prompt: str) -> list[str]:
    """The questions a prompt asks, each on its own ("Which HTTP client does the gateway use,
    and how many retry attempts does it make?": two); one part when it asks one thing, and
    at most ``MAX_PARTS`` (the rest stays with the last). A part is a question (it starts
    with a question word or ends with "?"; a clause before one, "If a task fails, how ...",
    goes with it) with words of its own."""
    pieces: list[str] = []
    carried = ""
    if len(prompt) > MAX_ASKING_CHARS:  # a pasted log or file: one question and its paste
        return [prompt]
    for raw in _NEXT_QUESTION.split(prompt):
        raw = raw.strip(" ,;")
        piece = f"{carried}, {raw}" if carried else raw
        if not (_STARTS_ASKING.match(raw) or raw.endswith("?")):
            carried = piece
            continue
        carried = ""
        if len(content_words(words(piece))) >= 2:
            pieces.append(piece)
        elif pieces:
            pieces[-1] += " " + piece
    if carried and pieces:
        pieces[-1] += " " + carried
    if len(pieces) <= 1:
        return [prompt]
    if len(pieces) > MAX_PARTS:
        pieces[MAX_PARTS - 1:] = [" ".join(pieces[MAX_PARTS - 1:])]
    return pieces
