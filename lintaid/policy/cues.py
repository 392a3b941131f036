"""Cues: what a statement does with its value, read from its words, not from a template.

A statement *changes* a value ("now", "switched", "raised to", "instead of", "->"),
*reverts* one ("back to", "again", "rolled back", "restored"), *keeps* one ("still",
"unchanged", "stays"), *adds* one beside the others ("also", "added"), *removes* one ("no
longer", "dropped", "removed"), or merely states it (``NONE``). Some statements are not beliefs
at all: a *question*, a *proposal* ("maybe", "we could", "I'd suggest"), a *condition* ("if
we ever ..."), a *plan* ("will", "next week", "TODO") or a *rejection* of a proposal ("no,
stay on River" keeps River; the proposal is not adopted). ``cue`` returns the strongest cue
of a statement; ``old_sides`` finds the values a transition names as the old ones ("from X",
"instead of X", "X ->").

``turn_intent`` reads a turn's request and its result's headline ("perf(db): bigger pool",
"## Runtime bump"): when a turn was asked to change something, a value its result states on
that topic is a change, even if the sentence itself says only the new value.
"""

from __future__ import annotations

import re
from typing import Final

CHANGE: Final = "change"
REVERT: Final = "revert"
KEEP: Final = "keep"
ADD: Final = "add"
REMOVE: Final = "remove"
NONE: Final = "none"
QUESTION: Final = "question"
PROPOSAL: Final = "proposal"
CONDITION: Final = "condition"
PLAN: Final = "plan"
REJECTION: Final = "rejection"

NOT_BELIEFS: Final = frozenset({QUESTION, PROPOSAL, CONDITION, PLAN})
"""Statements with these cues assert nothing about the project's state."""
RETIRING: Final = frozenset({CHANGE, REVERT, REMOVE})

_I = re.IGNORECASE

_REVERT_RX = re.compile(
    r"\b(?:back\s+(?:to|on)|went\s+back|go(?:ing)?\s+back|reverted|reverts?\b|revert\(|"
    r"rolled\s+back|roll(?:ing)?\s+back|rollback|restor(?:e|ed|es|ing)|undid|undone|undo|"
    r"returned\s+to|once\s+more)"
    r"|\bagain\b", _I)
_CHANGE_RX = re.compile(
    r"\b(?:now|changed|changes|changing|switched|switching|switch(?:es)?\s+to|moved|moving|"
    r"migrated|migrating|replaced|replaces|replacing|instead\s+of|rather\s+than|in\s+place\s+of|"
    r"bump(?:ed|s|ing)?|rais(?:ed|es|ing)|lower(?:ed|s|ing)|increas(?:ed|es|ing)|"
    r"decreas(?:ed|es|ing)|reduc(?:ed|es|ing)|cut(?:s|ting)?\s+(?:to|down)|tighten(?:ed|s)?|"
    r"loosen(?:ed|s)?|relax(?:ed|es)?|shorten(?:ed|s)?|extend(?:ed|s)|upgrad(?:ed|es|ing)|"
    r"downgrad(?:ed|es|ing)|updated|renamed|relocated|promoted|adopted|introduced|"
    r"set\s+(?:it\s+|this\s+|that\s+)?to|from\s+now\s+on|going\s+forward|henceforth|"
    r"superseded?|supersedes|new|newly|took\s+over|takes\s+over|handed\s+(?:over|off)|"
    r"transferred|reassigned|(?:is|are)\s+no\s+longer|halved|doubled|tripled|"
    r"(?<!comes\s)(?<!came\s)(?<!boils\s)(?<!boiled\s)down\s+to)\b"
    r"|\u2192|->|=>|\b(?:from)\s+\S+\s+to\b|\(was\s", _I)
