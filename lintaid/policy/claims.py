"""Claim extraction: (subject, predicate, value) triples read off single sentences.

A claim is the unit the policy retires. Two claims meet on a chain when their canonical subject
and predicate agree, so every pattern works hard to put the *thing governed* in the subject and
the *choice made about it* in the value: "We use MongoDB for analytics" is (analytics,
implementation, mongodb), so a later "Postgres for analytics" lands on the same chain.

Switches that do not say what the new thing is for ("we switched from pip to uv") get the subject
``tool:<old value>`` (``tool:pip``): the old value is the only anchor the sentence offers, and a
later "we use poetry instead of pip" derives the same subject and so meets the chain.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .sentences import Span, split_sentences

# ---------------------------------------------------------------------------------------------
# Data model


@dataclass(frozen=True)
class Claim:
    """One extracted claim; ``evidence`` is its sentence, ``start``/``end`` the sentence span."""

    subject: str
    predicate: str
    value: str
    evidence: str
    start: int
    end: int
    cue: bool
    replaces: str | None = None


# ---------------------------------------------------------------------------------------------
# Cues

_CUE = re.compile(
    r"\b(?:supersedes?|superseded|replaces|replaced|instead\s+of|no\s+longer|"
    r"(?:changed|switched|migrated|moved)\s+from|switched\s+to|migrated\s+to|previously|formerly|"
    r"now\s+(?:use[sd]?|using|owns?|handles?|defaults?)|(?:is|are)\s+now|from\s+now\s+on|"
    r"going\s+forward)\b"
    r"|\b(?:update|correction)\s*:"
    r"|\bnow\s*[.!]?\s*$",
    re.IGNORECASE,
)
_QUOTED = re.compile(
    r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|\u2018[^\u2019]*\u2019|`[^`]*`|(?<!\w)'[^']*'(?!\w)"
)
_ROLE = re.compile(r"^[A-Za-z][\w .'-]{0,30}:\s*")
_SPEECH = re.compile(r"^([\"\u201c])(.*)([\"\u201d])\s*$", re.DOTALL)


def _unwrap_speech(sentence: str) -> str:
    """Drop quotes that wrap a whole utterance ('Alice: "We no longer use X."')."""
    role = _ROLE.match(sentence)
    body = sentence[role.end():] if role else sentence
    m = _SPEECH.match(body)
    if m and m.group(2).count('"') == 0:
        return (sentence[: role.end()] if role else "") + m.group(2)
    return sentence


def mask_quotes(sentence: str) -> str:
    """Blank quoted passages (same length), so a quoted cue is not this speaker's correction."""
    return _QUOTED.sub(lambda m: " " * len(m.group(0)), sentence)


def has_correction_cue(sentence: str) -> bool:
    """The sentence itself signals a correction (matched on word boundaries, outside quotes)."""
    return _CUE.search(mask_quotes(_unwrap_speech(sentence))) is not None


# ---------------------------------------------------------------------------------------------
# Canonical phrases

_DROP_LEADING = frozenset({"the", "a", "an", "current", "new", "our", "your", "my", "their"})
_STRIP_CHARS = " \t.,;:!?\"'`()[]{}\u2018\u2019\u201c\u201d*"
_PRONOUNS = frozenset(
    {
        "i", "we", "you", "they", "he", "she", "it", "this", "that", "these", "those", "who",
        "which", "what", "someone", "somebody", "everyone", "everybody", "nobody", "anyone",
        "one", "us", "them", "me", "something", "anything", "nothing", "everything", "there",
    }
)


def canonical(phrase: str) -> str:
    """Lowercase, trim punctuation, collapse spaces, drop leading articles/current/new."""
    words = phrase.lower().strip(_STRIP_CHARS).split()
    while words and words[0] in _DROP_LEADING:
        words = words[1:]
    text = " ".join(words).strip(_STRIP_CHARS)
    return " ".join(text.split())


def _keep_underscores(phrase: str) -> str:
    """canonical() for a quoted affix, whose punctuation ("_", "feat:") is the value itself."""
    text = phrase.lower().strip(" \t\"'`\u2018\u2019\u201c\u201d")
    return " ".join(text.rstrip(".,;!?").split() if len(text) > 1 else text.split())


_TAIL = re.compile(
    r"\s*(?:,|;|\s-\s|\u2014|\(|\b(?:instead\s+of|rather\s+than|in\s+place\s+of|replacing|"
    r"no\s+longer|which|because|since|so\s+that|but|while|from\s+now\s+on|going\s+forward|"
    r"for\s+now|previously|formerly|as\s+of|until|anymore|any\s+more|as\s+well|too|now)\b)",
    re.IGNORECASE,
)
_REPLACED_TAIL = re.compile(r"^\s*(?:instead\s+of|rather\s+than|in\s+place\s+of|replacing)\b",
                            re.IGNORECASE)


def clean(phrase: str) -> tuple[str, str | None]:
    """Cut a captured phrase at its first clause boundary or cue tail.

    Returns the canonical phrase and, when the cut tail names what it replaces ("MongoDB instead
    of Postgres"), the canonical replaced value.
    """
    replaced: str | None = None
    for m in _TAIL.finditer(phrase):
        if m.start() == 0 and m.group(0).strip() not in {",", ";"}:
            continue  # a cue at the very start is part of the phrase ("formerly manual tasks")
        rest = phrase[m.start():]
        if _REPLACED_TAIL.match(rest):
            tail = _REPLACED_TAIL.sub("", rest, count=1)
            replaced_text, _ = clean(tail)
            replaced = replaced_text or None
        phrase = phrase[: m.start()]
        break
    return canonical(phrase), replaced


