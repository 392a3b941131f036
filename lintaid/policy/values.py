"""Typed values in a statement: what a decision is *about* is found by what it *says*.

A sentence template ("X uses Y for Z") fits the phrasings it was written against. A value,
by contrast, is recognisable by its form wherever it stands: a URL, a bucket, a path, an
``@handle``, a version, a duration, a rate, a size, a percentage, a count with its unit, a
``NAME=value`` setting, an identifier in backticks, a tool or service name. ``find_values``
returns every value of a statement with its type, its canonical form (so "5m", "5 minutes"
and "300s" are one duration) and its span; ``lintaid.policy.statements`` builds claims from
them, and the words that are not values make the claim's topic.

Names are the hard part: a capitalised word may be a tool ("Kaniko") or just the start of a
sentence. A name is taken when it has the shape of one (inner capitals, digits, a dot:
"XGBoost", "R2", "Fly.io"), when it is capitalised away from the start of the statement, or
when it is a known tool (``lintaid.policy.vocabulary``: common development tools and
services, plus the project's own dependencies read from its manifests). Generic acronyms
("API", "CI", "HTTP") and words of ordinary English are never names by shape alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from .vocabulary import COMMON_WORDS, ENGLISH_TOOL_NAMES, GENERIC_ACRONYMS, is_known_tool

URL: Final = "url"
EMAIL: Final = "email"
HANDLE: Final = "handle"
PATH: Final = "path"
HOST: Final = "host"
VERSION: Final = "version"
DURATION: Final = "duration"
RATE: Final = "rate"
SCHEDULE: Final = "schedule"
SIZE: Final = "size"
PERCENT: Final = "percent"
NUMBER: Final = "number"
BOOLEAN: Final = "boolean"
CODE: Final = "code"
NAME: Final = "name"
LEVEL: Final = "level"

NUMERIC_TYPES: Final = frozenset({NUMBER, PERCENT})
"""A bare number and a fraction compare with each other (0.05 and 5%)."""
TYPES: Final = frozenset({URL, EMAIL, HANDLE, PATH, HOST, VERSION, DURATION, RATE, SCHEDULE,
                          SIZE, PERCENT, NUMBER, BOOLEAN, CODE, NAME, LEVEL})
"""Every kind of value; a claim's predicate is one of them unless a rule named it."""


SCALARS: Final = frozenset({"number", "percent", "duration", "size", "rate", "boolean", "code",
                            "schedule", "level", "version"})
_RULE_SCALARS: Final = frozenset({"value", "default"})


def compatible(a: str, b: str) -> bool:
    """Whether values of types ``a`` and ``b`` can be two choices for one thing (a rule's
    "value" or "default" is any scalar)."""
    if a == b:
        return True
    pair = {a, b}
    if pair & _RULE_SCALARS and pair <= SCALARS | _RULE_SCALARS:
        return True
    if pair <= NUMERIC_TYPES:
        return True
    if pair <= {NAME, CODE, LEVEL}:
        return True  # `kaniko` in backticks is the name Kaniko; "X-Small" a level or a name
    if pair <= {HANDLE, NAME}:
        return True  # an owner given as @ana or as Ana
    if pair <= {URL, HOST} or pair <= {PATH, CODE}:
        return True
    if pair <= {RATE, SCHEDULE, DURATION}:
        return True  # "every 6 hours", "4 times per day", "hourly"
    if pair <= {CODE, VERSION, NUMBER}:
        return True  # `1.23.0`, `40`; "3.10" said alone beside "Python 3.11"
    return False


@dataclass(frozen=True)
class Value:
    start: int
    end: int
    raw: str
    norm: str
    type: str
    name: str = ""
    """For a version, what it is a version of ("python" in "Python 3.11"); for a count, its
    unit noun ("conns" in "40 conns"); for a setting's value, the setting's name."""


# ---------------------------------------------------------------------------------------------
# Canonical forms