_KEEP_RX = re.compile(
    r"\b(?:still|unchanged|stays?|staying|remains?|remained|kept\s+(?:as|at|the)|"
    r"keeps?\s+(?:the\s+|its\s+|their\s+)?(?:old|same|existing|current|previous)\b|"
    r"keeping\s+(?:the\s+)?(?:old|same|existing|current)|left\s+(?:it\s+|as\s+is\s+)?at|"
    r"left\s+as\s+is|as\s+before|nothing\s+changed|no\s+change|not\s+changed|untouched|"
    r"same\s+as\s+before|continues?\s+to|stick(?:ing)?\s+with|stay(?:ing)?\s+on)\b", _I)
_ADD_RX = re.compile(r"^(?:also|plus|added|adding|additionally|and\s+also)\b|\balso\s+(?:added|"
                     r"uses?|runs?|has)\b|\bas\s+well\b|\bin\s+addition\b", _I)
_REMOVE_RX = re.compile(
    r"^(?:no|without|not)\s+[`\w]|\b(?:don'?t|do\s+not|doesn'?t|never)\s+use\b|"
    r"\bnot\s+using\b|\b(?:no\s+longer|dropped|drop(?:ping)?|removed|remov(?:e|ing)|deleted|retired|"
    r"deprecated|disabled|decommissioned|(?:turned|switched|shut)\s+(?:off|down)|got\s+rid\s+of|"
    r"stopped\s+using|away\s+from|moved\s+off|gone)\b", _I)
_QUESTION_RX = re.compile(
    r"\?\s*[\"')\]]*\s*$"
    # a question reported: "Mikko asks how long CloudWatch keeps logs"
    r"|\b(?:asks?|asked|asking|wonders?|wondered|wants?\s+to\s+know)\s+(?:me\s+|us\s+)?"
    r"(?:how|what|which|why|where|when|who|whether|if)\b"
    r"|^(?:so\s+|and\s+|but\s+|ok(?:ay)?,?\s+)?(?:what|which|who|whom|whose|why|how|where|when|"
    r"is|are|was|were|do|does|did|can|could|would|should|shall|will|has|have|any)\b[^.!]*$", _I)
# "When naming attributes, end them with '_at'": a clause of time or place before the main
# one, not a question (no "?", and no auxiliary after the wh-word: "when is ..." asks).
_SUBORDINATE = re.compile(
    r"^(?:when|whenever|where|wherever|while|once)\s+(?!(?:is|are|was|were|do|does|did|can|"
    r"could|would|should|will|shall|has|have|had|must|may|might)\b)[^,?]{1,80},\s*\S", _I)
_PROPOSAL_RX = re.compile(
    r"\b(?:maybe|perhaps|might|could|we\s+could|i\s+could|you\s+could|consider(?:ing)?|"
    r"suggest(?:ion|ed|s)?|i'?d\s+(?:suggest|recommend|propose|go\s+with|tighten|lean)|"
    r"propos(?:e|es|al|als|ed|ing)|what\s+(?:if|about)|how\s+about|option(?:s|ally)?\b|"
    r"thinking\s+(?:about|of|out\s+loud)|idea:|an\s+idea|worth\s+(?:a\s+)?(?:trying|looking)|"
    r"would\s+(?:it|be|you|we)|should\s+we|shall\s+we|wondering|evaluat(?:e|ing)|"
    r"tempted|if\s+we\s+want|could\s+eventually|eventually|someday|some\s+day|nice\s+to\s+have|"
    r"not\s+sure|unsure|tbd|to\s+be\s+decided|let'?s\s+see|experiment(?:ing)?\s+with|"
    r"trying\s+out|try(?:ing)?\s+out|hypothetical(?:ly)?|probably|i\s+guess|my\s+guess)\b", _I)
_CONDITION_RX = re.compile(
    r"^(?:[\w\s,]{0,20}?)\b(?:if|unless|suppose|supposing|imagine|in\s+case|whenever|should\s+"
    r"(?:we|it|they)\s+ever|once\s+we)\b", _I)