_PERSONAL = frozenset({"i", "we", "you", "they", "he", "she", "it"})


def _value(phrase: str) -> tuple[str, str | None]:
    """Like clean(), but a bare pronoun is no value."""
    value, replaced = clean(phrase)
    return ("" if value in _PRONOUNS else value), replaced


def _bad_subject(subject: str) -> bool:
    """Empty, a pronoun, or a clause led by a personal pronoun ("we released")."""
    return not subject or subject in _PRONOUNS or subject.split()[0] in _PERSONAL


def _first_unnegated(rx: re.Pattern[str], sentence: str) -> re.Match[str] | None:
    """The leftmost match whose clause is not negated, trying every start position."""
    pos = 0
    while pos <= len(sentence):
        m = rx.search(sentence, pos)
        if m is None:
            return None
        if not _is_negated(sentence, m.start()):
            return m
        pos = m.start() + 1
    return None


# ---------------------------------------------------------------------------------------------
# Scalar values

_UNITS = {
    "ms": "ms", "msec": "ms", "msecs": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "m": "min", "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d",
    "%": "%", "percent": "%",
    "kb": "kb", "mb": "mb", "gb": "gb", "tb": "tb", "x": "x",
}
_BOOLEANS = {
    "true": "true", "enabled": "true", "on": "true", "yes": "true",
    "false": "false", "disabled": "false", "off": "false", "no": "false",
}
_UNIT_RE = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
VALUE = (
    rf"(?:[-+]?\d+(?:\.\d+)?(?:\s*(?:{_UNIT_RE}))?(?![\w%])"
    r"|(?:true|false|enabled|disabled|on|off|yes|no)\b)"
)
_NUMBER = re.compile(rf"^([-+]?\d+(?:\.\d+)?)\s*({_UNIT_RE})?$", re.IGNORECASE)


def normalize_value(text: str) -> str | None:
    """Canonical scalar ("5 seconds" -> "5s", "enabled" -> "true"), or None if not a scalar."""
    t = text.strip().lower()
    if t in _BOOLEANS:
        return _BOOLEANS[t]
    m = _NUMBER.match(t)
    if not m:
        return None
    return m.group(1).lstrip("+") + (_UNITS[m.group(2).lower()] if m.group(2) else "")


# ---------------------------------------------------------------------------------------------
# Pattern fragments (all case-insensitive)

# Sentence start, or right after ":" ";" "," (role prefixes like "user: " and lead clauses);
# then an optional quote, bullet or list number, then optional adverbs.
_LEAD = (
    r"(?:^|(?<=[:;,]))\s*[\"\u201c'(]?\s*(?:(?:[-*+]|\d+[.)])\s+)?"
    r"(?:(?:so|also|and|but|now|then|currently|today|note\s+that|from\s+now\s+on|"
    r"going\s+forward|update|correction|instead|actually|please)\s*[,:]?\s+)*"
)
_THE = r"(?:the\s+)?"
_NP = r"([a-z0-9][\w&'./ -]{0,79}?)"  # a lazy noun phrase without clause punctuation
_REST = r"(.+?)\s*[.!]*\s*$"  # the rest of the sentence, cleaned afterwards
_FLAGS = re.IGNORECASE


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _FLAGS)


_Extracted = tuple[str, str, str, str | None]  # subject, predicate, value, replaces


# ---------------------------------------------------------------------------------------------
# Ownership

_OWNERSHIP = [
    # (regex, subject group, owner group)
    (_rx(_LEAD + _THE + _NP + r"\s+(?:now\s+)?owns\s+" + _THE + _REST), 2, 1),
    (_rx(_LEAD + _THE + _NP + r"\s+(?:is|are)\s+(?:now\s+)?(?:responsible|accountable)\s+for\s+"
         + _THE + _REST), 2, 1),
    (_rx(_LEAD + _THE + _NP + r"\s+(?:is|are)\s+(?:now\s+)?owned\s+by\s+" + _THE + _REST), 1, 2),
    (_rx(_LEAD + _THE + _NP + r"\s+(?:is|are|was|were|has\s+been|have\s+been)\s+(?:now\s+)?"
         r"(?:re)?assigned\s+to\s+" + _THE + _REST), 1, 2),
    (_rx(r"\b(?:re)?assign(?:ed|s)?\s+" + _THE + _NP + r"\s+to\s+" + _THE + _REST), 1, 2),
]


def _ownership(sentence: str) -> Iterator[_Extracted]:
    for rx, sg, og in _OWNERSHIP:
        m = rx.search(sentence)
        if not m:
            continue
        subject, rep1 = clean(m.group(sg))
        owner, rep2 = _value(m.group(og))
        if _bad_subject(subject) or not owner:
            continue
        yield subject, "owner", owner, rep1 or rep2
        return


# ---------------------------------------------------------------------------------------------
# Usage, switches, deprecation