_DURATION_UNITS: Final = {
    "ms": 0.001, "msec": 0.001, "msecs": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": 86400.0, "day": 86400.0, "days": 86400.0,
    "w": 604800.0, "wk": 604800.0, "week": 604800.0, "weeks": 604800.0,
    "month": 2592000.0, "months": 2592000.0, "mo": 2592000.0,
    "y": 31536000.0, "yr": 31536000.0, "year": 31536000.0, "years": 31536000.0,
}
_SIZE_UNITS: Final = {
    "b": 1, "byte": 1, "bytes": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4, "k": 1000,
}
_PER_UNITS: Final = {
    "s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0,
    "h": 3600.0, "hr": 3600.0, "hour": 3600.0, "d": 86400.0, "day": 86400.0,
    "w": 604800.0, "week": 604800.0, "month": 2592000.0,
}
_FREQUENCIES: Final = {
    "hourly": 3600.0, "daily": 86400.0, "nightly": 86400.0, "weekly": 604800.0,
    "monthly": 2592000.0, "yearly": 31536000.0, "annually": 31536000.0,
    "biweekly": 1209600.0, "fortnightly": 1209600.0,
}
_BOOLEANS: Final = {"true": "true", "enabled": "true", "on": "true", "false": "false",
                    "disabled": "false", "off": "false"}
_LEVELS: Final = frozenset(
    "x-small xsmall small medium large x-large xlarge 2x-large 3x-large xs s m l xl xxl "
    "low high critical debug info warn warning error fatal trace strict lax".split())
_NUMBER_WORDS: Final = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                        "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12,
                        "fifteen": 15, "twenty": 20, "thirty": 30, "sixty": 60,
                        "a": 1, "an": 1, "once": 1, "twice": 2}


def _num(text: str) -> float:
    return float(text.replace(",", "").replace("_", ""))


def _fmt(x: float) -> str:
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


def duration_units(text: str, canonical: str) -> set[float]:
    """The units (in seconds) ``canonical`` (a duration, "600s") is written in in ``text``:
    {1.0} for "600 seconds", {60.0} for "10 minutes"; empty where it is not written."""
    return {_DURATION_UNITS[m.group(2).lower()] for m in _DURATION_RX.finditer(text)
            if duration_norm(_num(m.group(1)), m.group(2)) == canonical}


def duration_norm(number: float, unit: str) -> str:
    return _fmt(number * _DURATION_UNITS[unit.lower()]) + "s"


# ---------------------------------------------------------------------------------------------
# Patterns, in the order they claim text (an earlier match wins its span)

_I = re.IGNORECASE
_NUMRX = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_DUR_UNIT = "|".join(sorted((re.escape(u) for u in _DURATION_UNITS), key=len, reverse=True))
_SIZE_UNIT = "|".join(sorted((re.escape(u) for u in _SIZE_UNITS if u != "k"), key=len,
                             reverse=True))
_PER_UNIT = "|".join(sorted((re.escape(u) for u in _PER_UNITS), key=len, reverse=True))

_URL_RX = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s`'\"()<>\[\]{}]+", _I)
_EMAIL_RX = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_HANDLE_RX = re.compile(r"(?<![\w.@/])@[A-Za-z0-9][\w-]*(?:/[\w-]+)?")
_SETTING_RX = re.compile(
    r"(?<![\w.$/-])([A-Za-z_][A-Za-z0-9_]*(?:[.][A-Za-z_][A-Za-z0-9_]*)*)\s*(?:=|:=)\s*"
    r"(\"[^\"\n]{0,120}\"|'[^'\n]{0,120}'|[^\s,;)`'\"]{1,120})")
_CRON_RX = re.compile(r"(?<![\w*/-])(?:[\d*][\d*/,-]*\s+){4}[\d*][\d*/,-]*(?![\w*/-])")
_STEP = re.compile(r"\*/(\d{1,3})")
_FIXED = re.compile(r"\d{1,2}")


def cron_norm(expr: str) -> str:
    """A cron expression's canonical form: a plain interval ("0 */6 * * *", "*/15 * * * *")
    as the period it runs at, the form "4 times per day" and "every 6 hours" take, so that
    one schedule said both ways in a statement is one value; any other as written ("cron 0 0
    * * *": a time of day is more than a period)."""
    fields = expr.split()
    if len(fields) == 5 and fields[2:] == ["*", "*", "*"]:
        minute, hour = fields[:2]
        step_m, step_h = _STEP.fullmatch(minute), _STEP.fullmatch(hour)
        if step_m and hour == "*" and int(step_m.group(1)) > 0:
            return f"every {int(step_m.group(1)) * 60}s"
        if step_h and _FIXED.fullmatch(minute) and int(step_h.group(1)) > 0:
            return f"every {int(step_h.group(1)) * 3600}s"
    return "cron " + " ".join(fields)


