"""Statements: the units a belief is made of, each with its context.

A record's *belief text* is what was done or decided: a capture's result (or what a compaction
kept), a note added on purpose, a decision document. A capture's request is context: its
statements take part only when the result confirms them (the value the request states is
in the result too, and not as the old side of a change), so "Our CI runs on Python 3.10;
bump it." never becomes a decision.

Belief text is cut into statements: sentences (``lintaid.policy.sentences``), then clauses at
";" and at a ":" whose left side is a clause ("Rolled the image builder back to Kaniko:
removed the buildx cache step"), never at the ":" of a "key: value" pair; list items;
headings (``## Went back to LightGBM``); and assignment lines inside code blocks
(``schedule="30 4 * * *"``). Each statement carries its *context*: the heading it sits under,
the lead-in line that introduces its list ("pgxpool settings:", "I'd suggest tightening it
to:") and a conventional-commit headline's scope. Context lends topic words, and a lead-in
that proposes or plans lends its cue: the items of "I'd suggest:" are not beliefs. A heading
(``##`` or a line in bold) that is hypothetical ("**If sponsorship happens**", "## Options")
lends its cue to everything under it, up to the next heading.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from . import cues
from .sentences import frontmatter_end, split_sentences

REQUEST_LABELS: Final = ("Request", "User prompt")
BELIEF_LABELS: Final = ("Result", "Compact summary")
CONTEXT_LABELS: Final = ("Affected paths", "Tools used")
_LABEL_LINE = re.compile(r"^(Request|Result|Compact summary|Affected paths|Tools used|"
                         r"User prompt): ?", re.MULTILINE)


@dataclass(frozen=True)
class Statement:
    start: int
    end: int
    text: str  # flat, on one line
    context: str = ""  # heading, lead-in, headline scope
    context_cue: str = cues.NONE
    request: bool = False  # read from a capture's request (context unless confirmed)
    background: bool = False  # in a decision record's context section: what was, not decided
    code: bool = False  # an assignment line of a code block
    old: str = ""  # for a diff's "+" line: the value its "-" line had


@dataclass(frozen=True)
class Sections:
    """A record's text cut by its capture labels: belief spans, request spans."""

    belief: list[tuple[int, int]]
    request: list[tuple[int, int]]


def sections(text: str, kind: str) -> Sections:
    """Where a record's belief text and request text lie. A note or document is all belief;
    a capture's lines are labelled (``lintaid.capture.record``)."""
    marks = list(_LABEL_LINE.finditer(text))
    if not marks:
        if kind == "prompt":
            return Sections([], [(0, len(text))])
        # A document's YAML frontmatter (``supersedes:``, ``status:``) is metadata, not a
        # statement: explicit links come from it (``relations.explicit_relations``).
        return Sections([(frontmatter_end(text), len(text))], [])
    belief: list[tuple[int, int]] = []
    request: list[tuple[int, int]] = []
    if marks[0].start() > 0 and text[:marks[0].start()].strip():
        belief.append((0, marks[0].start()))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        label = m.group(1)
        span = (m.end(), end)
        if label in BELIEF_LABELS:
            belief.append(span)
        elif label in REQUEST_LABELS:
            request.append(span)
    return Sections(belief, request)


# ---------------------------------------------------------------------------------------------
# Cutting text into statements

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)
_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_LIST = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+")
_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][\w.-]{0,60})\s*(?:=|:)\s*(\S.{0,160}?)\s*,?\s*$")
_COMMENT = re.compile(r"\s+(?:#|//)\s.*$")
_COMMIT = re.compile(r"^(?:feat|fix|chore|perf|refactor|revert|build|ci|ops|deps|config|docs|"
                     r"test|style)(?:\(([^)]*)\))?!?:\s*(.+)$", re.IGNORECASE)
_TABLE = re.compile(r"^\s*\|")
_BOLD_LINE = re.compile(r"^\s*(?:\*\*|__)(.+?)(?:\*\*|__)\s*:?\s*$")
_SCOPING: Final = frozenset({cues.PROPOSAL, cues.CONDITION})
# The sections of a decision record (Nygard's ADR, MADR) that tell what was before the
# decision or what pressed for one: "## Context", "Context and Problem Statement", "Decision
# Drivers", "Background:". What they state is the situation the decision changed.
_BACKGROUND = re.compile(
    r"^(?:context(?:\s+and\s+problem(?:\s+statement)?)?|background|problem(?:\s+statement)?|"
    r"motivation|decision\s+drivers|forces|status\s+quo|current\s+situation|"
    r"the\s+problem)\s*:?\s*$", re.IGNORECASE)
_BACKGROUND_LABEL = re.compile(
    r"^\s*(?:\*\*|__)?(?:context|background|problem(?:\s+statement)?|motivation)"
    r"(?:\*\*|__)?\s*:(?:\*\*|__)?\s+\S", re.IGNORECASE)