_NEGATED = re.compile(
    r"\b(?:never|not|don'?t|doesn'?t|didn'?t|won'?t|no\s+longer|stop(?:ped)?|avoid|without|"
    r"used\s+to|previously|formerly|originally|initially)\b[^,;]*$",
    re.IGNORECASE,
)
_USE_VERB = (
    r"\b(?:use|uses|using|adopt|adopts|adopted|adopting|choose|chooses|chose|chosen|select|"
    r"selects|selected|pick|picks|picked|prefer|prefers|preferred|go\s+with|went\s+with|"
    r"settled\s+on|standardi[sz]ed\s+on|(?:switch(?:ed|ing)?|mov(?:e|ed|ing)|"
    r"migrat(?:e|ed|ing)|chang(?:e|ed|ing))\s+(?:over\s+)?to)\s+"
)
_USE_FOR = _rx(_USE_VERB + _THE + r"([^,;]{1,60}?)\s+for\s+" + _THE + _REST)
_USE_AS = _rx(
    _USE_VERB + _THE + r"([^,;]{1,60}?)\s+as\s+(?:(?:the|our|a|an|my|your)\s+|"
    r"(?=(?:preferred|main|primary|default|standard|official)\b))" + _REST
)
_USE_INSTEAD = _rx(
    _USE_VERB + _THE + r"([^,;]{1,60}?)\s+(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+"
    + _THE + _REST
)
_USES = _rx(
    _LEAD + _THE + _NP + r"\s+(?:now\s+)?(?:uses|is\s+using|are\s+using|relies\s+on|rely\s+on|"
    r"runs\s+on|is\s+built\s+on|(?:is|are)\s+(?:now\s+)?(?:handled|backed|powered|served)\s+by|"
    r"(?:is|are)\s+(?:now\s+)?implemented\s+(?:with|in|using))\s+" + _THE + _REST
)
_USED_FOR = _rx(_LEAD + _THE + _NP + r"\s+(?:is|are)\s+(?:now\s+)?used\s+for\s+" + _THE + _REST)
_SWITCH = _rx(
    r"\b(?:switch(?:ed|ing)?|migrat(?:e|ed|ing)|mov(?:e|ed|ing)|chang(?:e|ed|ing)|"
    r"upgrad(?:e|ed|ing)|downgrad(?:e|ed|ing)|transition(?:ed|ing)?)\s+(?:([^,;]{1,60}?)\s+)?"
    r"from\s+" + _THE + r"([^,;]{1,60}?)\s+to\s+" + _THE + _REST
)
_REPLACED_WITH = _rx(r"\breplac(?:e|ed|ing)\s+" + _THE + r"([^,;]{1,60}?)\s+(?:with|by)\s+"
                     + _THE + _REST)
_WAS_REPLACED = _rx(_LEAD + _THE + _NP + r"\s+(?:is|was|has\s+been|have\s+been|were|are)\s+"
                    r"(?:being\s+)?(?:replaced|superseded)\s+(?:by|with)\s+" + _THE + _REST)
_REPLACES = _rx(_LEAD + _THE + _NP + r"\s+(?:now\s+)?(?:replaces|replaced|supersedes|superseded)"
                r"\s+" + _THE + _REST)
_FOR_TAIL = re.compile(r"\s+for\s+(?:the\s+)?(.+)$", re.IGNORECASE)
_VERSIONISH = re.compile(r"^v?\d+(?:\.\d+)+|^v\d+", re.IGNORECASE)
_NAMING_PURPOSE = re.compile(r"\b(?:names?|naming)\b|\bcase\b")
_CODE_ENTITY_PLURAL = re.compile(
    r"^(?:all\s+)?(?:functions|methods|classes|variables|attributes|arguments|parameters|"
    r"modules|files|tests|constants)$"
)


def _split_purpose(text: str) -> tuple[str, str | None]:
    """'Memcached for session storage' -> ('Memcached', 'session storage')."""
    m = _FOR_TAIL.search(text)
    if m:
        return text[: m.start()], m.group(1)
    return text, None


def _is_negated(sentence: str, at: int) -> bool:
    return _NEGATED.search(sentence[:at]) is not None


def _switch_claim(subj: str | None, old: str, new: str, verb: str) -> _Extracted | None:
    new_text, purpose = _split_purpose(new)
    new_value, _ = _value(new_text)
    old_value, _ = _value(old)
    if not new_value or not old_value:
        return None
    subject = clean(purpose)[0] if purpose else (clean(subj)[0] if subj else "")
    old_scalar, new_scalar = normalize_value(old_value), normalize_value(new_value)
    if subject and (verb.startswith(("upgrad", "downgrad")) or subject.endswith(" version")
                    or _VERSIONISH.match(new_value)):
        if subject.endswith(" version"):
            subject = subject[: -len(" version")]
        return subject, "version", new_value.lstrip("v"), old_value.lstrip("v")
    if subject and old_scalar is not None and new_scalar is not None:
        return subject, "value", new_scalar, old_scalar
    if not subject:
        subject = f"tool:{old_value}"
    return subject, "implementation", new_value, old_value