_RATE_RX = re.compile(
    rf"(?<![\w.])({_NUMRX}|\w+)\s+times?\s+(?:a|an|per|each)\s+({_PER_UNIT})\b"
    rf"|(?<![\w.])({_NUMRX})\s*(?:([a-z][\w-]{{0,20}})\s*)?(?:/|\s+per\s+|\s+an?\s+)"
    rf"({_PER_UNIT})\b"
    rf"|(?<![\w.])({_NUMRX})\s*(rpm|rps|rph|qps|req/s|req/min|rpd)\b"
    rf"|\b(?:every|each)\s+(?:({_NUMRX}|\w+)\s+)?({_DUR_UNIT})\b"
    rf"|\b(hourly|daily|nightly|weekly|monthly|yearly|annually|biweekly|fortnightly)\b",
    _I)
_PERCENT_RX = re.compile(rf"(?<![\w.])({_NUMRX})\s*(?:%|\s+percent\b)", _I)
_SIZE_RX = re.compile(rf"(?<![\w.])({_NUMRX})\s*({_SIZE_UNIT})\b", _I)
_DURATION_RX = re.compile(rf"(?<![\w.])({_NUMRX})\s*-?\s*({_DUR_UNIT})\b(?![\w/])", _I)
_VERSION_RX = re.compile(
    r"(?<![\w.])(?:v|go|py|node)?(\d+(?:\.\d+){1,3}(?:[-+][0-9a-z][0-9a-z.-]*[0-9a-z])?|\d+\.x)"
    r"(?![\w]|\.\w)|(?<![\w.])v(\d+)(?![\w]|\.\w)", _I)
_PATH_RX = re.compile(
    r"(?<![\w.@:/-])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.*-]*"
    r"|(?<![\w/@-])[\w-]+(?:\.[\w-]+)*\.(?:py|go|rs|ts|tsx|js|jsx|json|ya?ml|toml|md|rst|txt|"
    r"sql|sh|cfg|ini|conf|lock|mod|sum|tf|hcl|proto|html|css|env)\b", _I)
_HOST_RX = re.compile(
    r"(?<![\w.@/-])(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|app|cloud|co|ai|sh|run|internal|"
    r"local|example|test)\b(?![\w/-])", _I)
_NUMBER_RX = re.compile(rf"(?<![\w.])({_NUMRX})(?![\w]|\.\w)")
_CODE_RX = re.compile(r"`([^`\n]{1,160})`")
_PAREN_TOKEN_RX = re.compile(r"(?<=[\w`] )\(([a-z][a-z0-9_.-]{1,24})\)")
_QUOTED_RX = re.compile(r"\"([^\"\n]{1,80})\"|\u201c([^\u201d\n]{1,80})\u201d")
_WORD_RX = re.compile(r"[A-Za-z][\w.+#-]*[\w+#]|[A-Za-z]")
_COUNT_NOUN = re.compile(r"\s*([a-z][a-z_-]{1,20})\b", _I)

# A version's owner: the word right before it ("Python 3.11", "pgx v5.7.2", "go 1.22").
_VERSION_OWNER = re.compile(r"([A-Za-z][\w.+-]{0,30})[\s:@=-]*$")
_NOT_A_COUNT_NOUN: Final = frozenset(
    "and or to of in on at for by with from the a an is are was were be than then so but "
    "as if per via into over under after before since until instead rather more less".split())


@dataclass
class _Found:
    spans: list[tuple[int, int]]

    def free(self, start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in self.spans)

    def take(self, start: int, end: int) -> None:
        self.spans.append((start, end))


