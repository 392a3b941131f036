"""Which statements of a hit match the query, and how much of it each holds.

The search executor weighs each statement's words against the query's (each stem's idf in the
hit's own index, ``store.index.Terms``); a statement that holds none of them is no passage.
Retired statements (superseded claims) are masked first, so a passage never points into what
the policy took back. Pure: the executor hands in the weighing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from lintaid.policy import topics
from lintaid_client.models import SUPERSEDED, Claim, Passage

from .statements import statements

MIN_RETIRED_TEXT = 3
"""A retired value this long (and not a bare number) is taken as restated wherever its text
stands; a shorter one or a number ("5", "20") only beside a word of what it was of."""


def retired_spans(content: str, claims: Sequence[Claim]) -> list[tuple[int, int]]:
    """The spans of ``content`` the policy took back: each superseded claim's statement, and
    every other statement of the record that restates a retired value. A turn that said "A
    pool of 20 connections is plenty" in its request and "max_conns 20" in its result states
    20 twice; when a later turn raised the pool to 40 and retired the result's 20, the
    request's sentence goes with it. A request statement goes when every value claimed in it
    was retired in its record; a statement with no claim of its own goes when it states a
    retired value as written (a bare number only beside a word of what it was the number
    of: "conn" of ``max_conns``, since numbers recur by chance)."""
    spans = [(max(0, c.start), c.end) for c in claims
             if c.status == SUPERSEDED and c.end > c.start]
    gone = [c for c in claims if c.status == SUPERSEDED and c.value.strip()]
    if not gone:
        return spans
    values = {c.value.strip().lower() for c in gone}
    for st in statements(content):
        if any(s < st.end and e > st.start for s, e in spans):
            continue
        inside = [c for c in claims if c.start < st.end and c.end > st.start]
        if inside:
            if st.part == "request" and all(c.value.strip().lower() in values
                                            for c in inside):
                spans.append((st.start, st.end))
        elif any(_restates(st.text, c) for c in gone):
            spans.append((st.start, st.end))
    return sorted(spans)


def _restates(text: str, claim: Claim) -> bool:
    value = claim.value.strip()
    if re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-]|\.\d)", text,
                              re.IGNORECASE) is None:
        return False
    if len(value) >= MIN_RETIRED_TEXT and not re.fullmatch(r"[\d.,]+", value):
        return True
    about = set(topics.words(claim.subject)) - topics.GENERIC
    return bool(about & set(topics.words(text)))


def mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with ``spans`` blanked to spaces: same length, so offsets still hold."""
    chars = list(text)
    for start, end in spans:
        for i in range(max(0, start), min(len(chars), end)):
            if chars[i] not in "\n\r":
                chars[i] = " "
    return "".join(chars)


def passages(content: str, retired: Iterable[tuple[int, int]],
             match: Callable[[str], dict[str, float]]) -> list[Passage]:
    """The statements of ``content`` that hold any of the query's terms, best first (ties in
    text order); ``match`` gives a statement's query terms, each with its share of the
    query's weight. A capture's lists of paths and tools are no statements."""
    text = mask(content, retired)
    out = []
    for st in statements(text):
        if st.listing:
            continue
        terms = match(st.text)
        if terms:
            out.append(Passage(st.start, st.end, round(sum(terms.values()), 4),
                               {t: round(w, 4) for t, w in terms.items()}))
    out.sort(key=lambda p: (-p.weight, p.start))
    return out