def _usage(sentence: str) -> Iterator[_Extracted]:
    found = False
    for rx in (_USE_FOR, _USE_AS):
        m = _first_unnegated(rx, sentence)
        if not m:
            continue
        tech, rep1 = _value(m.group(1))
        purpose, rep2 = clean(m.group(2))
        if not tech or _bad_subject(purpose):
            continue
        if _NAMING_PURPOSE.search(purpose) or _CODE_ENTITY_PLURAL.match(purpose):
            continue  # a coding-style rule ("use snake_case for class names"): conventions
        found = True
        yield purpose, "implementation", tech, rep1 or rep2
        break
    m = _first_unnegated(_SWITCH, sentence)
    if m:
        verb = m.group(0).split()[0].lower()
        claim = _switch_claim(m.group(1), m.group(2), m.group(3), verb)
        if claim:
            found = True
            yield claim
    if found:
        return
    for rx, old_g, new_g in ((_USE_INSTEAD, 2, 1), (_REPLACED_WITH, 1, 2), (_WAS_REPLACED, 1, 2),
                             (_REPLACES, 2, 1)):
        m = _first_unnegated(rx, sentence)
        if not m:
            continue
        new_raw = m.group(new_g)
        if canonical(new_raw) in _PRONOUNS:
            continue  # "This replaces the previous decision": no content claim
        claim = _switch_claim(None, m.group(old_g), new_raw, "replace")
        if claim:
            found = True
            yield claim
            break
    if found:
        return
    for rx in (_USES, _USED_FOR):
        m = rx.search(sentence)
        if not m:
            continue
        if rx is _USES:
            subject, rep1 = clean(m.group(1))
            tech_text, for_what = _split_purpose(m.group(2))
            tech, rep2 = _value(tech_text)
            if for_what:
                subject = clean(for_what)[0]
        else:
            tech, rep1 = _value(m.group(1))
            subject, rep2 = clean(m.group(2))
        if tech and not _bad_subject(subject):
            yield subject, "implementation", tech, rep1 or rep2
            return


_DEPRECATED = [
    _rx(_LEAD + _THE + _NP + r"\s+(?:is|are|has\s+been|have\s+been|was|were)\s+(?:now\s+)?"
        r"(?:officially\s+)?deprecated\b"),
    _rx(_LEAD + _THE + _NP + r"\s+(?:is|are)\s+no\s+longer\s+(?:used|supported|maintained|needed|"
        r"in\s+use|recommended|required)\b"),
    _rx(r"\b(?:no\s+longer|stopped|stop)\s+(?:use|uses|using|support|supporting|supports|need|"
        r"needs|relying\s+on|rely\s+on)\s+" + _THE + _REST),
    _rx(r"\b(?:don'?t|do\s+not)\s+use\s+" + _THE + r"(.+?)\s+any\s*more\b"),
]
_IN_USE = [
    _rx(r"\bnow\s+(?:use|uses|using)\s+" + _THE + _REST),
    _rx(r"\b(?:we|i|you|they)\s+use\s+" + _THE + r"(.+?)\s+now\s*[.!]*\s*$"),
]


# "I'll stop using X and start prefixing ...": the second clause is no part of what stopped
_NEXT_CLAUSE = re.compile(r"\s+and\s+(?:then\s+)?(?:start|begin|switch|move|use|adopt)\b.*$",
                          re.IGNORECASE | re.DOTALL)


def _status(sentence: str) -> Iterator[_Extracted]:
    for rx in _DEPRECATED:
        m = rx.search(sentence)
        if m:
            raw, _ = _split_purpose(_NEXT_CLAUSE.sub("", m.group(1)))
            subject, _ = _value(raw)
            if subject:
                yield subject, "status", "deprecated", None
            return
    for rx in _IN_USE:
        m = rx.search(sentence)
        if m and not _is_negated(sentence, m.start()):
            raw, _ = _split_purpose(m.group(1))
            raw = re.split(r"\s+(?:as|to|instead\s+of|rather\s+than)\s+", raw, maxsplit=1)[0]
            subject, replaced = _value(raw)
            if subject:
                yield subject, "status", "in-use", replaced
            return


# ---------------------------------------------------------------------------------------------
# Defaults and versions

_VER = r"(v?\d+(?:\.\d+)*(?:[-+][0-9a-z][0-9a-z.]*[0-9a-z]|[a-z]+\d*)?)"
_END = r"(?!\.?\d)(?=\s*(?:[.,;!)]|$))"  # no backtracking into "2.0" -> "2"
_DEFAULTS = [
    (_rx(r"\bthe\s+default\s+" + _NP + r"\s*(?:is|are|should\s+be|will\s+be|=|:)\s+(?:now\s+)?"
         + _THE + _REST)),
    (_rx(r"^(?:[^:]*:\s*)?(?:[-*+]\s+)?default\s+" + _NP + r"\s*(?:is|are|should\s+be|will\s+be|"
         r"=|:)\s+(?:now\s+)?" + _THE + _REST)),
    (_rx(_LEAD + _THE + _NP + r"\s+(?:now\s+)?defaults?\s+to\s+" + _THE + _REST)),
]
_VERSIONS = [
    _rx(r"\buse\s+" + _THE + _NP + r"\s+version\s+" + _VER + _END),
    _rx(_LEAD + _THE + _NP + r"\s+version\s*(?:is\s+now|is|:|=|should\s+be|must\s+be)?\s*"
        + _VER + _END),
    _rx(_LEAD + _THE + _NP + r"\s+(?:is|are)\s+(?:now\s+)?pinned\s+to\s+(?:version\s+)?"
        + _VER + _END),
    _rx(r"\bpin(?:ned)?\s+" + _THE + _NP + r"\s+to\s+(?:version\s+)?" + _VER + _END),
    _rx(r"(?<![\w.-])([a-z][\w.-]*)\s*==\s*" + _VER),
]


def _defaults(sentence: str) -> Iterator[_Extracted]:
    for rx in _DEFAULTS:
        m = rx.search(sentence)
        if m:
            subject, _ = clean(m.group(1))
            raw_value, replaced = _value(m.group(2))
            value = normalize_value(raw_value) or raw_value
            if value and not _bad_subject(subject):
                yield subject, "default", value, replaced
            return