def _typed_literal(text: str) -> tuple[str, str, str] | None:
    """(type, norm, name) of a whole literal (a code span or a setting's value), if typed."""
    t = text.strip().strip("\"'").strip()
    if not t:
        return None
    low = t.lower()
    if _URL_RX.fullmatch(t):
        return URL, low.rstrip("/"), ""
    if _EMAIL_RX.fullmatch(t):
        return EMAIL, low, ""
    if _HANDLE_RX.fullmatch(t):
        return HANDLE, low, ""
    if _CRON_RX.fullmatch(t):
        return SCHEDULE, cron_norm(t), ""
    if low in _BOOLEANS:
        return BOOLEAN, _BOOLEANS[low], ""
    m = _DURATION_RX.fullmatch(t)
    if m:
        return DURATION, duration_norm(_num(m.group(1)), m.group(2)), ""
    m = _SIZE_RX.fullmatch(t)
    if m:
        return SIZE, _fmt(_num(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]) + "b", ""
    m = _PERCENT_RX.fullmatch(t)
    if m:
        return PERCENT, _fmt(_num(m.group(1)) / 100), ""
    m = re.fullmatch(r"([A-Za-z][\w.+-]*?)[\s:@=-]*(v?)(\d+(?:\.\d+){0,3}(?:[-+][\w.-]+)?)", t)
    if m and not m.group(1).isdigit() and (
            m.group(3).count(".") >= 2 or "-" in m.group(3) or m.group(2)
            or is_known_tool(m.group(1)) or "version" in m.group(1).lower()):
        return VERSION, _version_norm(m.group(3)), m.group(1)
    m = _VERSION_RX.fullmatch(t)
    if m and "." in t:
        return VERSION, _version_norm(m.group(1) or m.group(2) or t), ""
    if _NUMBER_RX.fullmatch(t):
        return NUMBER, t.replace(",", ""), ""
    if low in _LEVELS:
        return LEVEL, low.replace("xsmall", "x-small").replace("xlarge", "x-large"), ""
    return None


def _leftover_name(inner: str, v: Value) -> str:
    """What a value inside a code span is of: the words around it ("toolchain")."""
    rest = (inner[:v.start] + " " + inner[v.end:]).strip(" :=@-")
    words = rest.split()
    return words[-1].lower() if len(words) == 1 else ""


def _version_word_near(text: str, start: int) -> bool:
    return re.search(r"\b(?:version|release|v|pin(?:s|ned)?|upgrade[sd]?|bump(?:ed)?)\b",
                     text[max(0, start - 40):start], _I) is not None


def _version_norm(v: str) -> str:
    v = v.lower().lstrip("v")
    return v


_SPANS: Final = ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second"))