_PLAN_RX = re.compile(
    r"\b(?:will|i'?ll|we'?ll|going\s+to|gonna|plan(?:s|ned|ning)?\s+to|plan:|planning|"
    r"next\s+(?:week|month|sprint|quarter|year|time)|later\s+(?:this|next)|tomorrow|todo|"
    r"to\s+do:|follow[- ]up|would\s+like\s+to|want\s+to|intend\s+to|about\s+to|scheduled\s+for|"
    r"in\s+the\s+future|soon|not\s+yet|once\s+(?:\w+\s+){0,4}(?:is|are|lands?|ships?|"
    r"merges?|done|finished))\b", _I)
_REJECTION_RX = re.compile(
    r"^(?:no[,.!]|nope|nah)\b|\b(?:decided\s+against|not\s+(?:going|worth|switching|adopting|"
    r"moving|doing)|won'?t\s+(?:switch|move|adopt|use|do)|rejected|dropp(?:ed|ing)\s+the\s+idea|"
    r"let'?s\s+not|no\s+need\s+(?:to|for)|don'?t\s+(?:switch|move|bother|need))\b", _I)
_PAST_DONE = re.compile(r"\b(?:done|did|was|were|has\s+been|have\s+been|already|finished|"
                        r"completed|shipped|deployed|merged|rolled\s+out)\b", _I)


_CODE_SPAN = re.compile(r"`[^`]*`")
# Markdown emphasis and quoting around a statement ("**If sponsorship happens**", "> no"):
# no cue, and it must not hide one that is read from the statement's start.
_EMPHASIS = re.compile(r"^(?:>\s*)?[*_]{0,3}|[*_]{1,3}(?=[:.!?]?$)")
_IDENTIFIER = re.compile(r"\b[\w-]+(?:[._/:][\w-]+)+\b")


def prose(text: str) -> str:
    """``text`` without code spans and dotted or slashed identifiers, whose words
    ("customer.subscription.updated") are no cue."""
    return _IDENTIFIER.sub(" x ", _CODE_SPAN.sub(" x ", text))


def cue(text: str) -> str:
    """The statement's cue (see the module docstring); the strongest wins: not-a-belief cues
    first, then revert, keep, remove, change, add."""
    t = _EMPHASIS.sub("", " ".join(prose(text).split()))
    if not t:
        return NONE
    if _QUESTION_RX.search(t) and ("?" in t or not _SUBORDINATE.search(t)):
        return QUESTION
    if _REJECTION_RX.search(t):
        return REJECTION
    if _CONDITION_RX.search(t):
        return CONDITION
    if _PROPOSAL_RX.search(t):
        return PROPOSAL
    if _PLAN_RX.search(t) and not _PAST_DONE.search(t):
        return PLAN
    if _REVERT_RX.search(t):
        return REVERT
    if _KEEP_RX.search(t):
        return KEEP
    if _REMOVE_RX.search(t) and not _CHANGE_TO.search(t):
        return REMOVE
    if _CHANGE_RX.search(t):
        return CHANGE
    if _ADD_RX.search(t):
        return ADD
    return NONE


_CHANGE_TO = re.compile(r"\b(?:to|with|for|by)\b|\u2192|->", _I)
# -- the old side of a transition --------------------------------------------------------------
_OLD_BEFORE = re.compile(
    r"(?:\b(?:instead\s+of|rather\s+than|in\s+place\s+of|replacing|replaced|replaces|replace|"
    r"no\s+longer(?:\s+(?:uses?|on|using|at|in|runs?\s+on|goes\s+(?:to|through)))?|"
    r"away\s+from|off\s+of|moved\s+off|got\s+rid\s+of|stopped\s+using|dropped|removed|left|"
    r"retired|deprecated|previously|formerly|used\s+to\s+be|the\s+old)"
    r"|\((?:(?:it|this|that|they)\s+)?(?:was|were)(?:\s+at)?|,\s*not|\bwas\s+previously|"
    r"\bfrom\s+the\s+old)\s+(?:the\s+|our\s+|a\s+)?$", _I)