_SECTION = re.compile(r"^\s*(?:\*\*|__)?(?:decision(?:\s+outcome)?|consequences|status|outcome|"
                      r"chosen\s+option|resolution)(?:\*\*|__)?\s*:", re.IGNORECASE)
_SECTION_HEADING = re.compile(
    r"^(?:decision(?:\s+outcome)?|consequences|status|outcome|pros\s+and\s+cons(?:\s+of\s+the"
    r"\s+options)?|considered\s+options|more\s+information|links|confirmation|validation)"
    r"\s*:?\s*$", re.IGNORECASE)
# Headings of the options a record weighed ("Alternatives considered"): proposals.
_OPTIONS = re.compile(r"^(?:other\s+)?alternatives?(?:\s+considered)?\s*:?\s*$",
                      re.IGNORECASE)


def _scoping(heading: str) -> str:
    """The cue a heading lends what it heads: a hypothetical one ("If sponsorship happens",
    "Options", "Hypothetical 1.0 plan") makes nothing under it a belief; any other lends none
    (a "Follow-ups" heading may head what was done)."""
    if _OPTIONS.match(heading.strip()):
        return cues.PROPOSAL
    found = cues.cue(heading)
    return found if found in _SCOPING else cues.NONE
MAX_STATEMENT_CHARS: Final = 600


def statements(text: str, start: int = 0, end: int | None = None, *,
               request: bool = False) -> list[Statement]:
    """The statements of ``text[start:end]``, spans into ``text``."""
    stop = len(text) if end is None else end
    out: list[Statement] = []
    heading = ""
    lead = ""
    lead_cue = cues.NONE
    lead_indent = -1
    headline_scope = ""
    scope_cue = cues.NONE  # a heading's that makes what it heads hypothetical
    background = False  # under a heading of a decision record's context (``_BACKGROUND``)
    section_level = 99  # the level of the heading that set ``scope_cue`` or ``background``
    labelled = False  # in a paragraph led by "Context:" (to its blank line)
    in_fence = False
    removed: dict[str, str] = {}  # a diff's "-" lines, by key
    pos = start
    first_line = True
    for line_start, line in _lines(text, start, stop):
        raw = line.rstrip()
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if in_fence:
            diff = raw[:1] if raw[:1] in "+-" and not raw.startswith(("+++", "---")) else ""
            body = raw[1:] if diff else raw
            m = _ASSIGN.match(_COMMENT.sub("", body))
            if m and not body.lstrip().startswith(("#", "//", "--")):
                key = m.group(1)
                if diff == "-":
                    removed[key] = m.group(2)  # what the next "+" line of this key replaces
                    continue
                s = line_start + raw.index(key)
                out.append(Statement(s, line_start + len(raw), " ".join(body.split()),
                                     heading, cues.CHANGE if diff else cues.NONE, request,
                                     code=True, old=removed.pop(key, "") if diff else ""))
            continue
        if not raw.strip():
            labelled = False
            continue
        if _TABLE.match(raw):
            continue
        h = _HEADING.match(raw)
        if h:
            heading = h.group(2).strip()
            level = len(h.group(1))
            if level <= section_level or (scope_cue == cues.NONE and not background):
                # a subheading stays in its section ("### zerolog" under "## Pros and Cons
                # of the Options"); a heading as high as the section's ends it
                scope_cue = _scoping(heading)
                background = bool(_BACKGROUND.match(heading.strip("*_ ")))
                section_level = level if scope_cue != cues.NONE or background else 99
            lead, lead_cue, lead_indent = "", cues.NONE, -1
            if background or scope_cue != cues.NONE or _SECTION_HEADING.match(heading):
                continue  # "## Decision Outcome" names a part of the record, not a value
            hs = line_start + raw.index(h.group(2)) if h.group(2) else line_start
            out.extend(_clauses(text, hs, hs + len(h.group(2)), "", cues.NONE, request))
            continue
        if first_line:
            first_line = False
            c = _COMMIT.match(raw.strip())
            if c:
                headline_scope = (c.group(1) or "").strip()
                hs = line_start + raw.index(c.group(2))
                out.extend(_clauses(text, hs, line_start + len(raw), headline_scope,
                                    cues.NONE, request))
                continue
        bold = _BOLD_LINE.match(raw)
        if bold:
            scope_cue = _scoping(bold.group(1))
            background = bool(_BACKGROUND.match(bold.group(1).strip()))
        elif _BACKGROUND.match(raw.strip()):
            background = True  # a bare "Context:" line heads what follows
            continue
        elif _SECTION.match(raw):
            background = labelled = False  # "Decision:", "Consequences:" end it
        labelled = labelled or bool(_BACKGROUND_LABEL.match(raw))
        item = _LIST.match(raw)
        indent = len(item.group(1)) if item else -1
        if item is None and lead and not raw.startswith((" ", "\t")):
            lead, lead_cue, lead_indent = "", cues.NONE, -1
        if item is not None and lead and indent <= lead_indent:
            lead, lead_cue, lead_indent = "", cues.NONE, -1
        context = " ".join(x for x in (headline_scope, heading, lead) if x)
        body_start = line_start + (item.end() if item else 0)
        line_end = line_start + len(raw)
        own_cue = lead_cue if item is not None and lead_cue != cues.NONE else scope_cue
        found = _clauses(text, body_start, line_end, context,
                         cues.NONE if bold else own_cue, request,
                         background or labelled)
        out.extend(found)
        # A line ending in ":" introduces what follows (a list, or the next lines).
        if raw.rstrip().endswith(":"):
            body = text[body_start:line_end].strip()
            lead = body.rstrip(":").strip()
            lead_cue = cues.cue(lead)
            lead_indent = indent if item is not None else -1
        pos = line_end
    del pos
    return _joined_sentences(out)