def _seconds_said(seconds: float) -> str:
    for size, unit in _SPANS:
        if seconds >= size and seconds % size == 0:
            n = int(seconds // size)
            return f"{n} {unit}" + ("s" if n != 1 else "")
    return f"{_fmt(seconds)} s"


def display(norm: str, kind: str) -> str:
    """A canonical value as a person writes it: "1209600s" as "14 days", "every 21600s" as
    "every 6 hours", "9000/h" as "150/min", a percentage's "0.05" as "5%"; any other as
    it is. For what an entry tells the agent, which reads "now: 14 days" and not
    "now: 1209600s"."""
    try:
        if kind == DURATION and norm.endswith("s"):
            return _seconds_said(float(norm[:-1]))
        if kind == SCHEDULE and norm.startswith("every ") and norm.endswith("s"):
            return "every " + _seconds_said(float(norm[6:-1]))
        if kind == SCHEDULE and norm.startswith("cron "):
            return f"`{norm[5:]}`"
        if kind == RATE and norm.endswith("/h"):
            per_hour = float(norm[:-2])
            if per_hour >= 60 and per_hour % 60 == 0:
                return f"{_fmt(per_hour / 60)}/min"
            return f"{_fmt(per_hour)}/h"
        if kind == PERCENT:
            return f"{_fmt(round(float(norm) * 100, 4))}%"
    except ValueError:
        pass
    return norm


def same_value(a: Value, b: Value) -> bool:
    """Whether two values are the same choice: equal canonical forms, or equal numbers (a
    bare number and a percentage: 0.05 and 5%); versions compare as written (3.10 is not
    3.1)."""
    if a.norm == b.norm:
        return True
    if {a.type, b.type} <= NUMERIC_TYPES:
        try:
            return abs(float(a.norm) - float(b.norm)) < 1e-9
        except ValueError:
            return False
    return False


def find_values(text: str) -> list[Value]:
    """Every value in ``text`` (one statement), in order of position."""
    return list(_find_values(text))


@lru_cache(maxsize=8192)
def _find_values(text: str) -> tuple[Value, ...]:
    found = _Found([])
    out: list[Value] = []

    def add(start: int, end: int, raw: str, norm: str, kind: str, name: str = "") -> None:
        if found.free(start, end):
            found.take(start, end)
            out.append(Value(start, end, raw, norm, kind, name))

    # Settings first: "DB_POOL_SIZE=40" is one value of the setting db_pool_size.
    for m in _SETTING_RX.finditer(text):
        key, raw = m.group(1), m.group(2)
        if key.lower() in ("http", "https") or raw.startswith("//"):
            continue
        typed = _typed_literal(raw)
        kind, norm = (typed[0], typed[1]) if typed else (CODE, raw.strip("\"'").lower())
        if kind == VERSION and re.fullmatch(r"\d+\.\d+", raw.strip("\"'")) \
                and "version" not in key.lower() and not is_known_tool(key):
            kind = NUMBER  # sample_rate = 0.25: a decimal, not a release
        add(m.start(), m.end(), m.group(0), norm, kind, key.lower())
    # Code spans: one value each, typed by their content; or the values inside them
    # ("`/internal/billing/ @marek-nowak`": a path and a handle).
    for m in _CODE_RX.finditer(text):
        inner = m.group(1)
        if not found.free(m.start(), m.end()):
            continue
        typed = _typed_literal(inner)
        if typed is not None:
            add(m.start(), m.end(), m.group(0), typed[1], typed[0], typed[2])
            continue
        parts = [v for v in find_values(inner) if v.type not in (NAME, CODE)]
        if parts and "`" not in inner:
            for v in parts:
                add(m.start() + 1 + v.start, m.start() + 1 + v.end, v.raw, v.norm, v.type,
                    v.name or _leftover_name(inner, v))
            found.take(m.start(), m.end())
        elif _looks_like_key(text, m.end()):
            continue  # "`TRANSFORM_WH` -> Small": a name the statement is about
        else:
            add(m.start(), m.end(), m.group(0), inner.strip().lower(), CODE)
    # "primary region (fra)", "(x86)": a bare token in brackets after a word is its value.
    for m in _PAREN_TOKEN_RX.finditer(text):
        add(m.start(1), m.end(1), m.group(1), m.group(1).lower(), CODE)
    for rx, kind in ((_URL_RX, URL), (_EMAIL_RX, EMAIL), (_HANDLE_RX, HANDLE)):
        for m in rx.finditer(text):
            raw = m.group(0).rstrip(".,;:!?")
            add(m.start(), m.start() + len(raw), raw, raw.lower().rstrip("/"), kind)
    for m in _CRON_RX.finditer(text):
        add(m.start(), m.end(), m.group(0), cron_norm(m.group(0)), SCHEDULE)
    for m in _RATE_RX.finditer(text):
        norm = _rate_norm(m)
        if norm:
            add(m.start(), m.end(), m.group(0), norm, RATE if not norm.startswith("every")
                else SCHEDULE, (m.group(4) or "").lower())
    for m in _PERCENT_RX.finditer(text):
        add(m.start(), m.end(), m.group(0), _fmt(_num(m.group(1)) / 100), PERCENT)
    for m in _SIZE_RX.finditer(text):
        add(m.start(), m.end(), m.group(0),
            _fmt(_num(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]) + "b", SIZE)
    for m in _DURATION_RX.finditer(text):
        unit = m.group(2)
        if unit.lower() in ("m", "s", "y", "mo") and " " in m.group(0):
            continue  # "3 m" or "5 s" apart is rarely a duration; "5m" is
        if unit == "s" and re.fullmatch(r"[1-5]\d\d", m.group(1)):
            continue  # "429s": HTTP statuses, not seconds
        add(m.start(), m.end(), m.group(0), duration_norm(_num(m.group(1)), unit), DURATION)
    for m in _VERSION_RX.finditer(text):
        core = m.group(1) or m.group(2)
        if core is None:
            continue
        if m.group(2) and not _owner_before(text, m.start()):
            continue  # a bare "v2" names a version only after what it versions
        owner = _owner_before(text, m.start())
        prefixed = m.group(0)[:1].isalpha()
        if not owner and not prefixed and core.count(".") == 1 and core[0] in "0123456789" \
                and not _version_word_near(text, m.start()):
            continue  # "0.42", "3.10" alone: a number (numbers and versions compare)
        if owner and not prefixed and core.count(".") == 1 and "version" not in owner \
                and _assigned(text, m.start()) and _setting_name(text, m.start()):
            # `TracesSampleRate: 0.2`, `sample_rate = 0.25`: a setting's number
            add(m.start(), m.end(), m.group(0), core, NUMBER, owner)
            continue
        add(m.start(), m.end(), m.group(0), _version_norm(core), VERSION, owner)
    for m in _PATH_RX.finditer(text):
        raw = m.group(0).rstrip(".,;:")
        if "/" not in raw and "." not in raw or raw in ("/", "./", "../") or len(raw) < 3:
            continue
        if re.fullmatch(r"[\d./]+", raw) or "://" in text[max(0, m.start() - 3):m.start() + 3]:
            continue
        if re.fullmatch(r"\w+/\w+", raw) and not any(c.isdigit() for c in raw) and \
                raw.lower().split("/")[1] in ("s", "sec", "min", "h", "hour", "day"):
            continue  # "req/min"
        add(m.start(), m.start() + len(raw), raw, raw.lower(), PATH)
    for m in _HOST_RX.finditer(text):
        add(m.start(), m.end(), m.group(0), m.group(0).lower(), HOST)
    for m in _QUOTED_RX.finditer(text):
        inner = m.group(1) or m.group(2) or ""
        typed = _typed_literal(inner)
        if typed:
            add(m.start(), m.end(), m.group(0), typed[1], typed[0], typed[2])
        elif len(inner.split()) <= 4:
            add(m.start(), m.end(), m.group(0), inner.lower().strip(), CODE)
    for m in _NUMBER_RX.finditer(text):
        if not found.free(m.start(), m.end()):
            continue
        if _is_date_or_time(text, m.start(), m.end()):
            continue
        if _LABEL_BEFORE.search(text, max(0, m.start() - 8), m.start()):
            continue  # "bug number 3", "No. 4": which one, not a value it is set to
        noun = _COUNT_NOUN.match(text, m.end())
        unit = ""
        if noun and noun.group(1).lower() not in _NOT_A_COUNT_NOUN:
            unit = noun.group(1).lower()
        add(m.start(), m.end(), m.group(0), m.group(1).replace(",", ""), NUMBER, unit)
    _numbers_with_time_names(out)
    _numbers_of_versioned_things(text, out)
    for m in re.finditer(r"\b(?:enabled|disabled|true|false)\b", text, _I):
        add(m.start(), m.end(), m.group(0), _BOOLEANS[m.group(0).lower()], BOOLEAN)
    _names(text, found, out)
    for m in _AFTER_ARROW.finditer(text):
        word = m.group(1)
        if found.free(m.start(1), m.end(1)) and word.lower() not in COMMON_WORDS - _LEVELS:
            found.take(m.start(1), m.end(1))
            low = word.lower()
            out.append(Value(m.start(1), m.end(1), word, low, LEVEL if low in _LEVELS else NAME))
    out.sort(key=lambda v: v.start)
    return tuple(out)


_AFTER_ARROW = re.compile(r"(?:\u2192|->|=>)\s*\**\s*([A-Za-z][\w.+-]{0,30})")


_TIME_SUFFIX = re.compile(r"(?:^|[_.-])(ms|millis|secs?|seconds|minutes|mins|hours|hrs|days|"
                          r"weeks)$", re.IGNORECASE)


def _numbers_with_time_names(out: list[Value]) -> None:
    """A number set on a name ending in a time unit (``retention_days = 90``, ``ttl_seconds:
    30``) is a duration."""
    for i, v in enumerate(out):
        if v.type != NUMBER or not v.name:
            continue
        m = _TIME_SUFFIX.search(v.name)
        unit = m.group(1).lower() if m else ""
        unit = {"millis": "ms", "mins": "minutes", "hrs": "hours"}.get(unit, unit)
        if unit in _DURATION_UNITS:
            try:
                out[i] = Value(v.start, v.end, v.raw, duration_norm(float(v.norm), unit),
                               DURATION, v.name)
            except ValueError:
                continue


def _numbers_of_versioned_things(text: str, out: list[Value]) -> None:
    """An integer or decimal set on a "version" setting, or right after a tool's name
    ("Node 20", "Postgres 16", "`.nvmrc` -> `20`" stays a number), is a version."""
    for i, v in enumerate(out):
        if v.type != NUMBER:
            continue
        owner = v.name if "version" in v.name else _owner_before(text, v.start)
        if "version" in v.name or (owner and is_known_tool(owner) and not v.name):
            out[i] = Value(v.start, v.end, v.raw, v.norm, VERSION, owner or v.name)


def _rate_norm(m: re.Match[str]) -> str | None:
    g = m.groups()
    if g[1] is not None:  # N times per unit
        n = g[0]
        count = _NUMBER_WORDS.get(n.lower()) if not n[0].isdigit() else _num(n)
        if not count:
            return None
        return f"every {_fmt(_PER_UNITS[g[1].lower()] / count)}s"
    if g[2] is not None:  # N [noun] per unit
        return f"{_fmt(_num(g[2]) / _PER_UNITS[g[4].lower()] * 3600)}/h"
    if g[5] is not None:  # N rpm
        unit = g[6].lower()
        per = {"rpm": 60.0, "req/min": 60.0, "rps": 1.0, "req/s": 1.0, "qps": 1.0,
               "rph": 3600.0, "rpd": 86400.0}[unit]
        return f"{_fmt(_num(g[5]) / per * 3600)}/h"
    if g[8] is not None:  # every [N] unit
        n = g[7]
        count = 1.0 if n is None else (_NUMBER_WORDS.get(n.lower()) if not n[0].isdigit()
                                       else _num(n))
        if count is None:
            return None
        return f"every {_fmt(count * _DURATION_UNITS[g[8].lower()])}s"
    if g[9] is not None:  # hourly, nightly
        return f"every {_fmt(_FREQUENCIES[g[9].lower()])}s"
    return None


def _setting_name(text: str, start: int) -> bool:
    """Whether the name before ``start`` is written as a code identifier (``sample_rate``,
    ``TracesSampleRate``, ``SAMPLE_RATE``), not as a word ("Python: 3.11")."""
    m = re.search(r"([A-Za-z][\w.-]*)[\]\"'`]?\s*[:=]\s*[`\"']?$", text[max(0, start - 40):start])
    name = m.group(1) if m else ""
    return "_" in name or re.search(r"[a-z][A-Z]", name) is not None or (
        len(name) > 1 and name.isupper() and not is_known_tool(name))


def _assigned(text: str, start: int) -> bool:
    """Whether the value at ``start`` is assigned to the name before it (``key: 0.2``,
    ``key = 0.2``) rather than written after it ("Python 3.11")."""
    return re.search(r"[\w\]\"'`]\s*[:=]\s*[`\"']?$", text[max(0, start - 8):start]) is not None


def _owner_before(text: str, start: int) -> str:
    m = _VERSION_OWNER.search(text[max(0, start - 32):start])
    if not m:
        return ""
    word = m.group(1).lower().rstrip(".")
    if word in COMMON_WORDS and not is_known_tool(word) and word not in ("version", "v"):
        return ""
    return word


_KEY_AFTER = re.compile(r"\s*(?::|=|->|\u2192|=>|\bis\b|\bwas\b|\bgoes\b|\bnow\b|\bfrom\b|"
                        r"\bset\s+to\b|\bstays?\b|\bkeeps?\b)", _I)


def _looks_like_key(text: str, end: int) -> bool:
    """A backticked identifier followed by ``:``, ``=``, an arrow or a copula names what the
    statement is about, not a value (unless it is a typed literal)."""
    return _KEY_AFTER.match(text, end) is not None


_DATE_AROUND = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}(?::\d{2})?")


