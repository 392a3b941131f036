"""What a search query asks for: its content words and the times it names.

Stop words are dropped from the query side only (the index keeps every word); a query made of
nothing but stop words keeps them all. The list is a general English one (function words,
auxiliaries, question words), measured on LoCoMo (``benchmarks/locomo.py``), not tuned to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from .dates import Span, date_spans

QUERY_SPECIALS: Final = frozenset('+-&|!(){}[]^"~*?:\\/<>=\'`')
MAX_QUERY_CHARS: Final = 20_000
MAX_QUERY_TERMS: Final = 256

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
""".split())


def words(text: str) -> list[str]:
    """The query's distinct words in order: query-syntax characters become spaces, lowercase;
    the first ``MAX_QUERY_TERMS`` of the first ``MAX_QUERY_CHARS`` characters (a pasted log
    must not become a million-term query)."""
    text = text[:MAX_QUERY_CHARS]
    return list(dict.fromkeys(
        "".join(" " if ch in QUERY_SPECIALS else ch for ch in text).lower().split()
    ))[:MAX_QUERY_TERMS]


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
