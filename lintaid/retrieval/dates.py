"""Times a query names, in general English forms: "on 8 May 2023", "in March 2023", "May 8,
2023", "in March" (any year), "in 2023", "yesterday", "last week", "this month", "a few days
ago". Relative phrases are taken against the time of the search.

A bare month needs a preposition before it and a capital ("in May"), so the verb "may" never
names a month. Nothing else ("before the migration", weekdays) is read: such a query ranks as
if it named no time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Final

DAY: Final = 86400.0
MONTHS: Final = ("january", "february", "march", "april", "may", "june", "july", "august",
                 "september", "october", "november", "december")
_MONTH: Final = (r"(January|February|March|April|May|June|July|August|September|October|"
                 r"November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)")
FORMS: Final = (
    ("day_month_year", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH},?\s+(\d{{4}})\b")),
    ("month_day_year", re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")),
    ("month_year", re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b")),
    ("month", re.compile(rf"\b(?:in|on|of|during|since|until|by|early|late|mid|last|this)\s+"
                         rf"{_MONTH}\b")),
    ("year", re.compile(r"\b(?:in|of|during|since|until|by|year)\s+((?:19|20)\d\d)\b")),
    ("relative", re.compile(r"\b(yesterday|last\s+(?:week|weekend|month|year)|this\s+"
                            r"(?:week|month|year)|(?:a\s+)?(?:few\s+)?(?:days|weeks)\s+ago)\b",
                            re.IGNORECASE)),
)
# How far back a relative phrase reaches, in days.
_BACK: Final = {"yesterday": 1, "month": 31, "year": 366, "days": 10, "weeks": 21}


@dataclass(frozen=True)
class Span:
    """``[start, end)`` in UTC seconds; ``any_year``: a month named without a year, which
    matches that month in every year (``start``/``end`` are then in the year 2000)."""

    start: float
    end: float
    any_year: bool = False

    def holds(self, when: float, slack: float = 0.0) -> bool:
        """Whether ``when`` falls in the span, or up to ``slack`` seconds after it."""
        if not self.any_year:
            return self.start <= when < self.end + slack
        year = datetime.fromtimestamp(when, timezone.utc).year
        for y in (year, year - 1):  # the slack may reach into the next year
            lo, hi = _in_year(self.start, y), _in_year(self.end, y)
            if hi <= lo:  # December: its end is in the next year
                hi = _in_year(self.end, y + 1)
            if lo <= when < hi + slack:
                return True
        return False


def _in_year(ts: float, year: int) -> float:
    d = datetime.fromtimestamp(ts, timezone.utc)
    return d.replace(year=year).timestamp()


def month_number(name: str) -> int:
    name = name.lower()
    return next(i for i, m in enumerate(MONTHS, 1) if m.startswith(name[:3]))


def _month(y: int, m: int, d: int | None = None) -> Span:
    if d is not None:
        lo = datetime(y, m, d, tzinfo=timezone.utc)
        return Span(lo.timestamp(), (lo + timedelta(days=1)).timestamp())
    lo = datetime(y, m, 1, tzinfo=timezone.utc)
    hi = datetime(y + (m == 12), m % 12 + 1, 1, tzinfo=timezone.utc)
    return Span(lo.timestamp(), hi.timestamp())


def date_phrases(text: str) -> list[tuple[int, int]]:
    """Where in ``text`` the times it names are written (character ranges)."""
    taken: list[tuple[int, int]] = []
    for _, pattern in FORMS:
        for m in pattern.finditer(text):
            if not any(m.start() < b and m.end() > a for a, b in taken):
                taken.append((m.start(), m.end()))
    return sorted(taken)


def date_spans(text: str, now: float) -> list[Span]:
    """The time spans ``text`` names (empty when it names none)."""
    spans: list[Span] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in FORMS:
        for m in pattern.finditer(text):
            if any(m.start() < b and m.end() > a for a, b in taken):
                continue  # part of a longer form already read
            try:
                spans.append(_span(kind, m, now))
            except ValueError:  # "31 February 2023"
                continue
            taken.append((m.start(), m.end()))
    return spans


def _span(kind: str, m: re.Match[str], now: float) -> Span:
    if kind == "day_month_year":
        return _month(int(m.group(3)), month_number(m.group(2)), int(m.group(1)))
    if kind == "month_day_year":
        return _month(int(m.group(3)), month_number(m.group(1)), int(m.group(2)))
    if kind == "month_year":
        return _month(int(m.group(2)), month_number(m.group(1)))
    if kind == "month":
        s = _month(2000, month_number(m.group(1)))
        return Span(s.start, s.end, any_year=True)
    if kind == "year":
        y = int(m.group(1))
        return Span(_month(y, 1).start, _month(y + 1, 1).start)
    phrase = " ".join(m.group(1).lower().split())
    back = next((days for key, days in _BACK.items() if key in phrase), 8)  # a week
    return Span(now - back * DAY, now + DAY)