_LABEL_BEFORE = re.compile(r"\b(?:number|no\.)\s+$", re.IGNORECASE)


def _is_date_or_time(text: str, start: int, end: int) -> bool:
    for m in _DATE_AROUND.finditer(text, max(0, start - 10), min(len(text), end + 10)):
        if m.start() <= start and m.end() >= end:
            return True
    return text[end:end + 1] == ":" and text[end + 1:end + 2].isdigit()


def _names(text: str, found: _Found, out: list[Value]) -> None:
    """Tool, service, person and product names (see the module docstring)."""
    words = list(_WORD_RX.finditer(text))
    i = 0
    first_word = _first_word_start(text)
    while i < len(words):
        m = words[i]
        nxt_word = words[i + 1].group(0) if i + 1 < len(words) else ""
        prev_word = words[i - 1].group(0).lower() if i else ""
        gap = text[words[i - 1].end():m.start()] if i else ""
        if not found.free(m.start(), m.end()) or not _name_like(
                m.group(0), m.start() == first_word, nxt_word, prev_word, gap):
            i += 1
            continue
        j = i
        # "GitHub Actions", "Cloudflare R2", "AWS Load Balancer Controller": capitalised runs
        while j + 1 < len(words):
            nxt = words[j + 1]
            gap = text[words[j].end():nxt.start()]
            if gap not in (" ",) or not found.free(nxt.start(), nxt.end()):
                break
            w = nxt.group(0)
            if not (w[0].isupper() or any(c.isdigit() for c in w)) or w.lower() in _JOINERS:
                break
            if w.upper() in GENERIC_ACRONYMS and w.isupper() and w not in ("CI", "CD"):
                break
            j += 1
        start, end = m.start(), words[j].end()
        raw = text[start:end]
        if found.free(start, end):
            found.take(start, end)
            out.append(Value(start, end, raw, _name_norm(raw), NAME))
        i = j + 1


