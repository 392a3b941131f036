"""A record's text as statements: the units an excerpt is made of and relevance is judged on.

Sentences come from the policy's splitter (``lintaid.policy.sentences.split_sentences``:
paragraphs joined across wrapped lines, list items, labelled lines). A captured turn is stored
with its request and result each flattened onto one line, so a sentence there may still hold
a whole bullet list, a table or a heading: those are cut again at their inline markers (`` - ``
bullets, numbered items, ``##`` headings, table rows, fenced code), never inside a code span.
What the splitter leaves out (table rows, fenced code, headings of a multi-line note or
document) becomes statements too, so every line of a record belongs to one.

Each statement knows which part of a capture it is in (``Request:``, ``Result:``, a compaction
summary, the lists of paths and tools) and whether it is a question: a request is context, a
question is not an answer.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final

from lintaid.capture.record import PATHS, REQUEST, RESULT, SUMMARY, TOOLS
from lintaid.policy.sentences import split_sentences

BODY: Final = "body"  # a note, a document, anything that is not a labelled capture part
PARTS: Final = {REQUEST: "request", RESULT: "result", SUMMARY: "summary", PATHS: "paths",
                TOOLS: "tools"}
_PART_LINE: Final = re.compile(r"^(" + "|".join(re.escape(p) for p in PARTS) + r"):[ \t]*",
                               re.MULTILINE)
# Inline block markers of a flattened line: a bullet, a numbered item ("2. "; "2)" reads as
# "(was 70)" too often), a heading, a table row (the "|" after "| "); each starts a statement
# (outside code spans).
_INLINE_START: Final = re.compile(
    r"(?<=\s)(?:[-*\u2022](?=\s+\S)|\d{1,2}\.(?=\s+[^\s\d])|#{1,6}(?=\s))|(?<=\|\s)\|")
_FENCE: Final = re.compile(r"```|~~~")
# A fence opened and closed on one (flattened) line, or a code span.
_INLINE_CODE: Final = re.compile(r"```[^\n]*?```|`[^`\n]+`")
_CODE_SPAN: Final = re.compile(r"`[^`\n]*`")
_TABLE_RULE: Final = re.compile(r"^[\s|:\-]+$")
_WORD: Final = re.compile(r"\w")
_MARKER: Final = re.compile(r"^(?:[-*\u2022]|\d{1,2}[.)]|#{1,6}|\|)\s*")


@dataclass(frozen=True)
class Statement:
    """``text`` is ``content[start:end]`` on one line; ``part`` is the capture part it is in
    (``PARTS`` values, or ``BODY``); ``code``: a fenced block, kept whole."""

    start: int
    end: int
    text: str
    part: str = BODY
    code: bool = False

    @property
    def question(self) -> bool:
        return self.text.rstrip().endswith("?")

    @property
    def listing(self) -> bool:
        """A capture's list of paths or tools, not something said."""
        return self.part in ("paths", "tools")


def statements(content: str) -> list[Statement]:
    """Every statement of ``content`` in order, none overlapping, each with a word in it.

    Splitting costs a millisecond or more for a long capture and the same records come up
    prompt after prompt (and in admission and rendering of one prompt), so the newest
    splits are kept (``CACHED`` texts)."""
    return list(_statements(content))


CACHED: Final = 2048


@functools.lru_cache(maxsize=CACHED)
def piece_of(evidence: str, value: str) -> str:
    """The statement of a claim's ``evidence`` (a sentence, or the list item or clause of a
    flattened one) that holds its ``value``: what a digest quotes of it. The first answer
    when none holds the value as written; the evidence itself when it has no statement."""
    pieces = [p for p in statements(evidence) if not p.listing]
    wanted = value.strip().lower()
    for piece in pieces:
        if wanted and wanted in piece.text.lower():
            return piece.text
    answers = [p for p in pieces if not p.question]
    return answers[0].text if answers else evidence