def _versions(sentence: str) -> Iterator[_Extracted]:
    for rx in _VERSIONS:
        m = rx.search(sentence)
        if m:
            subject, _ = clean(m.group(1))
            if subject.endswith(" version"):
                subject = subject[: -len(" version")]
            value = m.group(2).lower().lstrip("v")
            if value and not _bad_subject(subject):
                yield subject, "version", value, None
            return


# ---------------------------------------------------------------------------------------------
# Scalar settings

_SCALAR = _rx(
    r"(?:^|(?<=[:;]))\s*[\"\u201c]?\s*(?:(?:[-*+]|\d+[.)])\s+)?" + _THE
    + r"([a-z][\w ./-]{0,99}?)\s*(?:[:=]|\b(?:is|are)\s+(?:now\s+)?set\s+to\b|\bset\s+to\b|"
    r"\bshould\s+be(?:\s+set\s+to)?\b|\bmust\s+be\b)\s*(" + VALUE + r")\s*[.!\"\u201d]*\s*$"
)
_SET_TO = _rx(r"\bset\s+" + _THE + r"([a-z][\w ./-]{0,99}?)\s+to\s+(" + VALUE
              + r")\s*[.!\"\u201d]*\s*$")
_LABELS = frozenset(
    {
        "user", "assistant", "system", "result", "request", "response", "answer", "question",
        "note", "notes", "memory type", "prompt", "user prompt", "example", "step", "q", "a",
        "output", "input", "status", "update", "correction", "todo",
    }
)


def _scalars(sentence: str) -> Iterator[_Extracted]:
    for rx in (_SCALAR, _SET_TO):
        m = rx.search(sentence)
        if not m:
            continue
        name = canonical(m.group(1))
        value = normalize_value(m.group(2))
        if not name or value is None or name in _LABELS or name in _PRONOUNS:
            continue
        if name.startswith("default ") or (name.endswith(" version") and name != "version"):
            continue  # the default and version extractors own these
        yield name, "value", value, None
        return


# ---------------------------------------------------------------------------------------------
# Conventions

_KINDS = (
    "function argument|function parameter|environment variable|commit message|argument|parameter|"
    "function|method|variable|attribute|class|constant|module|file|package|field|property|"
    "column|table|interface|enum|struct|component|endpoint|route|fixture|directory|folder|"
    "branch|test|type"
)
_KIND_SYNONYMS = {"argument": "function argument", "parameter": "function argument",
                  "function parameter": "function argument"}
_PL = r"(?:s|es)?"
_POSS = r"(?:(?:all|your|our|the|any|every|new|their|its|my)\s+)*"
# Qualifiers that do not change which naming rule applies: "member variables" are variables,
# "python functions" and "new functions" are functions.
_QUAL = r"(?:(?:python|new|member|instance|local)\s+)?"
_TARGET = _rx(
    rf"\b(?P<ref>(?:the|their|its)\s+)?(?P<a>{_KINDS}){_PL}\s+(?:names?|naming)\b"
    rf"|\b(?:nam|declar|defin|writ|creat)(?:e|es|ing)\s+(?:(?:of|for)\s+)?{_POSS}"
    rf"{_QUAL}(?P<b>{_KINDS}){_PL}\b"
    rf"|\b(?:for|as\s+for|with)\s+{_POSS}{_QUAL}(?P<c>{_KINDS}){_PL}\s*,"
    rf"|\b{_POSS}{_QUAL}(?P<d>{_KINDS}){_PL}\s+(?:in\s+(?:the|your|our|my)\s+code\s+)?"
    r"(?:(?:should|must|need\s+to|have\s+to|shall|will)\s+(?:now\s+)?(?:always\s+|never\s+)?"
    r"(?:start|begin|end|be|use|include|contain)"
    r"|(?:now\s+|always\s+)?(?:start|begin|end)s?\s+with\b|(?:is|are)\s+named\b)"
    r"|\b(?P<e>commit\s+messages?)\b"
    # "when (you're) ending function arguments, ...": the activity names the target
    rf"|\bwhen\s+(?:you(?:'re|\s+are)\s+)?[a-z]+ing\s+{_POSS}{_QUAL}(?P<g>{_KINDS}){_PL}\b"
    # weak: "use the 'x_' prefix for all new functions I create" (kept only with a value)
    rf"|\bfor\s+{_POSS}{_QUAL}(?P<f>{_KINDS}){_PL}\b"
    rf"(?!\s+(?:names?|naming|{_KINDS})\b|\s+(?:and|or|&)\s+(?:{_KINDS}))"
)
_KIND_WORD = _rx(_KINDS)  # a cheap gate: no target can match without one of these words
# "start them with 'a_'", "End those with '_ud'", "End all such names with '_i'": the target is
# in the last sentence.
_ANAPHOR = _rx(r"\b(?:them|it|those|their\s+names?|its\s+name|the\s+names?|such\s+names?)\b")
_RULES = [
    # "start using the X decorator" is not a prefix rule; "start ending" is a suffix rule.
    ("prefix", _rx(r"\b(?:start(?:s|ed|ing)?|begin(?:s|ning)?)\b(?!\s+\w+ing\b)"
                   r"|\b(?:prefix(?:es|ed|ing)?|leading)\b")),
    ("suffix", _rx(r"\b(?:end(?:s|ed|ing)?|suffix(?:es|ed|ing)?|finish(?:es|ed|ing)?)\b")),
    ("contains", _rx(r"\b(?:include(?:s|d)?|including|contain(?:s|ed|ing)?|"
                     r"incorporat(?:e|es|ed|ing))\b")),
]
_CASE = _rx(
    r"\b(screaming[_ ]snake[_ ]case|snake[_ ]case|camel[_ ]?case|pascal[_ ]?case|"
    r"kebab[-_ ]case|title[_ ]case|all[_ ]upper[_ ]?case|all[_ ]lower[_ ]?case|all[_ ]caps|"
    r"upper[_ ]?case|lower[_ ]?case)\b"
)
_CASE_AS_MODIFIER = _rx(r"^\s*(?:[\"'`\u2018\u201c]|letter\b|character\b)")
_CASE_LETTERS = _rx(r"^\s*(?:letters|characters)\b")
_COUNTED = _rx(r"\b(?:the|a|an|one|two|three|single|\d+)$")
_TOKEN = re.compile(
    r"(?<!\w)[\"'`\u2018\u201c]([^\"'`\u2019\u201d\s]{1,40})[\"'`\u2019\u201d](?!\w)"
)
_EXAMPLE_BEFORE = _rx(r"(?:\bas\s+in|\blike|\bsimilar\s+to(?:\s+the)?|\be\.g\.?|\bfor\s+example|\bsuch\s+as|\bi\.e\.?|"
                      r"\bsay|\bso|:)\s*,?\s*$")