_JOINERS: Final = frozenset({"and", "or", "for", "to", "in", "on", "with", "the", "of", "is",
                             "are", "was", "now", "instead", "from", "via"})


def _first_word_start(text: str) -> int:
    m = re.search(r"[A-Za-z]", text)
    return m.start() if m else -1


_DETERMINERS: Final = frozenset("the a an this that these those our my your their his her its".split())


def _name_like(word: str, at_start: bool, next_word: str = "", prev_word: str = "",
               gap: str = " ") -> bool:
    low = word.lower().strip(".")
    if len(low) < 2 and not word.isupper():
        return False
    if word.isupper() and word in GENERIC_ACRONYMS:
        return False
    if is_known_tool(low) and not (word[0].islower() and low in ENGLISH_TOOL_NAMES
                                   and not _placed(prev_word, next_word, at_start, gap)):
        # A lowercase tool name that is an English word is a name only where a value goes:
        # "by the river", "the next step", "now requests `q_60`" name no tool.
        return True
    shaped = (any(c.isdigit() for c in word) and any(c.isalpha() for c in word)) or \
        bool(re.search(r"[a-z][A-Z]", word)) or \
        (bool(re.search(r"\.[a-z]{2,}$", word)) and word[0].isalpha())
    if shaped:
        return low not in COMMON_WORDS
    if word[0].isupper() and not at_start:
        return low not in COMMON_WORDS or word.isupper() and len(word) >= 2
    if word[0].isupper() and at_start and low not in COMMON_WORDS:
        return bool(next_word and next_word.lower() in _NAME_VERBS)
    return word.isupper() and len(word) >= 2 and low not in COMMON_WORDS


