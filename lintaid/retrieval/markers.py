"""What in a statement could show that an agent used it: its values, identifiers and paths.

The ledger (``lintaid.ledger``) looks for these in what the agent said and did after an
injection. Words anyone would write (the prompt's own, plain English) are no evidence, so
only distinctive tokens count: code spans, paths and file names, identifiers (``snake_case``,
``camelCase``, dotted names), URLs, versions, numbers with a unit or of three digits and more,
``@handles``, ``NAME=value`` settings, names capitalised inside a sentence ("we use Redis") and written in
an unusual way (``GitHub``, ``LightGBM``); ``injection`` adds the values of the claims shown.
"""

from __future__ import annotations

import re
from typing import Final

# One pass, leftmost first: at each place the first alternative that matches is taken, so a
# token inside a longer one (``retry.py`` in ``gateway/retry.py``) is that one's.
_MARKER: Final = re.compile("|".join(f"(?:{p})" for p in (
    r"`(?P<code>[^`\n]{2,80})`",
    r"\b[a-z][a-z0-9+.-]*://[^\s`'\")<>]+",
    r"(?<![\w@/])(?:[\w.-]+/)+[\w.-]*\w",
    r"\b[A-Z][A-Z0-9_]{2,}=\S+",
    r"(?<![\w/])[\w-]+\.[a-z][a-z0-9]{0,5}\b",
    r"\b[A-Za-z_]\w*\.[A-Za-z_][\w.]*\b",
    r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b",
    r"\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b|\b[A-Z]{2,}[a-z]\w*\b",
    r"(?<!\w)@[\w-]{2,}",
    r"\bv?\d+\.\d+(?:\.\d+)*\b",
    r"\b\d+(?:\.\d+)?\s?(?i:ms|s|m|h|d|min|mins|minutes|hours|days|weeks|seconds|%|kb|mb|"
    r"gb|tb|kib|mib|gib)\b",
    r"\b\d{3,}\b",
    r"(?<=[a-z0-9,;] )[A-Z][A-Za-z0-9]{2,}\b",
)))
_TRIM: Final = ".,;:!?)('\"`"
MIN_CHARS: Final = 3


def markers(text: str) -> list[str]:
    """The distinctive tokens of ``text``, in order of first appearance, each once."""
    found: dict[str, None] = {}
    for m in _MARKER.finditer(text):
        token = (m.group("code") or m.group(0)).strip().strip(_TRIM)
        if len(token) >= MIN_CHARS:
            found.setdefault(token, None)
    return list(found)


def used(marks: list[str], said: str, asked: str = "") -> list[str]:
    """The markers that appear in ``said`` (what the agent wrote and the paths and tools it
    used next) and not in ``asked`` (the prompt: repeating the person's own words shows
    nothing). Case-insensitive."""
    said_f, asked_f = said.lower(), asked.lower()
    return [m for m in marks if m.lower() in said_f and m.lower() not in asked_f]
