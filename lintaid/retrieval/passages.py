"""Which statements of a hit match the query, and how much of it each holds.

The search executor weighs each statement's words against the query's (each stem's idf in the
hit's own index, ``store.index.Terms``); a statement that holds none of them is no passage.
Retired statements (superseded claims) are masked first, so a passage never points into what
the policy took back. Pure: the executor hands in the weighing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lintaid_client.models import Passage

from .statements import statements


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
