"""Claim extraction: (subject, predicate, value) triples read off single sentences.

A claim is the unit the policy retires. Two claims meet on a chain when their canonical subject
and predicate agree, so every pattern works hard to put the *thing governed* in the subject and
the *choice made about it* in the value: "We use MongoDB for analytics" is (analytics,
implementation, mongodb), so a later "Postgres for analytics" lands on the same chain.

Switches that do not say what the new thing is for ("we switched from pip to uv") get the subject
``tool:<old value>`` (``tool:pip``): the old value is the only anchor the sentence offers, and a
later "we use poetry instead of pip" derives the same subject and so meets the chain. A sentence
that names its subject ("the gateway now uses httpx instead of requests") keeps it, and a revert
("the gateway uses requests again", "we went back to pip") lands on the same chain with a cue.

A concrete actor beside a purpose ("The gateway uses requests for outbound HTTP calls") keeps the
purpose as the subject (so "the service uses Postgres for storage" and "the service uses Redis for
caching" stay apart), and the sentence also yields a *weak* claim on the actor's chain
``(gateway, implementation, requests)``. A weak claim takes part only in relations that name its
value ("the gateway now uses httpx instead of requests" retires it, and with it the sentence),
never in newer-same-kind supersession or conflicts, so two purposes of
one actor never retire each other.

Every sentence goes through one table, ``RULES``, in priority order: first the vetoes (questions,
chit-chat, hypotheticals, text about claims), any of which means the sentence asserts nothing;
then the extractors, each behind a cheap gate, some standing down when a sharper rule already
found a claim (``yields_to``), some running only beside one (``requires``). Precision comes before recall: a subject that is a pronoun, a
clause or a generic phrase ("a newer claim"), a value that is somebody's ("their platform"),
and an "always/never" without a working verb ("always here to help") yield nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

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
    weak: bool = False  # takes part only in relations naming its value (see module docstring)
    topic: tuple[tuple[str, float], ...] = ()
    """What the claim is about, as weighted terms (``lintaid.policy.topics``)."""
    cue_kind: str = ""
    """What the statement does with its value (``lintaid.policy.cues``): change, revert, ..."""
    peers: str = ""
    """Every other value its statement states (``relations.SEP``-joined): a list restated
    with one more item does not retire the items it still holds."""


# ---------------------------------------------------------------------------------------------
# Cues

_CUE = re.compile(
    r"\b(?:supersedes?|superseded|replaces|replaced|instead\s+of|no\s+longer|"
    r"(?:changed|switched|migrated|moved)\s+from|switched\s+to|migrated\s+to|previously|formerly|"
    r"now\s+(?:use[sd]?|using|owns?|handles?|defaults?)|(?:is|are)\s+now|from\s+now\s+on|"
    r"going\s+forward|again|(?:went|gone|switched|moved|changed|fell|rolled|reverted|is|are|was|"
    r"were)\s+(?:[\w'-]+\s+){0,3}?back\s+(?:to|on)|rolled\s+back|revert(?:ed|s)?|returned\s+to|"
    r"undid|undone|undo)\b"
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
    r"for\s+now|previously|formerly|as\s+of|until|anymore|any\s+more|as\s+well|too|now|again|"
    r"once\s+more)\b)",
    re.IGNORECASE,
)
# Tails that only qualify the phrase ("requests again instead of httpx"): what they replace may
# still follow.
_SOFT_TAIL = re.compile(r"^\s*(?:again|once\s+more|now|too|as\s+well|anymore|any\s+more)\b",
                        re.IGNORECASE)
_REPLACED_LATER = re.compile(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of|replacing)\b",
                             re.IGNORECASE)
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
        if _SOFT_TAIL.match(rest) and not _REPLACED_TAIL.match(rest):
            later = _REPLACED_LATER.search(rest)
            rest = rest[later.start():] if later else rest
        if _REPLACED_TAIL.match(rest):
            tail = _REPLACED_TAIL.sub("", rest, count=1)
            replaced_text, _ = clean(tail)
            replaced = replaced_text or None
        phrase = phrase[: m.start()]
        break
    return canonical(phrase), replaced


_PERSONAL = frozenset({"i", "we", "you", "they", "he", "she", "it"})
_PEOPLE = frozenset({"i", "we", "you", "they", "he", "she", "me", "us", "them", "him"})
# Words that make a "subject" a clause ("the unit that is retired") rather than a thing.
_CLAUSE_WORDS = frozenset(
    {"is", "are", "was", "were", "be", "been", "being", "whose", "which", "that", "who", "whom",
     "when", "if", "because", "whether", "where", "while", "although", "though", "unless"}
)
# An indefinite or quantified phrase is about things in general ("a newer claim supersedes an
# older one"), not about one thing a project decided.
_GENERIC = re.compile(r"^\s*[\"'`(]?\s*(?:a|an|any|each|every|some|no|another|other|such)\s",
                      re.IGNORECASE)
# A value that is somebody's, or a stand-in, is no choice ("use their platform for ...").
_NOT_A_CHOICE = re.compile(
    r"^\s*[\"'`(]?\s*(?:his|her|their|your|my|its|this|that|these|those|some|stuff|something|"
    r"anything|everything|nothing|whatever|it|all\s+of|one\s+of)\b", re.IGNORECASE)
_NOT_IN_SUBJECT = re.compile(r"[()\[\]{}|<>=`\"]")
MAX_SUBJECT_WORDS = 6
MAX_VALUE_WORDS = 5


def _value(phrase: str) -> tuple[str, str | None]:
    """Like clean(), but no value when the phrase is a pronoun, somebody's, or a long clause."""
    value, replaced = clean(phrase)
    words = value.split()
    if (value in _PRONOUNS or _NOT_A_CHOICE.match(phrase) or len(words) > MAX_VALUE_WORDS
            or _PEOPLE.intersection(words) or (words and words[0] in _PRONOUNS | _CLAUSE_WORDS)):
        return "", replaced
    return value, replaced


