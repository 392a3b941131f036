"""What a record says about a person: where they work and live, their name, their manager,
what they build with, and what they left.

The claim patterns (``claims.py``) read coding decisions; a memory about a *person* ("User
works at Acme", "User moved from Delhi to Mumbai") yields no claim there, so staleness reads
these small assertions instead. Each is (subject, attribute, value, leaves): "User left Acme"
is ``("user", "*", "acme", True)``, and ``relation`` says how a later assertion bears on an
earlier one: it confirms it (the same thing said again), contradicts it (the subject left that
value, or took another one of a single-valued attribute), or neither.

Pure functions of the text, read sentence by sentence; a sentence whose subject is not a person
("The service works at scale") says nothing here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .sentences import split_sentences

EMPLOYER = "employer"
HOME = "home"
NAME = "name"
MANAGER = "manager"
TOOL = "tool"
ANY = "*"
"""A leaving that does not say what was left ("User left Acme": a job or a town)."""

SINGLE_VALUED = frozenset({EMPLOYER, HOME, NAME, MANAGER})
"""One value at a time: a newer, different value contradicts the older."""


@dataclass(frozen=True)
class Assertion:
    subject: str
    attribute: str
    value: str
    leaves: bool = False


CONFIRMS = "confirms"
CONTRADICTS = "contradicts"


def relation(older: Assertion, newer: Assertion) -> str | None:
    """How ``newer`` (said later) bears on ``older``: CONFIRMS, CONTRADICTS or None."""
    if older.subject != newer.subject:
        return None
    same_attribute = older.attribute == newer.attribute
    either_any = ANY in (older.attribute, newer.attribute)
    if older.value == newer.value and (same_attribute or either_any):
        return CONFIRMS if older.leaves == newer.leaves else CONTRADICTS
    if (same_attribute and not older.leaves and not newer.leaves
            and older.attribute in SINGLE_VALUED):
        return CONTRADICTS
    return None


# ---------------------------------------------------------------------------------------------
# Reading them

# (attribute, leaves, the words right before the value). Leavings come first: "no longer works
# at" must not read as "works at".
_I = re.IGNORECASE
_PATTERNS: list[tuple[str, bool, re.Pattern[str]]] = [
    (EMPLOYER, True, re.compile(
        r"\b(?:quit|resigned\s+from|departed\s+from|was\s+(?:fired|laid\s+off)\s+(?:from|by)|"
        r"(?:no\s+longer|doesn'?t|does\s+not|stopped)\s+work(?:s|ing)?\s+(?:at|for)|"
        r"used\s+to\s+work\s+(?:at|for)|formerly\s+(?:worked\s+)?(?:at|with))\s+", _I)),
    (HOME, True, re.compile(
        r"\b(?:(?:moved|relocated|moving|relocating)\s+(?:away\s+)?(?:from|out\s+of)|"
        r"(?:no\s+longer|doesn'?t|does\s+not)\s+lives?\s+in|used\s+to\s+live\s+in)\s+", _I)),
    (MANAGER, True, re.compile(r"\bno\s+longer\s+reports?\s+to\s+", _I)),
    (TOOL, True, re.compile(
        r"\b(?:migrated\s+(?:away\s+)?from|switched\s+(?:away\s+)?from|dropped|abandoned|"
        r"stopped\s+using|no\s+longer\s+uses?|(?:is|are)\s+no\s+longer\s+using)\s+", _I)),
    (ANY, True, re.compile(r"\b(?:left|is\s+no\s+longer\s+(?:at|with))\s+", _I)),
    (EMPLOYER, False, re.compile(
        r"\b(?:works?|working|is\s+employed|employed)\s+(?:at|for|by)\s+|\bjoined\s+|"
        r"\b(?:is|am|as)\s+an?\s+(?:[\w-]+\s+){0,3}?(?:engineer|developer|consultant|analyst|"
        r"manager|designer|scientist|intern|researcher|architect|director|cto|ceo|founder)"
        r"\s+(?:at|for|with)\s+", _I)),
    (HOME, False, re.compile(
        r"\b(?:lives?|living|resides?|residing|(?:is\s+)?based|(?:is\s+)?located)\s+in\s+|"
        r"\b(?:moved|relocated|moving|relocating)\s+to\s+", _I)),
    (NAME, False, re.compile(
        r"\bname\s+is\s+|\b(?:is|am)\s+called\s+|\bgoes\s+by\s+|\bcall\s+me\s+", _I)),
    (MANAGER, False, re.compile(
        r"\b(?:manager|boss|supervisor)\s+is\s+|\breports?\s+to\s+", _I)),
    (TOOL, False, re.compile(
        r"\b(?:is|are|am)\s+(?:building|developing)\s+with\s+|\b(?:is|are|am)\s+using\s+", _I)),
]
# What may stand before the verb: a person, possibly with auxiliaries and adverbs.
_SUBJECT = re.compile(
    r"^(?:(?:the\s+)?user|i|me|my|we|our(?:\s+team)?|(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))"
    r"(?:'s|s')?$", _I)
_FILLER_TAIL = re.compile(
    r"(?:\s+(?:has|have|had|is|was|are|am|just|recently|also|now|then|finally|officially|"
    r"eventually|since|will|would|has\s+since|already|currently|still))+$", _I)
_LEAD = re.compile(r"^(?:[-*+]\s+|\d+[.)]\s+)?(?:[A-Za-z][\w-]{0,20}:\s+)?")
_VALUE_WORD = re.compile(r"[A-Za-z0-9][\w&'.-]*")
_STOP = frozenset(
    "a an the as and since because where but in on for until from to last this next today "
    "yesterday now anymore any recently ago with after before when while who which that so "
    "or at by of these those nowadays currently remotely full-time part-time".split()
)
_DROP = frozenset({"a", "an", "the", "my", "our", "his", "her", "their"})
_SUFFIXES = frozenset({"corp", "corporation", "inc", "ltd", "llc", "gmbh", "co", "plc",
                       "limited", "company"})
_PERSONS = frozenset({"the user", "user", "i", "me", "my"})
MAX_VALUE_WORDS = 4


def _subject(prefix: str) -> str | None:
    text = _LEAD.sub("", prefix.strip(), count=1)
    text = _FILLER_TAIL.sub("", text).strip(" ,")
    if not _SUBJECT.match(text):
        return None
    text = re.sub(r"(?:'s|s')$", "", text).lower()
    if text in _PERSONS:
        return "user"
    if text in ("we", "our", "our team"):
        return "we"
    return text


def _value(rest: str) -> tuple[str, str]:
    """The value's words (lowercased, corporate suffixes dropped) and what follows them."""
    words: list[str] = []
    pos = 0
    while len(words) < MAX_VALUE_WORDS:
        m = _VALUE_WORD.match(rest, pos)
        if m is None:
            break
        word = m.group(0).rstrip(".'").lower()
        if word in _STOP and (words or word not in _DROP):
            break
        if word not in _DROP:
            words.append(word)
        pos = m.end()
        gap = re.match(r"[ \t]+", rest[pos:])
        if gap is None:
            break
        pos += gap.end()
    while words and words[-1] in _SUFFIXES and len(words) > 1:
        words.pop()
    return " ".join(words), rest[pos:]