_VALUE_BEFORE: Final = frozenset(
    """to with onto on via through by use uses used using chose choose picked adopted prefer
    prefers preferred of from than instead replace replaced replacing back keep keeps kept
    switch switched move moved migrate migrated and or plus is are was were be been stays
    stay remains remain becomes became""".split())


def _placed(prev_word: str, next_word: str, at_start: bool, gap: str) -> bool:
    """Whether a lowercase word stands where a statement puts a value: after a preposition,
    a verb of choosing or being, or a key's colon, before a version or a verb a name takes,
    or first in a clause."""
    nxt = next_word.lower()
    return (prev_word.lower() in _VALUE_BEFORE or at_start or not prev_word
            or gap.strip() not in ("", "`", "\"", "'")
            or bool(re.match(r"v?\d", nxt)) or nxt in _NAME_VERBS)


_NAME_VERBS: Final = frozenset(
    """is are was were now owns owned handles handled runs ran uses used takes took has have
    will would should can stays remains replaces replaced becomes became leads maintains
    reviews approves manages serves sends stores hosts builds""".split())


def _name_norm(raw: str) -> str:
    return " ".join(raw.lower().replace("\u2019", "'").split()).strip(".")


__all__ = ["BOOLEAN", "CODE", "DURATION", "EMAIL", "HANDLE", "HOST", "LEVEL", "NAME", "NUMBER",
           "PATH", "PERCENT", "RATE", "SCHEDULE", "SIZE", "URL", "VERSION", "Value",
           "compatible", "duration_norm", "find_values", "same_value"]
