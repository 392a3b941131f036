"""Sentence spans over Markdown-ish text, with offsets into the original string.

Claims are cut at sentence granularity, and the offsets let a caller mark or omit exactly the
sentence a superseded claim came from. Frontmatter, fenced code, tables and headings are not
prose, so they never yield sentences; headings are reported separately because they scope some
claims.

Hard-wrapped prose is joined before it is split: a sentence that runs over three lines of a
Markdown paragraph is one sentence. Paragraphs end at blank lines, and these always start a
block of their own: list items, block quotes, headings, code fences, table rows, labelled
lines ("Request: ...", "Alice: ...") and settings ("retry_limit = 5"). A line with no
terminator is joined to the next only when the next goes on in lower case, the line is long
enough to have been wrapped, or it stops on a word no sentence ends on ("the", "use"), so short
lines typed one fact each stay apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FRONTMATTER_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")
_TABLE = re.compile(r"^\s*\|.*\|\s*$|^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$")
_RULE_LINE = re.compile(r"^\s*(?:[-*_]\s*){3,}$")
# Lines that start a block of their own: list items, quotes, labels and speakers, settings.
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_QUOTE = re.compile(r"^\s*>")
# A speaker or field label: one to three words, capitalised ("Request:", "Y.S.:", "Compact
# summary:") or a conventional role ("user:"); "is still believed: ..." goes on a sentence.
_LABELLED = re.compile(
    r"^\s*(?:[A-Z][\w.'/-]*(?:\s+[\w.'/-]+){0,2}|user|assistant|system|human|ai|nit|q|a)"
    r"\s*[:=]\s"
)
_SETTING = re.compile(r"^\s*[\w.\"'`-]{1,60}\s*(?::|=)\s*\S+\s*$")
WRAP_MIN_CHARS = 50
"""A line at least this long that stops mid-sentence was wrapped: the next line continues it."""
# Words a sentence cannot end on: a line stopping on one was wrapped, however short.
_DANGLING = frozenset(
    """a an the to of for in on at by with from into onto over under and or but nor so than that
    which who whose whom is are was were be been being has have had do does did will would can
    could should must may might use uses using used no not our your their its his her my this
    these those each every any some as if when while because where via per""".split()
)
# A terminator: one or more of . ! ? (plus closing quotes/brackets) followed by space or the end.
_TERMINATOR = re.compile(r"[.!?]+[\"'\u2019\u201d)\]]*(?=\s|$)")
_ENDS_SENTENCE = re.compile(r"[.!?:;][\"'\u2019\u201d)\]]*\s*$")
_LAST_TOKEN = re.compile(r"(\S+)$")
_NEVER_SPLIT_AFTER = frozenset({"e.g", "i.e", "cf", "vs", "approx", "mr", "mrs", "ms", "dr", "st"})
_SPLIT_IF_CAPITAL_FOLLOWS = frozenset({"etc", "al"})


@dataclass(frozen=True)
class Span:
    """A sentence and its [start, end) offsets in the original text.

    ``text`` is exactly ``original[start:end]`` (a wrapped sentence keeps its line breaks);
    ``flat`` is the same sentence on one line, which is what claims are read from.
    """

    start: int
    end: int
    text: str

    @property
    def flat(self) -> str:
        return " ".join(self.text.split())


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
    """Yield (offset, line, kind) with kind in prose | heading | blank | skip."""
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
        elif not line.strip():
            yield pos, line, "blank"
        elif _TABLE.match(line) or _RULE_LINE.match(line):
            yield pos, line, "skip"
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


def _starts_block(line: str) -> bool:
    return bool(_LIST_ITEM.match(line) or _QUOTE.match(line) or _LABELLED.match(line))


def _continues(previous: str, line: str) -> bool:
    """Whether prose ``line`` goes on with the paragraph whose last line is ``previous``."""
    if _starts_block(line) or _SETTING.match(previous) or _SETTING.match(line):
        return False
    if _ENDS_SENTENCE.search(previous):
        return True  # the splitter cuts there anyway
    first = line.lstrip()[:1]
    words = previous.split()
    return (not first.isupper() or len(previous.strip()) >= WRAP_MIN_CHARS
            or (bool(words) and words[-1].lower() in _DANGLING))


def _paragraphs(text: str) -> Iterator[tuple[int, int]]:
    """[start, end) of each run of prose lines that reads as one paragraph."""
    start = end = -1
    last = ""
    for offset, line, kind in _lines(text):
        if kind == "prose" and start >= 0 and _continues(last, line):
            end, last = offset + len(line), line
            continue
        if start >= 0:
            yield start, end
            start = -1
        if kind == "prose":
            start, end, last = offset, offset + len(line), line
    if start >= 0:
        yield start, end


def _keeps_going(block: str, match: re.Match[str]) -> bool:
    """True when a terminator is not a sentence end (abbreviation, list number)."""
    before = block[: match.start()]
    rest = block[match.end():].lstrip()
    if before.count("`") % 2 == 1 and "`" in block[match.end():]:
        return True  # inside a code span: "`count = var.enabled ? 1 : 0`"
    if match.group(0).endswith(")") and before.count("(") > before.count(")"):
        return True  # "(Claude Code, Codex, ...) run": the bracket closes, the sentence goes on
    if match.group(0).startswith("...") and rest[:1].islower():
        return True
    if match.group(0) != ".":
        return False
    tok = _LAST_TOKEN.search(before)
    if tok is None:
        return False
    word = tok.group(1).lstrip("(\"'").lower()
    if word in _NEVER_SPLIT_AFTER:
        return True
    if word in _SPLIT_IF_CAPITAL_FOLLOWS:
        return not (rest[:1].isupper())
    # "1. Use Redis" — a numbered-list marker at the start of the block.
    return word.isdigit() and before.strip() == tok.group(1)


def _split_block(offset: int, block: str) -> Iterator[Span]:
    cursor = 0
    for m in _TERMINATOR.finditer(block):
        if _keeps_going(block, m):
            continue
        yield from _span(offset, block, cursor, m.end())
        cursor = m.end()
    yield from _span(offset, block, cursor, len(block))


def _span(offset: int, block: str, start: int, end: int) -> Iterator[Span]:
    piece = block[start:end]
    stripped = piece.strip()
    if stripped:
        lead = len(piece) - len(piece.lstrip())
        s = offset + start + lead
        yield Span(s, s + len(stripped), stripped)


def split_sentences(text: str) -> list[Span]:
    """Sentences of the prose: paragraphs joined across wrapped lines, then split at . ! ?
    followed by whitespace or the end.

    A dot not followed by whitespace never splits, so "2.0", "config.yaml" and "v1.2.3" stay
    whole; "e.g." and friends do not end a sentence either.
    """
    out: list[Span] = []
    for start, end in _paragraphs(text):
        out.extend(_split_block(start, text[start:end]))
    return out