_REPLACED_BEFORE = _rx(r"\b(?:instead\s+of|rather\s+than|replacing|in\s+place\s+of)\b[^'\"`]*$")
_LIST_BEFORE = _rx(r"^\s*(?:,|\bor\b|\band\b)\s*$")
_NOT_A_NAME_AFTER = _rx(r"^\s*(?:decorators?|modules?|library|libraries|packages?|imports?|"
                        r"statements?|keywords?|functions?|class(?:es)?|files?)\b")
_BELONGS_TO_NEXT = _rx(r"^[\s\"'`\u2019\u201d]*(?:(?:prefix|suffix|string|style|format|letters|"
                       r"characters)\s+)?"
                       rf"(?:for|in|on|into|to)\s+{_POSS}$")
_BARE_AFFIX = _rx(
    r"\bwith\s+(?:an?\s+|the\s+)?([a-z0-9$]*[_$-][a-z0-9_$-]*)(?![\w$-])"
    r"|\b([a-z0-9$]*[_$-][a-z0-9_$-]*)\s+(?:as\s+(?:a|an|the)\s+)?(?:prefix|suffix)\b"
)
_CONTAINS_PHRASE = _rx(
    r"\b(?:include|includes|contain|contains)\s+(?:the\s+string\s+)?((?:an?\s+)?[\w ]{1,40}?)"
    r"(?:\s+(?:somewhere\s+)?(?:in|within|at)\b|\s*[.!]*\s*$"
    r"|\s+and\s+(?:then\s+)?(?:use|start|begin|end|prefix|suffix|make|keep|always|never)\b)"
)


def _case_styles(sentence: str) -> list[re.Match[str]]:
    """Case styles the sentence prescribes: "use CamelCase", "all uppercase letters", "the
    CamelCase convention"; not a modifier of one letter or quoted token ("a lowercase 'i_'",
    "the lowercase letter", "two uppercase letters")."""
    out: list[re.Match[str]] = []
    for case in _CASE.finditer(sentence):
        after = sentence[case.end():]
        pre = sentence[: case.start()].rstrip()
        if _CASE_AS_MODIFIER.match(after) or (_CASE_LETTERS.match(after) and _COUNTED.search(pre)):
            continue
        if re.search(r"\ba$", pre, re.IGNORECASE):
            continue  # "a lowercase prefix"
        out.append(case)
    return out


def _case_style(text: str) -> str:
    key = re.sub(r"[\s_-]", "", text.lower())
    if key.startswith("all"):
        key = key[3:]
    return {
        "screamingsnakecase": "screaming_snake_case", "snakecase": "snake_case",
        "camelcase": "camelcase", "pascalcase": "pascalcase", "kebabcase": "kebab-case",
        "titlecase": "title case", "uppercase": "uppercase", "caps": "uppercase",
        "lowercase": "lowercase",
    }.get(key, key)


def _target_subject(m: re.Match[str]) -> str:
    if m.group("e"):
        return "commit messages"
    kind = " ".join(
        next(m.group(g) for g in "abcdgf" if m.group(g))
        .lower().split()
    )
    return _KIND_SYNONYMS.get(kind, kind) + " names"


_AFFIX_LIKE = re.compile(r"^[\w$]*[_$-]|[_$-][\w$]*$")


def _targets(sentence: str) -> list[tuple[int, int, str]]:
    """(start, end, subject) of each naming target; "the variable name" after an earlier target
    refers back to it ("when naming arguments, start the variable name with 'e_'").

    A bare "for <kind>" ("the 'x_' prefix for all functions") counts only when the sentence
    states an affix ('x_', '_y') or a case style: "add docstrings for all functions" and "the
    decorator from 'pedantic' for all functions" are no naming rules."""
    out: list[tuple[int, int, str]] = []
    for m in _TARGET.finditer(sentence):
        if out and m.group("ref"):
            continue
        if m.group("f") and not (any(_AFFIX_LIKE.search(k.group(1)) for k in _values(sentence))
                                 or _case_styles(sentence)):
            continue
        # a weak target starts at its kind, so "'_y' for variables" leads into it
        start = m.start("f") if m.group("f") else m.start()
        out.append((start, m.end(), _target_subject(m)))
    return out