def _statements(content: str) -> tuple[Statement, ...]:
    parts = _parts(content)
    out: list[Statement] = []
    covered: list[tuple[int, int]] = []
    for start, end in _joined(content, [(sp.start, sp.end) for sp in split_sentences(content)]):
        covered.append((start, end))
        out.extend(_pieces(content, start, end, _part_at(parts, start)))
    for start, end in _gaps(content, covered):
        out.extend(_pieces(content, start, end, _part_at(parts, start)))
    out.sort(key=lambda s: s.start)
    return tuple(out)


def _joined(content: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sentence spans with those a code fence or code span runs across joined: "./..." in
    ```go test ./...``` ends no sentence."""
    code = [(m.start(), m.end()) for m in _INLINE_CODE.finditer(content)]
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and any(a < out[-1][1] and b > start for a, b in code):
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _parts(content: str) -> list[tuple[int, str]]:
    """(offset, part) where each labelled capture part begins."""
    return [(m.start(), PARTS[m.group(1)]) for m in _PART_LINE.finditer(content)]


def _part_at(parts: list[tuple[int, str]], offset: int) -> str:
    part = BODY
    for start, name in parts:
        if start > offset:
            break
        part = name
    return part


def _gaps(content: str, covered: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Lines (or stretches of them) no sentence covers: table rows, fenced code, headings."""
    taken = sorted(covered)
    out: list[tuple[int, int]] = []
    pos = 0
    fence_start: int | None = None
    for line in content.splitlines(keepends=True):
        start, end = pos, pos + len(line.rstrip("\r\n"))
        pos += len(line)
        if any(s < end and e > start for s, e in taken):
            continue
        stripped = line.strip()
        if fence_start is not None:
            if _FENCE.match(stripped):
                out.append((fence_start, end))
                fence_start = None
            continue
        if _FENCE.match(stripped):
            fence_start = start
            continue
        if stripped and not _TABLE_RULE.match(stripped) and _WORD.search(stripped):
            out.append((start, end))
    if fence_start is not None:
        out.append((fence_start, len(content)))
    return out


def _pieces(content: str, start: int, end: int, part: str) -> list[Statement]:
    """The statements of ``content[start:end]``: a fenced block whole, the rest cut at inline
    block markers outside code spans."""
    out: list[Statement] = []
    text = content[start:end]
    cursor = 0
    for fence in _fences(text):
        out.extend(_inline(content, start + cursor, start + fence[0], part))
        out.extend(_statement(content, start + fence[0], start + fence[1], part, code=True))
        cursor = fence[1]
    out.extend(_inline(content, start + cursor, end, part))
    return out


def _fences(text: str) -> list[tuple[int, int]]:
    """[start, end) of each ```...``` stretch (an unclosed one runs to the end)."""
    out: list[tuple[int, int]] = []
    marks = [m.start() for m in _FENCE.finditer(text)]
    for i in range(0, len(marks), 2):
        opened = marks[i]
        closed = marks[i + 1] + 3 if i + 1 < len(marks) else len(text)
        out.append((opened, closed))
    return out


def _inline(content: str, start: int, end: int, part: str) -> list[Statement]:
    text = content[start:end]
    spans = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(text)]
    cuts = [m.start() for m in _INLINE_START.finditer(text)
            if not any(s < m.start() < e for s, e in spans)]
    out: list[Statement] = []
    bounds = [0, *cuts, len(text)]
    for a, b in zip(bounds, bounds[1:], strict=False):
        out.extend(_statement(content, start + a, start + b, part))
    return out


def _statement(content: str, start: int, end: int, part: str, *,
               code: bool = False) -> list[Statement]:
    raw = content[start:end]
    lead = len(raw) - len(raw.lstrip())
    trail = len(raw) - len(raw.rstrip())
    start, end = start + lead, end - trail
    if end <= start:
        return []
    flat = " ".join(content[start:end].split())
    if start == _line_start(content, start):
        label = _PART_LINE.match(content, start)
        if label is not None:  # "Result: ..." reads as its text; the part says the rest
            flat = flat[len(" ".join(label.group(0).split())):].lstrip()
    body = _MARKER.sub("", flat) if not code else flat
    if not _WORD.search(body) or (not code and _TABLE_RULE.match(body)):
        return []
    return [Statement(start, end, flat, part, code)]


def _line_start(content: str, offset: int) -> int:
    return content.rfind("\n", 0, offset) + 1
