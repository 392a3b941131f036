"""Sentence spans over Markdown-ish text, with offsets into the original string.

Claims are cut at sentence granularity, and the offsets let a caller mark or omit exactly the
sentence a superseded claim came from. Frontmatter, fenced code and headings are not prose, so
they never yield sentences; headings are reported separately because they scope some claims.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FRONTMATTER_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")
# A terminator: one or more of . ! ? (plus closing quotes/brackets) followed by space or the end.
_TERMINATOR = re.compile(r"[.!?]+[\"'\u2019\u201d)\]]*(?=\s|$)")
_LAST_TOKEN = re.compile(r"(\S+)$")
_NEVER_SPLIT_AFTER = frozenset({"e.g", "i.e", "cf", "vs", "approx", "mr", "mrs", "ms", "dr", "st"})
_SPLIT_IF_CAPITAL_FOLLOWS = frozenset({"etc", "al"})


@dataclass(frozen=True)
class Span:
    """A stripped sentence and its [start, end) offsets in the original text."""

    start: int
    end: int
    text: str


def frontmatter_end(text: str) -> int:
    """Offset just past a leading ``---`` YAML block, or 0 when there is none."""
    if not text.startswith("---"):
        return 0
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].strip() != "---":
        return 0
    pos = first_nl + 1
    while pos <= len(text):
        nl = text.find("\n", pos)
        line_end = len(text) if nl < 0 else nl
        if _FRONTMATTER_CLOSE.match(text[pos:line_end]):
            return len(text) if nl < 0 else nl + 1
        if nl < 0:
            return 0  # never closed: not frontmatter
        pos = nl + 1
    return 0


def _lines(text: str) -> Iterator[tuple[int, str, str]]:
    """Yield (offset, line, kind) with kind in prose | heading | skip."""
    pos = frontmatter_end(text)
    fence: str | None = None
    while pos < len(text):
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        line = text[pos:end]
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            yield pos, line, "skip"
        elif m:
            fence = m.group(1)
            yield pos, line, "skip"
        elif _HEADING.match(line):
            yield pos, line, "heading"
        else:
            yield pos, line, "prose"
        pos = end + 1


def headings(text: str) -> list[tuple[int, str]]:
    """Markdown ATX headings outside frontmatter and code: (line offset, heading text)."""
    out: list[tuple[int, str]] = []
    for offset, line, kind in _lines(text):
        if kind == "heading":
            m = _HEADING.match(line)
            if m and m.group(1).strip():
                out.append((offset, m.group(1).strip()))
    return out


def _keeps_going(line: str, match: re.Match[str]) -> bool:
    """True when a terminator is not a sentence end (abbreviation, list number)."""
    if match.group(0) != ".":
        return False
    before = line[: match.start()]
    tok = _LAST_TOKEN.search(before)
    if tok is None:
        return False
    word = tok.group(1).lstrip("(\"'").lower()
    if word in _NEVER_SPLIT_AFTER:
        return True
    if word in _SPLIT_IF_CAPITAL_FOLLOWS:
        rest = line[match.end():].lstrip()
        return not (rest[:1].isupper())
    # "1. Use Redis" — a numbered-list marker at the start of the line.
    return word.isdigit() and before.strip() == tok.group(1)


def _split_line(offset: int, line: str) -> Iterator[Span]:
    cursor = 0
    for m in _TERMINATOR.finditer(line):
        if _keeps_going(line, m):
            continue
        yield from _span(offset, line, cursor, m.end())
        cursor = m.end()
    yield from _span(offset, line, cursor, len(line))


def _span(offset: int, line: str, start: int, end: int) -> Iterator[Span]:
    piece = line[start:end]
    stripped = piece.strip()
    if stripped:
        lead = len(piece) - len(piece.lstrip())
        s = offset + start + lead
        yield Span(s, s + len(stripped), stripped)


def split_sentences(text: str) -> list[Span]:
    """Sentences of the prose lines: split at newlines and at . ! ? followed by space or end.

    A dot not followed by whitespace never splits, so "2.0", "config.yaml" and "v1.2.3" stay
    whole; "e.g." and friends do not end a sentence either.
    """
    out: list[Span] = []
    for offset, line, kind in _lines(text):
        if kind == "prose":
            out.extend(_split_line(offset, line))
    return out