_FROM_BEFORE = re.compile(r"\b(?:from|switch(?:ed)?\s+from|migrat(?:ed|ing)\s+from|"
                          r"mov(?:ed|ing)\s+from|chang(?:ed|ing)\s+from)\s+(?:the\s+|our\s+)?$",
                          _I)
_TO_AFTER = re.compile(r"^[\s*`)]*(?:to\b|\u2192|->|=>)", _I)
_ARROW_AFTER = re.compile(r"^[\s*`)]*(?:\u2192|->|=>)")
# "X is replaced", "the Opsgenie integration is switched off": up to two words naming what of
# X it is (its integration, key, account) before the verb.
_REPLACED_AFTER = re.compile(r"^[\s`*]*(?:[a-z][\w-]*\s+){0,2}?(?:is|was|were|are|has\s+been|"
                             r"have\s+been|got)\s+(?:now\s+)?(?:replaced|gone|retired|"
                             r"deprecated|dropped|removed|deleted|disabled|decommissioned|"
                             r"(?:switched|turned|shut)\s+(?:off|down))\b", _I)


def is_old_side(text: str, start: int, end: int) -> bool:
    """Whether the value at ``text[start:end]`` is named as the old side of a transition:
    "instead of X", "replaced X", "no longer X", "(was X)", "X, not Y" (Y), "from X to Y" (X),
    "X -> Y" (X), "X was replaced"."""
    before = text[max(0, start - 48):start].replace("**", "").replace("`", "")
    after = text[end:end + 48].replace("**", "")
    if _OLD_BEFORE.search(before) or _ARROW_AFTER.match(after) or _REPLACED_AFTER.match(after):
        return True
    return bool(_FROM_BEFORE.search(before)) and bool(_TO_AFTER.match(after))


# -- a turn's intent -----------------------------------------------------------------------------
_INTENT_RX = re.compile(
    r"\b(?:bump|upgrade|downgrade|switch|move|migrate|replace|change|raise|lower|increase|"
    r"decrease|reduce|cut|loosen|tighten|relax|shorten|extend|lengthen|drop|remove|rename|"
    r"relocate|update|set|make\s+(?:it|them|this|that)|run\s+it|go\s+back|revert|roll\s+back|"
    r"restore|undo|use\s+\S+\s+instead|instead|more\s+often|less\s+often|faster|slower|"
    r"bigger|smaller|higher|lower|longer|shorter|fewer|double|halve|hand\s+(?:over|off)|"
    r"take\s+over|takes\s+over|transfer|reassign|consolidat\w*|adopt|now\s+(?:on|in|at|uses?|"
    r"runs?|lands?|goes|sync)|from\s+next|from\s+now|is\s+moving|are\s+moving|moved)\w*\b", _I)
_HEADLINE_RX = re.compile(
    r"^(?:feat|fix|chore|perf|refactor|revert|build|ci|ops|deps|config)(?:\([^)]*\))?!?:\s*"
    r"(?P<rest>.+)$", _I)


def turn_intent(request: str, headline: str = "") -> bool:
    """Whether a turn set out to change something (its request, or its result's headline)."""
    if request and _INTENT_RX.search(request):
        return True
    head = headline.strip().lstrip("#").strip()
    m = _HEADLINE_RX.match(head)
    if m:
        return bool(_INTENT_RX.search(m.group("rest")) or _CHANGE_RX.search(m.group("rest"))
                    or _REVERT_RX.search(m.group("rest")) or head.lower().startswith(
                        ("perf", "fix", "revert", "chore(deps)")))
    return bool(head and (_CHANGE_RX.search(head) or _REVERT_RX.search(head)))


__all__ = ["ADD", "CHANGE", "CONDITION", "KEEP", "NONE", "NOT_BELIEFS", "PLAN", "PROPOSAL",
           "QUESTION", "REJECTION", "REMOVE", "RETIRING", "REVERT", "cue", "is_old_side",
           "turn_intent"]