def _lines(text: str, start: int, stop: int) -> Iterator[tuple[int, str]]:
    pos = start
    while pos < stop:
        nl = text.find("\n", pos, stop)
        end = stop if nl < 0 else nl
        yield pos, text[pos:end]
        pos = end + 1


_CLAUSE_COLON = re.compile(r":\s+")
_SEMI = re.compile(r";\s+|\s+[\u2014\u2013]\s+|\s+--\s+")
_VERBISH = re.compile(
    r"\b(?:is|are|was|were|has|have|had|uses?|used|runs?|ran|moved|switched|rolled|removed|"
    r"added|changed|set|made|did|went|took|goes|now|replaced|upgraded|bumped|raised|lowered|"
    r"reduced|migrated|deployed|enabled|disabled|restored|reverted|fixed|created|wrote|found|"
    r"gave|got|kept|left|dropped|updated|pinned|configured|introduced|started|stopped)\b",
    re.IGNORECASE)


def _clauses(text: str, start: int, end: int, context: str, context_cue: str,
             request: bool, background: bool = False) -> list[Statement]:
    """Sentences of one line or paragraph, then clauses (see the module docstring)."""
    out: list[Statement] = []
    for span in split_sentences(text[start:end]) or []:
        s0 = start + span.start
        piece = text[s0:start + span.end]
        for cs, ce in _cut_clauses(piece):
            flat = " ".join(piece[cs:ce].split()).strip(" .")
            if not flat or len(flat) > MAX_STATEMENT_CHARS or not re.search(r"\w", flat):
                continue
            out.append(Statement(s0 + cs, s0 + ce, flat, context, context_cue, request,
                                 background=background))
    return out


def _cut_clauses(piece: str) -> list[tuple[int, int]]:
    """Clause spans of one sentence: at ";" and dashes, and at a ":" whose left side is a
    clause (it has a verb and more than a few words), not a label or a key."""
    seps: list[tuple[int, int]] = []
    for m in _SEMI.finditer(piece):
        if not _inside_code(piece, m.start()):
            seps.append((m.start(), m.end()))
    for m in _CLAUSE_COLON.finditer(piece):
        if _inside_code(piece, m.start()):
            continue
        prev = max((e for _s, e in seps if e <= m.start()), default=0)
        left = piece[prev:m.start()]
        if len(left.split()) >= 4 and _VERBISH.search(left) and not left.rstrip()[-1:].isdigit():
            seps.append((m.start(), m.end()))
    spans: list[tuple[int, int]] = []
    cursor = 0
    for s, e in sorted(seps):
        spans.append((cursor, s))
        cursor = e
    spans.append((cursor, len(piece)))
    out = []
    for a, b in spans:
        chunk = piece[a:b]
        if chunk.strip():
            lead = len(chunk) - len(chunk.lstrip())
            out.append((a + lead, a + len(chunk.rstrip())))
    return out or [(0, len(piece))]


def _inside_code(piece: str, at: int) -> bool:
    return piece[:at].count("`") % 2 == 1


def _joined_sentences(out: list[Statement]) -> list[Statement]:
    seen: set[tuple[int, int]] = set()
    kept = []
    for st in out:
        if (st.start, st.end) in seen:
            continue
        seen.add((st.start, st.end))
        kept.append(st)
    return kept


def record_statements(text: str, kind: str) -> tuple[list[Statement], list[Statement]]:
    """(belief statements, request statements) of a record's text."""
    sec = sections(text, kind)
    belief = [st for s, e in sec.belief for st in statements(text, s, e)]
    request = [st for s, e in sec.request for st in statements(text, s, e, request=True)]
    return belief, request


def headline(text: str, kind: str) -> str:
    """The first line of a capture's result (a commit subject or a heading), else ""."""
    sec = sections(text, kind)
    if not sec.belief or not sec.request:
        return ""
    s, e = sec.belief[0]
    first = text[s:e].strip().splitlines()
    return first[0] if first else ""


def request_text(text: str, kind: str) -> str:
    sec = sections(text, kind)
    return "\n".join(text[s:e] for s, e in sec.request)


__all__ = ["BELIEF_LABELS", "REQUEST_LABELS", "Sections", "Statement", "headline",
           "record_statements", "request_text", "sections", "statements"]