def _values(sentence: str) -> list[re.Match[str]]:
    """Quoted tokens that name an affix: not examples ("'i_' as in 'input'"), not decorators."""
    out: list[re.Match[str]] = []
    skipped_end = -1
    for k in _TOKEN.finditer(sentence):
        before, after = sentence[: k.start()], sentence[k.end():]
        example = _EXAMPLE_BEFORE.search(before[-24:]) is not None
        example = example or _REPLACED_BEFORE.search(before[-40:]) is not None
        listed = skipped_end >= 0 and _LIST_BEFORE.match(sentence[skipped_end: k.start()])
        if example or listed or k.group(1).startswith("@") or _NOT_A_NAME_AFTER.match(after):
            skipped_end = k.end()
            continue
        out.append(k)
    return out


def _owner(targets: list[tuple[int, int, str]], sentence: str, start: int, end: int) -> int:
    """Index of the target a value at [start, end) is about: the last target before it, unless
    the value leads into the next one ("'chx' in my function names")."""
    idx = max((i for i, t in enumerate(targets) if t[0] < start), default=0)
    nxt = next((i for i, t in enumerate(targets) if t[0] >= end), None)
    if nxt is not None and _BELONGS_TO_NEXT.match(sentence[end: targets[nxt][0]]):
        return nxt
    return idx


def _nearest_rule(text: str, at: int, lo: int, hi: int) -> str | None:
    """The rule word in text[lo:hi] nearest offset ``at``, preferring one before it."""
    best: tuple[int, int, str] | None = None
    for rule, rx in _RULES:
        for m in rx.finditer(text, lo, hi):
            rank = (0 if m.start() <= at else 1, abs(at - m.start()), rule)
            if best is None or rank < best:
                best = rank
    return best[2] if best else None


def _affix_rules(sentence: str, subjects: list[str], owner: list[int]) -> list[_Extracted]:
    """One claim per quoted value: its rule is the nearest rule word between its neighbours."""
    values = [(k.group(1), k.start(), k.end()) for k in _values(sentence)]
    if not values:
        bare = _BARE_AFFIX.search(sentence)
        if bare:
            values = [(bare.group(bare.lastindex or 1), bare.start(), bare.end())]
    out: list[_Extracted] = []
    for i, (value, start, _end) in enumerate(values):
        if _NOT_NOW.search(sentence[:start]):
            continue  # "I previously asked you to end them with '_y'", "never start with 'x_'"
        lo = values[i - 1][2] if i else 0
        hi = values[i + 1][1] if i + 1 < len(values) else len(sentence)
        rule = _nearest_rule(sentence, start, lo, hi) or _nearest_rule(sentence, start, 0, start)
        value = _keep_underscores(value)
        rule = rule or _affix_shape(value)
        if rule and value:
            out.append((subjects[owner[i]], f"convention:{rule}", value, None))
    return out


_NOT_NOW = _rx(r"\b(?:previously|formerly|originally|initially|used\s+to|no\s+longer|never)\b"
               r"[^,;]*$")


def _affix_shape(value: str) -> str | None:
    """With no rule word ("use 'a_' for arguments"), an affix's own shape says where it goes."""
    if len(value) < 2 or " " in value or value.startswith("_") == value.endswith("_"):
        return None
    return "prefix" if value.endswith("_") else "suffix"


_UNDERSCORE_THEN = _rx(
    r"\b(?:an?\s+)?underscore\s+(?:followed\s+by|and\s+then)\s+(?:the\s+)?"
    r"(?:(?:letters?|characters?|string|word)\s+)?[\"'`\u2018\u201c]([a-z0-9]{1,20})[\"'`\u2019\u201d]"
)
_THEN_UNDERSCORE = _rx(
    r"[\"'`\u2018\u201c]([a-z0-9]{1,20})[\"'`\u2019\u201d]\s*,?\s+followed\s+by\s+(?:an?\s+)?"
    r"underscore\b"
)


def _spell_affixes(sentence: str) -> str:
    """"an underscore followed by the letters 'md'" -> "'_md'"; "'m' followed by an underscore"
    -> "'m_'"."""
    sentence = _UNDERSCORE_THEN.sub(lambda m: f"'_{m.group(1)}'", sentence)
    return _THEN_UNDERSCORE.sub(lambda m: f"'{m.group(1)}_'", sentence)


