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

from .statements import piece_of, statements

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
    return sorted((start, end) for start, end, _ids in _retired(content, claims))


def retired_matches(content: str, claims: Sequence[Claim],
                    match: Callable[[str], dict[str, float]]) -> dict[str, float]:
    """The retired claims whose statement, or a statement restating their value, holds a
    term of the query, each with the share of the query's weight the best such statement
    holds (in text order): what the prompt asked about that was changed, so that what
    changed it can be the answer (``retrieval.admit``) and a note saying so earns its line
    (``integrations.injection``)."""
    out: dict[str, float] = {}
    for start, end, ids in sorted(_retired(content, claims)):
        weight = round(sum(match(content[start:end]).values()), 4)
        if weight > 0:
            for cid in ids:
                out[cid] = max(out.get(cid, 0.0), weight)
    return out


def _retired(content: str, claims: Sequence[Claim]) -> list[tuple[int, int, tuple[str, ...]]]:
    """``retired_spans`` with the ids of the retired claims each span went with."""
    gone = [c for c in claims if c.status == SUPERSEDED]
    out: list[tuple[int, int, tuple[str, ...]]] = [
        (max(0, c.start), c.end, (c.claim_id,)) for c in gone if c.end > c.start]
    valued = [c for c in gone if c.value.strip()]
    if not valued:
        return out
    values = {c.value.strip().lower() for c in valued}
    for st in statements(content):
        if any(s < st.end and e > st.start for s, e, _ids in out):
            continue
        inside = [c for c in claims if c.start < st.end and c.end > st.start]
        if inside:
            if st.part == "request" and all(c.value.strip().lower() in values
                                            for c in inside):
                said = {c.value.strip().lower() for c in inside}
                out.append((st.start, st.end, tuple(
                    c.claim_id for c in valued if c.value.strip().lower() in said)))
        else:
            restated = tuple(c.claim_id for c in valued if _restates(st.text, c))
            if restated:
                out.append((st.start, st.end, restated))
    return out


def quotes_retired(evidence: str, value: str, retired: Iterable[str]) -> bool:
    """Whether the piece of ``evidence`` a digest would quote for ``value`` (``piece_of``)
    also states one of the ``retired`` values of its record's claims on that evidence:
    "pgxpool with max_conns 20 and min_conns 2" once max_conns went to 40 is no sentence to
    quote as current for min_conns, while "migrations with goose", an item of the same
    list, still is."""
    piece = piece_of(evidence, value)
    return any(states(piece, old) for old in retired if old.strip())


def states(text: str, value: str) -> bool:
    """Whether ``text`` states ``value`` as written (not as part of a longer word, path or
    version: "1.2" is not in "1.25")."""
    return re.search(rf"(?<![\w.-]){re.escape(value.strip())}(?![\w-]|\.\d)", text,
                     re.IGNORECASE) is not None


def _restates(text: str, claim: Claim) -> bool:
    value = claim.value.strip()
    if not states(text, value):
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