def _bad_subject(subject: str, raw: str | None = None) -> bool:
    """No subject: empty, a pronoun, a clause ("we released", "the unit that is retired"), a
    person-bound phrase ("having friends you can"), or, seen in ``raw``, a generic one."""
    if not subject or subject in _PRONOUNS:
        return True
    words = subject.split()
    return (words[0] in _PRONOUNS or words[-1] == "it" or len(words) > MAX_SUBJECT_WORDS
            or bool(_PEOPLE.intersection(words)) or bool(_CLAUSE_WORDS.intersection(words))
            or _NOT_IN_SUBJECT.search(subject) is not None or len(subject) < 2
            or (raw is not None and _GENERIC.match(raw) is not None))


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
        if _bad_subject(subject, m.group(sg)) or not owner or _GENERIC.match(m.group(og)):
            continue
        yield subject, "owner", owner, rep1 or rep2
        return


# ---------------------------------------------------------------------------------------------
# Usage, switches, deprecation

# Negated, past or only hypothetical in the clause before the verb: no claim.
_NEGATED = re.compile(
    r"\b(?:never|not|don'?t|doesn'?t|didn'?t|won'?t|can'?t|cannot|no\s+longer|stop(?:ped)?|"
    r"avoid|without|used\s+to|previously|formerly|originally|initially|"
    r"could|might|can|maybe|perhaps|if|unless|whether|would(?!\s+like)|consider(?:ing)?|"
    r"thinking\s+(?:about|of)|planning\s+to|wonder(?:ing)?)\b[^,;]*$",
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
# "for good", "for example", "for both of us": no purpose a tool is chosen for.
_NOT_A_PURPOSE = frozenset(
    {"good", "fun", "free", "real", "sure", "example", "instance", "now", "once", "ever", "life",
     "living", "while", "years", "ages", "bit", "me", "you", "us", "them", "everyone", "all",
     "both", "a while", "a living", "a bit", "the first time", "first time", "a change", "change"}
)
# Revert targets that are a topic or a place in a conversation, not a value ("went back to
# the drawing board", "back to work").
_DISCOURSE = frozenset(
    {"work", "normal", "basics", "square one", "drawing board", "topic", "point", "question",
     "discussion", "start", "beginning", "office", "school", "bed", "sleep", "later", "that",
     "this", "it", "what", "earlier"}
)
_CLAUSE_END = re.compile(r"\s*[,;(]\s*|\s+-\s+|\s*\u2014\s*")


def _no_purpose(purpose: str) -> bool:
    return purpose in _NOT_A_PURPOSE or purpose.split()[0] in _NOT_A_PURPOSE


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
    raw = purpose or subj
    if raw and _bad_subject(subject, raw):
        return None
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
    """Use X for Y, switches from X to Y, replacements, and "<subject> uses X".

    A named subject beats the ``tool:<old>`` anchor: "The gateway now uses httpx instead of
    requests" is about the gateway, so "the gateway uses requests again" meets it.
    """
    found = False
    for rx in (_USE_FOR, _USE_AS):
        m = _first_unnegated(rx, sentence)
        if not m:
            continue
        tech, rep1 = _value(m.group(1))
        purpose, rep2 = clean(m.group(2))
        if not tech or _bad_subject(purpose, m.group(2)) or _no_purpose(purpose):
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
    uses = _subject_uses(sentence)
    if uses:
        yield uses
        return
    for rx, old_g, new_g in ((_USE_INSTEAD, 2, 1), (_REPLACED_WITH, 1, 2), (_WAS_REPLACED, 1, 2),
                             (_REPLACES, 2, 1)):
        m = _first_unnegated(rx, sentence)
        if not m:
            continue
        new_raw = m.group(new_g)
        if canonical(new_raw) in _PRONOUNS:
            continue  # "This replaces the previous decision": no content claim
        if rx in (_WAS_REPLACED, _REPLACES) and _bad_subject(clean(m.group(1))[0], m.group(1)):
            continue  # "a record whose every claim is superseded and ..."
        claim = _switch_claim(None, m.group(old_g), new_raw, "replace")
        if claim:
            yield claim
            return
    m = _first_unnegated(_USED_FOR, sentence)
    if m:
        tech, rep1 = _value(m.group(1))
        subject, rep2 = clean(m.group(2))
        if tech and not _bad_subject(subject, m.group(2)) and not _no_purpose(subject):
            yield subject, "implementation", tech, rep1 or rep2


def _subject_uses(sentence: str) -> _Extracted | None:
    """"<subject> uses X [for Y] [instead of Z]": the subject (or Y) and X."""
    m = _first_unnegated(_USES, sentence)
    if not m:
        return None
    subject, rep1 = clean(m.group(1))
    if _bad_subject(subject, m.group(1)):
        return None  # "A viewer is served by ...": things in general
    head = _CLAUSE_END.split(m.group(2), maxsplit=1)[0]
    tech_text, for_what = _split_purpose(head)
    tech, _ = _value(tech_text)
    rep2 = clean(m.group(2))[1]
    if for_what:
        subject = clean(for_what)[0]
        if _bad_subject(subject, for_what) or _no_purpose(subject):
            return None
    if not tech:
        return None
    return subject, "implementation", tech, rep1 or rep2


# An "actor" that is an instruction or a promise ("always rely on X for Y", "I'll make sure
# to rely on X"): nobody whose chain a later sentence names.
_NOT_AN_ACTOR = re.compile(
    r"\b(?:to|always|never|usually|often|sometimes|also|just|only|still|should|must|will|"
    r"would|can|could|may|might|shall|make|sure|please|let'?s|try)\b|'(?:ll|m|re|ve|d)\b")


def _actor_uses(sentence: str) -> Iterator[_Extracted]:
    """"<actor> uses X for Y": the actor's own (weak) claim on X, beside the purpose's claim.

    Only a concrete actor: "we" or "they" name nobody whose chain a later sentence could
    join."""
    m = _first_unnegated(_USES, sentence)
    if not m:
        return
    actor, rep1 = clean(m.group(1))
    if _bad_subject(actor, m.group(1)) or _NOT_AN_ACTOR.search(actor):
        return
    head = _CLAUSE_END.split(m.group(2), maxsplit=1)[0]
    tech_text, for_what = _split_purpose(head)
    if not for_what:
        return  # "<actor> uses X": the usage rule's claim is the actor's already
    purpose = clean(for_what)[0]
    tech, _ = _value(tech_text)
    if not tech or purpose == actor or _bad_subject(purpose, for_what) or _no_purpose(purpose):
        return
    yield actor, "implementation", tech, rep1 or clean(m.group(2))[1]


# ---------------------------------------------------------------------------------------------
# Reverts: the old value is back. The claim lands on the chain of what it reverts (the subject
# the sentence names, else the purpose, else ``tool:<restored value>``, the anchor a purpose-less
# switch away from that value used), and its cue retires the claim it reverts.

_BACK = (
    r"(?:has\s+|have\s+|had\s+)?(?:now\s+)?(?:(?:went|gone|switched|moved|changed|fell|come|came|"
    r"(?:is|are|was|were|has\s+been|have\s+been)(?:\s+(?:now\s+)?(?:rolled|switched|moved|"
    r"changed))?)\s+back\s+(?:to|on)|(?:is|are|was|were|has\s+been|have\s+been)\s+(?:now\s+)?"
    r"(?:reverted|restored|returned)\s+to|reverted\s+to|returned\s+to)\s+(?:using\s+)?"
)
_REVERT_SUBJECT_LED = _rx(_LEAD + _THE + _NP + r"\s+" + _BACK + _THE + _REST)
_REVERT_ACTOR_LED = _rx(
    r"\b(?:(?:went|switched|moved|changed|fell|rolled|reverted)\s+(?:(?P<a>[^,;]{1,40}?)\s+)?back"
    r"\s+(?:to|on)|(?:reverted|returned|restored)\s+(?:(?P<b>[^,;]{1,40}?)\s+)?to)\s+"
    r"(?:using\s+)?" + _THE + _REST
)
_REVERT_AGAIN = _rx(
    r"\b(?:we|i|they|you)\s+(?:now\s+)?(?:use|are\s+using|rely\s+on|run\s+on|have|adopted|"
    r"picked|chose)\s+" + _THE + r"([^,;]{1,60}?)\s+(?:again|once\s+more)\b\s*(.*?)\s*[.!]*\s*$"
)
_UNDO = _rx(
    r"\b(?:undid|undo(?:ne|ing|es)?|revert(?:ed|s|ing)?|roll(?:ed|s|ing)?\s+back|backed\s+out)\s+"
    r"(?:the\s+|our\s+|(?P<owner>[^,;]{1,40}?)'s\s+)(?:switch|move|migration|change|upgrade|"
    r"transition)(?:\s+(?:of|in|for)\s+(?:the\s+)?(?P<of>[^,;]{1,40}?))?"
    r"(?:\s+from\s+(?:the\s+)?(?P<old>[^,;]{1,60}?))?\s+to\s+" + _THE + r"(?P<new>.+?)\s*[.!]*\s*$"
)
_WHERE_TAIL = re.compile(r"\s+(?:for|in|on)\s+(?:the\s+)?(.+)$", re.IGNORECASE)


def _revert_claim(subject_raw: str | None, restored_raw: str,
                  undone: str | None = None) -> _Extracted | None:
    """A claim that ``restored`` holds again for the subject (or its ``tool:`` anchor)."""
    restored_text, where = _split_where(restored_raw)
    restored, replaced = _value(restored_text)
    if not restored or restored in _DISCOURSE:
        return None
    subject = ""
    for raw in (subject_raw, where):
        if raw:
            candidate, also_replaced = clean(raw)
            if _bad_subject(candidate, raw) or _no_purpose(candidate):
                return None
            subject, replaced = candidate, replaced or also_replaced
    replaces = undone or replaced
    if subject and normalize_value(restored) is not None:
        return subject, "value", normalize_value(restored) or restored, replaces
    return subject or f"tool:{restored}", "implementation", restored, replaces


def _split_where(text: str) -> tuple[str, str | None]:
    """'requests for the gateway' -> ('requests', 'gateway')."""
    m = _WHERE_TAIL.search(text)
    return (text[: m.start()], m.group(1)) if m else (text, None)


def _reverts(sentence: str) -> Iterator[_Extracted]:
    m = _first_unnegated(_UNDO, sentence)
    if m:
        new_text, where = _split_where(m.group("new"))
        undone, _ = _value(new_text)
        raw_subject = m.group("owner") or m.group("of") or where
        if undone and m.group("old"):
            claim = _revert_claim(raw_subject, m.group("old"), undone)
        elif undone and raw_subject:
            subject = clean(raw_subject)[0]
            ok = not _bad_subject(subject, raw_subject)
            claim = (subject, "implementation", f"not {undone}", undone) if ok else None
        else:
            claim = (undone, "status", "deprecated", None) if undone else None
        if claim:
            yield claim
        return
    m = _first_unnegated(_REVERT_SUBJECT_LED, sentence)
    if m and canonical(m.group(1)) not in _PRONOUNS:
        claim = _revert_claim(m.group(1), m.group(2))
        if claim:
            yield claim
            return
    m = _first_unnegated(_REVERT_ACTOR_LED, sentence)
    if m:
        claim = _revert_claim(m.group("a") or m.group("b"), m.group(3))
        if claim:
            yield claim
            return
    m = _first_unnegated(_REVERT_AGAIN, sentence)
    if m:
        claim = _revert_claim(None, f"{m.group(1)} {m.group(2)}")
        if claim:
            yield claim


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


def _retired(sentence: str) -> Iterator[_Extracted]:
    """"X is deprecated", "we no longer use X"."""
    for rx in _DEPRECATED:
        m = rx.search(sentence)
        if m:
            raw, _ = _split_purpose(_NEXT_CLAUSE.sub("", m.group(1)))
            subject, _ = _value(raw)
            if subject and not _bad_subject(subject):
                yield subject, "status", "deprecated", None
            return


def _in_use(sentence: str) -> Iterator[_Extracted]:
    """"We now use X", "we use X now" (when no rule said what X is used for)."""
    for rx in _IN_USE:
        m = rx.search(sentence)
        if m and not _is_negated(sentence, m.start()):
            raw, _ = _split_purpose(m.group(1))
            raw = re.split(r"\s+(?:as|to|instead\s+of|rather\s+than)\s+", raw, maxsplit=1)[0]
            subject, replaced = _value(raw)
            if subject and not _bad_subject(subject):
                yield subject, "status", "in-use", replaced
            return


# ---------------------------------------------------------------------------------------------
# Defaults and versions

_VER = r"(v?\d+(?:\.\d+)*(?:[-+][0-9a-z][0-9a-z.]*[0-9a-z]|[a-z]+\d*)?)"
# No backtracking into "2.0" -> "2"; the version ends the clause ("... to 0.27.2 because ...").
_END = (r"(?!\.?\d)(?=\s*(?:[.,;!)]|$)|\s+(?:because|since|as|until|for|now|so|and|but|"
        r"which)\b)")
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


_CHANGE_VERB = (
    r"\b(?:set|sets|setting|chang(?:e|ed|es|ing)|rais(?:e|ed|es|ing)|lower(?:ed|s|ing)?|"
    r"reduc(?:e|ed|es|ing)|increas(?:e|ed|es|ing)|decreas(?:e|ed|es|ing)|bump(?:ed|s|ing)?|"
    r"dropp(?:ed|ing)|drops?|cut(?:s|ting)?|updat(?:e|ed|es|ing)|tun(?:e|ed|es|ing)|"
    r"cap(?:ped|s|ping)?|lift(?:ed|s|ing)?)\s+"
)
_OLD = r"(?:\s*,?\s*(?:instead\s+of|rather\s+than|not|\(was|(?:down\s+|up\s+)?from)\s+(" + VALUE + r")\)?)"
_CHANGE_END = (r"(?=\s*[.!\"\u201d]*\s*$|\s*[,;]|\s+(?:because|since|as|so|and|but|which|"
               r"after|now|in|on|at|for|across|within|under|via|per)\b)")
_SCALAR_CHANGES = (
    # "reduced the gateway retry count from 5 to 2", "set X to 2 instead of 5"
    _rx(_CHANGE_VERB + _THE + r"([a-z][\w ./-]{0,99}?)\s+(?:from\s+(" + VALUE + r")\s+)?"
        r"(?:(?:down|up)\s+)?to\s+(" + VALUE + r")" + _OLD + r"?" + _CHANGE_END),
    # "gateway retry count: 2 instead of 5", "the retry count is now 2, not 5"
    _rx(r"(?:^|(?<=[:;]))\s*(?:(?:[-*+]|\d+[.)])\s+)?" + _THE + r"([a-z][\w ./-]{0,99}?)\s*"
        r"(?:[:=]|\b(?:is|are)\s+(?:now\s+)?(?:set\s+to\s+)?)\s*()(" + VALUE + r")" + _OLD
        + _CHANGE_END),
)


def _setting_name(raw: str) -> str | None:
    """A setting's name as claims hold it; None for a label, a pronoun, or a name the default
    and version extractors own ("default timeout", "python version")."""
    name = canonical(raw)
    if not name or name in _LABELS or name in _PRONOUNS:
        return None
    if name.startswith("default ") or (name.endswith(" version") and name != "version"):
        return None
    return name


def _scalar_changes(sentence: str) -> Iterator[_Extracted]:
    """A setting changed to a new value, naming what it was or not: "reduced the retry count
    to 2", "retry count: 2 instead of 5". The old value, when named, is what it replaces."""
    for rx in _SCALAR_CHANGES:
        m = _first_unnegated(rx, sentence)
        if not m:
            continue
        name = _setting_name(m.group(1))
        value = normalize_value(m.group(3))
        old_text = m.group(2) or m.group(4)
        old = normalize_value(old_text) if old_text else None
        if name is None or value is None:
            continue
        yield name, "value", value, old if old != value else None
        return


def _scalars(sentence: str) -> Iterator[_Extracted]:
    for rx in (_SCALAR, _SET_TO):
        m = rx.search(sentence)
        if not m:
            continue
        name = _setting_name(m.group(1))
        value = normalize_value(m.group(2))
        if name is None or value is None:
            continue
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
_AFFIX_WORDS = [
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
    for rule, rx in _AFFIX_WORDS:
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
# What a working rule tells someone to do. "Always here to help!", "never give up" and "don't
# worry" lead with no such verb, so they are no rule about the project.
_DIRECTIVE_VERBS = frozenset(
    """use add include write commit push pull merge rebase squash amend import call log print
    catch raise throw return test validate check lint format pin lock deploy release tag
    document comment annotate type name prefix suffix start end begin store keep set enable
    disable configure install upgrade downgrade bump review sign hardcode hard-code expose mock
    skip ignore delete remove drop edit modify touch depend rely create open close wrap handle
    declare define cache retry encrypt hash escape sanitize sanitise rotate restart build compile
    bundle vendor fork branch force-push amend rewrite upload fetch query index migrate refactor
    reuse copy share leak send trust bypass override access read update overwrite run execute
    break mutate assert annotate inline export expose generate regenerate check-in backport
    cherry-pick rename move split bind listen serve""".split()
)


def _rule_phrase(text: str) -> str:
    cut, _ = clean(text)
    return " ".join(_FILLER.sub("", cut + " ").split())


def _directive(phrase: str, passive: bool = False) -> bool:
    """A rule's phrase leads with something to do in the work ("use a linter"); with
    ``passive``, also a participle ("inputs must always be validated")."""
    words = phrase.lower().split()
    if passive and words[:1] == ["be"] and len(words) > 1 and words[1].endswith("ed"):
        word = words[1]  # validated -> validate, logged -> log, pinned -> pin
        return bool({word[:-1], word[:-2], word[:-3]} & _DIRECTIVE_VERBS)
    if len(words) > 1 and words[1] in _PRONOUNS:
        return False  # "don't bump it in this PR": about one thing at hand, not a standing rule
    return bool(words) and words[0] in _DIRECTIVE_VERBS


def _policies(sentence: str) -> Iterator[_Extracted]:
    m = _MUST_ALWAYS.search(sentence)
    if m:
        subject = _rule_phrase(f"{m.group(1)} {m.group(3)}")
        if subject and _directive(m.group(3), passive=True) and not _bad_subject(canonical(m.group(1)),
                                                                    m.group(1)):
            yield subject, "convention", m.group(2).lower(), None
        return
    m = _POLICY_WORD.search(sentence)
    if m:
        subject = _rule_phrase(m.group(2))
        if subject and _directive(m.group(2)):
            yield subject, "convention", m.group(1).lower(), None
        return
    m = _DO_NOT.search(sentence)
    if m:
        subject = _rule_phrase(m.group(1))
        if subject and _directive(m.group(1)):
            yield subject, "convention", "never", None


# ---------------------------------------------------------------------------------------------
# Literal settings: "Artifact bucket is s3://alpha", "artifact_bucket: s3://alpha"

_LITERAL = (
    r"(?P<v>[a-z][a-z0-9+.-]*://[^\s\"'`]+|`[^`\s]{1,120}`|\"[^\"\s]{1,120}\"|'[^'\s]{1,120}'"
    r"|(?=[\w@~+-]*[./:_@~-][\w/])[\w./:@~+-]*[a-z0-9][\w./:@~+-]*)"
)
# "... instead of s3://alpha": what the new value replaces, when the sentence names it.
_LITERAL_OLD = (r"(?:\s*,?\s+(?:instead\s+of|rather\s+than|not)\s+(?:the\s+)?"
                + _LITERAL.replace("?P<v>", "?P<old>") + r")?")
_LITERAL_IS = _rx(
    r"^" + _LEAD + _THE + r"(?P<s>[a-z][\w .-]{0,60}?)\s+(?:is|are)\s+(?:now\s+)?(?:set\s+to\s+)?"
    + _THE + r"(?:" + _LITERAL + _LITERAL_OLD + r"|(?P<n>" + VALUE + r"))(?:\s+now)?\s*[.!]*\s*$"
)
_POSSESSED = re.compile(r"^\s*(?:my|your|his|her|their|its)\s", re.IGNORECASE)
_LITERAL_KEY = _rx(
    r"^" + _LEAD + _THE + r"(?P<s>[a-z][\w .-]{0,60}?)\s*[:=]\s*" + _LITERAL + _LITERAL_OLD
    + r"\s*[.!]*\s*$"
)
# Subjects that name a turn of the conversation or a finding, not a setting.
_NOT_A_SETTING = frozenset(
    {"problem", "issue", "bug", "culprit", "fix", "answer", "reason", "question", "result",
     "output", "error", "idea", "point", "thing", "difference", "goal", "plan", "catch", "trick",
     "cause", "solution", "change", "diff", "patch", "command", "see", "file", "files", "path",
     "paths", "link", "url", "source", "session", "branch", "revision", "cwd", "commit", "id",
     "tools used", "affected paths", "compact summary", "summary", "tests", "test", "fixed",
     "changed", "added", "removed", "updated", "done", "next", "todo", "e.g", "i.e"}
)


_LABEL_PREFIX = re.compile(r"^\s*([A-Za-z][\w ]{0,20}?)\s*:\s+")


def _unlabelled(sentence: str) -> str:
    """Without a capture's label ("Result: Artifact bucket: s3://alpha")."""
    m = _LABEL_PREFIX.match(sentence)
    return sentence[m.end():] if m and canonical(m.group(1)) in _LABELS else sentence


def _literals(sentence: str) -> Iterator[_Extracted]:
    sentence = _unlabelled(sentence)
    for rx in (_LITERAL_IS, _LITERAL_KEY):
        m = rx.search(sentence)
        if not m:
            continue
        name = canonical(m.group("s"))
        number = m.groupdict().get("n")
        if number:  # "The backoff cap is 2 seconds now"
            if (_POSSESSED.match(m.group("s")) or name.endswith("version") or name in _LABELS
                    or name in _NOT_A_SETTING or _bad_subject(name, m.group("s"))):
                continue
            yield name, "value", normalize_value(number) or number, None
            return
        value = m.group("v").strip("`\"'").rstrip(".,;")
        if (not value or normalize_value(value) is not None or name in _LABELS
                or name in _NOT_A_SETTING or _bad_subject(name, m.group("s"))):
            continue
        single = " " not in name and not re.search(r"[_.-]", name)
        if rx is _LITERAL_KEY and single:
            continue  # "Fixed: src/a.py": a one-word label is no setting
        old = (m.group("old") or "").strip("`\"'").rstrip(".,;").lower() or None
        yield name, "value", value.lower(), old
        return


# "(`LINTAID_HOOK_TIMEOUT_MS`, default 1000)", "`RETRIES` (default 3)"
_ENV_DEFAULT = _rx(
    r"`?\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b`?\s*(?:,\s*|\(\s*)default(?:s\s+to)?\s*:?\s+"
    r"(" + VALUE + r"|`[^`\s]{1,60}`)\s*\)"
)


def _env_defaults(sentence: str) -> Iterator[_Extracted]:
    for m in _ENV_DEFAULT.finditer(sentence):
        raw = m.group(2).strip("`")
        yield m.group(1).lower(), "default", normalize_value(raw) or raw.lower(), None


# ---------------------------------------------------------------------------------------------
# Sentences that assert nothing

_ROLE_OPT = r"^(?:[A-Za-z][\w .'-]{0,30}:\s*)?(?:(?:so|and|but|ok(?:ay)?|hey|also|well|now)[,!]?\s+)*"
_QUESTION = _rx(
    _ROLE_OPT + r"(?:(?:can|could|would|will|shall|should|do|does|did|is|are|was|were|has|have|"
    r"had|may|might)\s+(?:i|we|you|they|he|she|it|the|this|that|there|someone|anyone|our|your)\b"
    r"|(?:what|which|who|whom|whose|why|how|where|when)\s+(?:is|are|was|were|do|does|did|"
    r"should|would|could|can|will|has|have|about)\b|any\s+(?:idea|thoughts)\b|i\s+wonder\b|"
    r"is\s+it\s+true\b)"
    r"|[?][\s\"'\u201d)]*$"
)
_PLEASANTRY = (
    r"(?:thanks?(?:\s+(?:so\s+much|a\s+lot|again|a\s+ton))?(?:\s+for\s+[^.!?]*)?|"
    r"thank\s+you(?:\s+(?:so\s+much|again|very\s+much))?(?:\s+for\s+[^.!?]*)?|"
    r"(?:i'?m\s+|i\s+am\s+)?(?:always\s+)?(?:happy|glad)\s+to\s+help|(?:always\s+)?here\s+to\s+help|"
    r"hope\s+(?:this|that|it)\s+helps|no\s+(?:problem|worries)|you(?:'re|\s+are)\s+welcome|"
    r"any\s*time|my\s+pleasure|sounds?\s+(?:good|great|perfect)|looks\s+good(?:\s+to\s+me)?|lgtm|"
    r"got\s+it|perfect|great|awesome|cool|nice|ok(?:ay)?|sure|yes|yeah|yep|no|nope|of\s+course|"
    r"absolutely|exactly|indeed|definitely|good\s+(?:morning|afternoon|evening|night|luck|job|"
    r"work|point|question|idea|catch|call)|hi|hello|hey|bye|cheers|see\s+you[^.!?]*|"
    r"have\s+a\s+(?:good|great|nice)\s+\w+|let\s+me\s+know\s+if\s+[^.!?]*|"
    r"(?:don'?t\s+hesitate|feel\s+free)\s+to\s+[^.!?]*|well\s+done|nice\s+work|great\s+work|"
    r"keep\s+it\s+up|haha|lol|wow|amazing|congrat\w*(?:\s+on\s+[^.!?]*)?|"
    r"sorry(?:\s+about\s+that)?|glad\s+(?:it|that|this)\s+[^.!?]*)"
)
_CHIT_CHAT = _rx(
    r"^(?:[A-Za-z][\w .'-]{0,30}:\s*)?" + _PLEASANTRY + r"(?:[\s,!.]+(?:" + _PLEASANTRY
    + r"|(?-i:[A-Z][\w-]*)))*[\s,!.:)(]*$"  # a name: "Thanks, Alice!"
)
_HYPOTHETICAL = _rx(
    _ROLE_OPT + r"(?:if|unless|whether|suppose|supposing|imagine|maybe|perhaps|what\s+if|"
    r"in\s+case|let\s+me|i'?ll\s+(?:check|look|try|see|get\s+back))\b"
)
# Text about claims rather than a claim: quoted patterns with placeholders ("X owns Y").
_META = re.compile(r"[\"\u201c][^\"\u201d]*\b[XYZN]\b[^\"\u201d]*[\"\u201d]")


# ---------------------------------------------------------------------------------------------
# The rule table


@dataclass
class Sentence:
    """One sentence as the rules read it; naming rules also see the sentence before."""

    text: str
    previous: list[str]
    targets: list[str] = field(default_factory=list)  # naming targets found here


def _naming(s: Sentence) -> list[_Extracted]:
    out, s.targets = _conventions(s.text, s.previous)
    return out


def _plain(fn: Callable[[str], Iterable[_Extracted]]) -> Callable[[Sentence], list[_Extracted]]:
    return lambda s: list(fn(s.text))


ANY = frozenset({"*"})
"""``yields_to`` value: the rule runs only when no rule before it found a claim."""


@dataclass(frozen=True)
class Rule:
    """One extraction rule. Rules run in ``priority`` order, lowest first.

    ``gate`` is a cheap search: when it finds nothing the rule cannot apply and is skipped (most
    prose says nothing of any kind). A ``veto`` rule has no extractor: its gate matching means
    the sentence asserts nothing, and no rule after it runs. ``yields_to`` names rules of lower
    priority numbers whose claims make this one stand down (``ANY``: any claim at all);
    ``requires`` names such rules of which one must have found a claim for this one to run.
    A ``weak`` rule's claims are weak (see the module docstring).
    """

    name: str
    priority: int
    gate: re.Pattern[str]
    extract: Callable[[Sentence], list[_Extracted]] | None = None
    yields_to: frozenset[str] = frozenset()
    requires: frozenset[str] = frozenset()
    weak: bool = False

    @property
    def veto(self) -> bool:
        return self.extract is None


RULES: tuple[Rule, ...] = tuple(sorted((
    Rule("question", 0, _QUESTION),
    Rule("chit-chat", 1, _CHIT_CHAT),
    Rule("hypothetical", 2, _HYPOTHETICAL),
    Rule("meta", 3, _META),
    Rule("naming", 10, _rx(_KINDS + r"|\b(?:them|it|those|names?)\b"), _naming),
    Rule("revert", 20, _rx(r"back\s+(?:to|on)|revert|return|restor|again|once\s+more|undid|undo|"
                           r"roll"), _plain(_reverts)),
    Rule("ownership", 30, _rx(r"owns|owned|responsible|accountable|assign"), _plain(_ownership)),
    Rule("usage", 40, _rx(
        r"us|adopt|choos|chose|select|pick|prefer|go\s+with|went\s+with|settled|standardi|"
        r"switch|mov|migrat|chang|upgrad|downgrad|transition|replac|supersed|relies|rely|"
        r"runs\s+on|built\s+on|handled|backed|powered|served|implemented"
    ), _plain(_usage), yields_to=frozenset({"naming", "revert"})),
    Rule("actor", 45, _rx(r"\b(?:uses|is\s+using|are\s+using|relies|rely|runs\s+on|built\s+on|"
                          r"handled|backed|powered|served|implemented)\b"),
         _plain(_actor_uses), requires=frozenset({"usage"}), weak=True),
    Rule("retired", 50, _rx(r"deprecat|no\s+longer|stop|don'?t|do\s+not"), _plain(_retired)),
    Rule("in-use", 55, _rx(r"now"), _plain(_in_use),
         yields_to=frozenset({"revert", "usage", "retired"})),
    Rule("default", 60, _rx(r"default"), _plain(_defaults)),
    Rule("env-default", 61, _rx(r"_[A-Z0-9]+`?\s*[,(]\s*default"), _plain(_env_defaults),
         yields_to=frozenset({"default"})),
    Rule("version", 70, _rx(r"version|pin|=="), _plain(_versions)),
    Rule("scalar-change", 75, _rx(
        _CHANGE_VERB + r"|instead\s+of|rather\s+than|,\s*not\s|\(was\s"), _plain(_scalar_changes)),
    Rule("setting", 80, _rx(r"[:=]|set|should\s+be|must\s+be"), _plain(_scalars),
         yields_to=frozenset({"scalar-change"})),
    Rule("literal", 85, _rx(r"\b(?:is|are)\b|[:=]"), _plain(_literals),
         yields_to=frozenset({"usage", "default", "version", "setting", "scalar-change", "revert",
                              "ownership"})),
    Rule("policy", 90, _rx(r"always|never|don'?t|do\s+not"), _plain(_policies), yields_to=ANY),
), key=lambda r: r.priority))


def _check_table(rules: tuple[Rule, ...]) -> None:
    """A rule may only yield to rules that run before it; names and priorities are unique."""
    seen: set[str] = set()
    priorities = [r.priority for r in rules]
    if len(set(priorities)) != len(priorities):
        raise ValueError("two rules share a priority")
    for rule in rules:
        if rule.name in seen:
            raise ValueError(f"rule {rule.name!r} declared twice")
        if rule.yields_to != ANY and not rule.yields_to <= seen:
            raise ValueError(f"rule {rule.name!r} yields to a rule that runs after it")
        if not rule.requires <= seen:
            raise ValueError(f"rule {rule.name!r} requires a rule that runs after it")
        seen.add(rule.name)


_check_table(RULES)

MAX_SENTENCE_CHARS = 1200
"""Longer "sentences" are code or data dumps, not prose; they are not read for claims."""


_Found = tuple[_Extracted, bool]  # a claim and whether it is weak


def _sentence_claims(text: str, previous: list[str]) -> tuple[list[_Found], list[str]]:
    if len(text) > MAX_SENTENCE_CHARS:
        return [], []
    s = Sentence(_unwrap_speech(text), previous)
    found: dict[str, list[_Extracted]] = {}
    for rule in RULES:
        if rule.yields_to == ANY and found:
            continue
        if any(found.get(name) for name in rule.yields_to):
            continue
        if rule.requires and not any(found.get(name) for name in rule.requires):
            continue
        if not rule.gate.search(s.text):
            continue
        if rule.extract is None:
            return [], []  # a veto: the sentence asserts nothing
        claims = rule.extract(s)
        if claims:
            found[rule.name] = claims
    weak = {rule.name for rule in RULES if rule.weak}
    return [(c, name in weak) for name, claims in found.items() for c in claims], s.targets


def _claims_in(span: Span, previous: list[str]) -> tuple[list[Claim], list[str]]:
    text = span.flat
    extracted, targets = _sentence_claims(text, previous)
    cue = has_correction_cue(text)
    out: list[Claim] = []
    for (subject, predicate, value, replaces), weak in extracted:
        if not subject or not value:
            continue
        replaces = replaces if replaces and replaces != value else None
        out.append(Claim(subject, predicate, value, text, span.start, span.end, cue, replaces,
                         weak))
    return out, targets


def extract_claims(text: str) -> list[Claim]:
    """All claims of a text, in order, de-duplicated on (subject, predicate, value): a weak
    claim is dropped when the text states the same thing outright, never the other way."""
    strong: set[tuple[str, str, str]] = set()
    weak: set[tuple[str, str, str]] = set()
    out: list[Claim] = []
    previous: list[str] = []
    for span in split_sentences(text):
        claims, previous = _claims_in(span, previous)
        for claim in claims:
            key = (claim.subject, claim.predicate, claim.value)
            if key in strong or (claim.weak and key in weak):
                continue
            (weak if claim.weak else strong).add(key)
            out.append(claim)
    return out