def _conventions(sentence: str, previous: list[str]) -> tuple[list[_Extracted], list[str]]:
    """Naming rules of a sentence, and the targets it mentions (context for the next one)."""
    if not _KIND_WORD.search(sentence) and not (previous and _ANAPHOR.search(sentence)):
        return [], []  # no kind of code entity named, nothing to refer back to: no rule
    sentence = _spell_affixes(sentence)
    targets = _targets(sentence)
    weak = {m.start("f") for m in _TARGET.finditer(sentence) if m.group("f")}
    anaphoric = not targets and bool(previous) and _ANAPHOR.search(sentence) is not None
    if anaphoric:
        targets = [(0, 0, previous[-1])]
    elif not targets:
        return [], []
    subjects = [t[2] for t in targets]
    out: list[_Extracted] = []
    for case in _case_styles(sentence):
        i = _owner(targets, sentence, case.start(), case.end())
        out.append((subjects[i], "convention:case", _case_style(case.group(1)), None))
    values = _values(sentence)
    owner = [_owner(targets, sentence, k.start(), k.end()) for k in values] or [0]
    out.extend(_affix_rules(sentence, subjects, owner))
    if not any(p != "convention:case" for _, p, _, _ in out):
        for i, t in enumerate(targets):
            if t[0] in weak:
                continue  # a bare "for <kind>" target carries no "contains" rule
            hi = targets[i + 1][0] if i + 1 < len(targets) else len(sentence)
            contains = _CONTAINS_PHRASE.search(sentence, 0 if i == 0 else t[0], hi)
            phrase = clean(contains.group(1))[0] if contains else ""
            if phrase:
                out.append((t[2], "convention:contains", phrase, None))
    if anaphoric:  # "Begin them with 'r_'. End them with '_s'." keeps the context going
        return out, (previous if out else [])
    # a bare "for <kind>" is too loose to carry over to the next sentence's "it" or "them"
    return out, [t[2] for t in targets if t[0] not in weak]


_POLICY_WORD = _rx(
    r"(?:^|(?<=[:;,])|\b(?:we|you|please|to|should|must|will|shall|and|so|then|also|remember|"
    r"let'?s)\s+)\s*(always|never)\s+(.+?)\s*[.!]*\s*$"
)
_DO_NOT = _rx(_LEAD + r"(?:do\s+not|don'?t)\s+(.+?)\s*[.!]*\s*$")
_MUST_ALWAYS = _rx(_LEAD + _THE + _NP + r"\s+(?:must|should)\s+(always|never)\s+(.+?)\s*[.!]*\s*$")
_FILLER = re.compile(r"\b(?:a|an|the|your|our|my|their|its)\s+", re.IGNORECASE)


def _rule_phrase(text: str) -> str:
    cut, _ = clean(text)
    return " ".join(_FILLER.sub("", cut + " ").split())


def _policies(sentence: str) -> Iterator[_Extracted]:
    m = _MUST_ALWAYS.search(sentence)
    if m:
        subject = _rule_phrase(f"{m.group(1)} {m.group(3)}")
        if subject:
            yield subject, "convention", m.group(2).lower(), None
        return
    m = _POLICY_WORD.search(sentence)
    if m:
        subject = _rule_phrase(m.group(2))
        if subject:
            yield subject, "convention", m.group(1).lower(), None
        return
    m = _DO_NOT.search(sentence)
    if m:
        subject = _rule_phrase(m.group(1))
        if subject:
            yield subject, "convention", "never", None


# ---------------------------------------------------------------------------------------------
# Driver

_EXTRACTORS: list[Callable[[str], Iterator[_Extracted]]] = [
    _ownership, _usage, _status, _defaults, _versions, _scalars,
]
# Words without which an extractor's patterns cannot match: one cheap search skips a family of
# regexes for the many sentences that say nothing of the kind (most prose).
_GATES: dict[Callable[[str], Iterator[_Extracted]], re.Pattern[str]] = {
    _ownership: _rx(r"owns|owned|responsible|accountable|assign"),
    _usage: _rx(
        r"us|adopt|choos|chose|select|pick|prefer|go\s+with|went\s+with|settled|standardi|"
        r"switch|mov|migrat|chang|upgrad|downgrad|transition|replac|supersed|relies|rely|"
        r"runs\s+on|built\s+on|handled|backed|powered|served|implemented"
    ),
    _status: _rx(r"deprecat|no\s+longer|stop|don'?t|do\s+not|now"),
    _defaults: _rx(r"default"),
    _versions: _rx(r"version|pin|=="),
    _scalars: _rx(r"[:=]|set|should\s+be|must\s+be"),
}


MAX_SENTENCE_CHARS = 1200
"""Longer "sentences" are code or data dumps, not prose; they are not read for claims."""


def _sentence_claims(sentence: str, previous: list[str]) -> tuple[list[_Extracted], list[str]]:
    if len(sentence) > MAX_SENTENCE_CHARS:
        return [], []
    body = _unwrap_speech(sentence)
    if body.rstrip(" \"'\u201d)").endswith("?"):
        return [], []  # a question asserts nothing
    out, targets = _conventions(body, previous)
    for extractor in _EXTRACTORS:
        if out and extractor is _usage:
            continue  # a naming rule is sharper than "use X for Y"
        if _GATES[extractor].search(body):
            out.extend(extractor(body))
    if not out:
        out.extend(_policies(body))  # "always/never ..." only when nothing sharper matched
    return out, targets


def _claims_in(span: Span, previous: list[str]) -> tuple[list[Claim], list[str]]:
    extracted, targets = _sentence_claims(span.text, previous)
    cue = has_correction_cue(span.text)
    out: list[Claim] = []
    for subject, predicate, value, replaces in extracted:
        if not subject or not value:
            continue
        replaces = replaces if replaces and replaces != value else None
        out.append(Claim(subject, predicate, value, span.text, span.start, span.end, cue, replaces))
    return out, targets


def extract_claims(text: str) -> list[Claim]:
    """All claims of a text, in order, de-duplicated on (subject, predicate, value)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Claim] = []
    previous: list[str] = []
    for span in split_sentences(text):
        claims, previous = _claims_in(span, previous)
        for claim in claims:
            key = (claim.subject, claim.predicate, claim.value)
            if key not in seen:
                seen.add(key)
                out.append(claim)
    return out