_THEN_TO = re.compile(r"^to\s+", _I)


def assertions(text: str) -> list[Assertion]:
    """Every assertion of ``text``, in order, without repeats."""
    out: dict[Assertion, None] = {}
    for span in split_sentences(text):
        sentence = span.text
        if sentence.rstrip(" \"'\u201d)").endswith("?"):
            continue  # a question asserts nothing
        taken: list[tuple[int, int]] = []
        for attribute, leaves, rx in _PATTERNS:
            for m in rx.finditer(sentence):
                if any(s <= m.start() < e for s, e in taken):
                    continue
                subject = _subject(sentence[: m.start()])
                if subject is None:
                    continue
                value, after = _value(sentence[m.end():])
                if not value:
                    continue
                taken.append((m.start(), m.end()))
                moved = attribute == HOME and leaves
                out[Assertion(subject, attribute, value, leaves)] = None
                then = _THEN_TO.match(after)
                if moved and then:  # "moved from Delhi to Mumbai"
                    new, _ = _value(after[then.end():])
                    if new:
                        out[Assertion(subject, HOME, new, False)] = None
                break
    return list(out)


__all__ = ["ANY", "CONFIRMS", "CONTRADICTS", "EMPLOYER", "HOME", "MANAGER", "NAME",
           "SINGLE_VALUED", "TOOL", "Assertion", "assertions", "relation"]
