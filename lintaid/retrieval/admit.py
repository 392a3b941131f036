"""What a prompt may be given: the search's hits cut down to those worth their bytes.

The rules, in order:

* **Small talk gets nothing.** A prompt whose words are all greetings, thanks and the like
  ("cool, thanks!", "nice work 🎉") asks nothing of memory.
* **Code only where the prompt names code.** Project files that are code (not prose and not
  decision documents) come in only when the prompt names a path, a symbol or an error text
  the chunk holds (which makes them relevant enough whatever else the prompt says);
  memories and documents always rank before them. Third-party code never reaches the
  search at all (``workspace.thirdparty``).
* **A question is no answer.** A hit must state something that matches the prompt (a
  statement that is not a question holding one of its words): a turn that only asked the
  same thing holds no answer to it.
* **A relevance floor.** Unless the best hit reaches ``floor`` (its BM25 score as a share of
  the most the prompt's words can score in its index, ``Hit.relevance``), nothing is given,
  not even a header; the others must reach ``relative`` of the best, and no more than
  ``per_session`` come from one agent session. A question about the craft rather than the
  project ("In Go, what happens if you write to a nil map?", ``generic_question``) must
  reach the higher ``GENERIC_FLOOR``: a word or two it shares with memory is no answer.
* **Each entry earns its place.** After the first, a hit comes in only when its matching
  statements hold a share (``gain``) of the prompt's weight that the hits before it do not,
  or when it replaced part of another hit: the answer now comes just before the record
  whose statement it retired (``replacements_first``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from lintaid_client import models
from lintaid_client.models import Hit

from .query import STOP_WORDS, parts, words
from .statements import statements

FLOOR: Final = 0.15
"""Calibrated relevance the best hit must reach, chosen with ``benchmarks/floor.py`` and
``benchmarks/histories.py`` on the seven development histories once general questions had
their own floor (``GENERIC_FLOOR``): from 0.18 to 0.15 the general questions given
something stay 7 of 56 and the memory questions answered go from 83 to 87 of 210 (0.12:
87, more entries for nothing). A paraphrased question ("How do notifications reach
iPhones?" of "iOS goes through FCM") shares few words with its answer and scores low."""
RELATIVE: Final = 0.5
"""Every other hit must reach this share of the best hit's relevance."""
GAIN: Final = 0.35
"""...and hold at least this share of the prompt's weight that the hits before it do not: a
second record on the same thing (an older statement of the same fact, the same answer again)
adds bytes and no answer. Chosen on the development histories: from 0.2 to 0.35 the stale
presentations fall from 57 to 50 of 210 probes, answers stay (87) and precision rises from
0.32 to 0.37; above 0.4 the second question of a two-part prompt that ``query.parts`` keeps
whole ("How do deploys work, and which CI do we use?") loses its entry."""
RESTATED_TERMS: Final = 2
"""A newer memory takes an older one's place (``restated``) only when they share at least
this many of the prompt's terms: one word in common ("timeout") is no sign of one answer."""
PER_SESSION: Final = 2
"""At most this many hits from one agent session (a long session must not crowd out others)."""
CODE: Final = "code"  # a workspace hit's ``doc_type`` for source code and configuration

SMALL_TALK: Final = frozenset("""
thanks thank thx ty cheers cool nice great awesome perfect wonderful excellent amazing ok okay
ah oh hmm hm aha ooh yay gotcha understood noted interesting
k kk yes yeah yep yup no nope sure fine hi hello hey bye goodbye congrats congratulations lol
haha hahaha wow good morning evening night afternoon weekend week day today tonight work job
done see later soon have happy enjoy well lot lots much very really appreciate appreciated
please welcome sounds makes sense agreed alright right got it that's thats this tomorrow
monday tuesday wednesday thursday friday saturday sunday holiday holidays vacation cya ttyl
""".split())

_CODE_SPAN: Final = re.compile(r"`([^`\n]{2,200})`")
_PATH: Final = re.compile(r"(?<![\w@])(?:[\w.-]+/)+[\w.-]+|(?<![\w/])[\w-]+\.[a-z][a-z0-9]{0,5}\b")
_SYMBOL: Final = re.compile(
    r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\(?|\b[A-Za-z_]\w*\(\)|\b[a-z]+_[a-z0-9_]+\b"
    r"|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b|\b\w+::\w+")
_ERROR: Final = re.compile(r"\b\w*(?:Error|Exception|Traceback|panic)\b[:\s]*[^\n]{0,120}"
                           r"|\berror\b:?\s*[^\n]{3,120}", re.IGNORECASE)
_URL: Final = re.compile(r"\b[a-z]+://\S+")


GENERIC_FLOOR: Final = 0.35
"""The floor for a general knowledge question (``generic_question``): what the project's memory
holds must match it clearly to be given. Chosen on the seven development histories
(``benchmarks/histories.py``), once such a question was judged whole rather than by its
halves: at 0.30 7 of their 56 general questions were given something, at 0.35 1, with the
same 97 memory questions answered and 40 shown a retired value; at 0.40 also 1, and one
answer fewer ("How do Windows users get tidemark?" reads as general)."""

# The forms a question about the craft takes ("In Go, what is ...", "What's the difference
# ...", "How do I ...", "Is it true that ...", "show me how to ...", "X vs Y"), read at the
# start of the prompt or of any of its clauses (after a lead such as "Kotlin:", "quick
# question:", "unrelated,", or a pasted error: "`ERROR: deadlock detected` — what does it
# mean?").
_GENERIC_SHAPE: Final = re.compile(
    r"(?:^|[:,;\u2013\u2014?]\s+|`\s+|\s-\s)"
    r"(?:(?:please|so|ok(?:ay)?|and)\s+)?"
    r"(?:in\s+[\w#+.-]+(?:\s+[\w#+.-]+)?\s*,\s*)?"
    r"(?:what(?:'s|s)?\s+(?:is|are|does|do|happens|would|should|the\s+diff)\b"
    r"|what(?:'s|s)(?=\s+(?:a|an|the)\b)"
    r"|how\s+(?:does|do|is|are|can|could|should|would|to|i)\b"
    r"|why\s+(?:does|do|is|are|would|can'?t|doesn'?t|won'?t|isn'?t)\b"
    r"|when\s+(?:should|would|are|is|does|do)\b"
    r"|(?:can\s+you\s+)?explain\b|is\s+it\s+(?:true|ok(?:ay)?|safe|bad|possible|worth)\b"
    r"|show\s+me\s+(?:how|a|an)\b|diff(?:erence|rence)?\s+between\b)"
    r"|\s(?:vs\.?|versus)\s", re.IGNORECASE)
# Words that tie a question to this project, its people or its history.
_PROJECT_WORDS: Final = frozenset("""
we we're we've we'd our ours project repo repository codebase here still now currently
anymore again previously before lately recently used team
""".split())
# A question about what happened in it ("did ...", "who pushed for that?", "why was X
# turned off?", "last quarter").
_EVENT: Final = re.compile(
    r"(?:^|[,;:?]\s+)(?:did|was|were|who|whom|whose)\b|\b(?:why|when|what|how)\s+(?:did|was|"
    r"were)\b|\b(?:these\s+days|nowadays|at\s+the\s+moment|right\s+now)\b"
    r"|\blast\s+(?:week|month|quarter|year|sprint|time)\b|\bthis\s+(?:repo|project|"
    r"codebase|service|app)\b", re.IGNORECASE)
# A file or path of the project's, or one of its functions, named outside backticks; a
# file or a make target named in them (`release.yml`, `make test`).
_OWN_CODE: Final = re.compile(r"\b[\w.-]+/[\w./-]+|\b\w+\.(?:py|go|rs|ts|tsx|js|rb|java|kt|"
                              r"swift|dart|toml|ya?ml|json|sql|md|sh)\b|\b[a-z]+_\w+\b|\b\w+\(\)"
                              r"|\b[a-z][a-z0-9]*-(?:svc|api|service|worker|web|app|ui|server|"
                              r"gateway|bot|cli|db|portal)\b")
_OWN_SPAN: Final = re.compile(r"`(?:[\w.-]+\.(?:ya?ml|toml|json|cfg|ini|lock|md)|make\s+[\w-]+|"
                              r"\./[\w./-]+)`")
# "the gateway", "the docs site": a part every project has, referred to as known.
_THE: Final = re.compile(
    r"\bthe\s+(?:[\w-]+\s+){0,2}(?:gateway|api|backend|frontend|cluster|monorepo|pipeline|docs|"
    r"site|staging|prod|production|dashboard|admin|team|repo|release|releases|bucket|"
    r"service|services|app|apps|server|database|db|worker|workers|queue|job|jobs|bot|cli|sdk|"
    r"workflow|handbook|runbook|portal|console|project)\b(?!['\u2019]s\s+own)",
    re.IGNORECASE)


# What a general question may ask about with "the" right after its form: "What's the
# difference", "what is the best way"; any other ("When does the churn model get
# retrained?", "How is the changelog produced?") asks about a thing the project has.
_THE_ASKED: Final = re.compile(r"\s*(?:(?:is|are|does|do|was|were)\s+)?the\s+([\w-]+)",
                               re.IGNORECASE)
_GENERAL_THE: Final = frozenset("""
difference diff diffrence differences same best right point purpose idiomatic usual common correct
proper recommended standard typical easiest fastest simplest cleanest safest preferred
""".split())


def _asks_of_ours(text: str) -> bool:
    """Whether a general question's form is followed by "the" and a thing not general."""
    for m in _GENERIC_SHAPE.finditer(text):
        after = _THE_ASKED.match(text, m.end())
        if after and after.group(1).lower() not in _GENERAL_THE:
            return True
    return False


def generic_question(prompt: str) -> bool:
    """Whether ``prompt`` reads as a question about the craft (a language, a tool, a
    technique) rather than about this project: a general question's form, at its start or
    a clause's ("What is a ...", "How do I ...", "What's the difference between ...", "Is it
    true that ...", "X vs Y"), no word that ties it to the project, its team or its history
    ("we", "our", "still", "before", ...), no question about what happened ("did ...", "who
    ...", "why was ..."), no part a project has referred to as known ("the gateway", "the
    docs site") and no file, path or function of its named (`release.yml`, `make test`).
    Measured on labelled questions (``benchmarks/craft_questions.py``)."""
    text = " ".join(prompt.split())
    if len(text) > SMALL_TALK_CHARS or not _GENERIC_SHAPE.search(text):
        return False
    said = {w.strip(".,!?;:'\"()`") for w in text.lower().split()}
    prose = _CODE_SPAN.sub(" ", text)
    return not (said & _PROJECT_WORDS or _EVENT.search(prose) or _THE.search(prose)
                or _asks_of_ours(prose) or _OWN_CODE.search(prose) or _OWN_SPAN.search(text))


@dataclass(frozen=True)
class Limits:
    floor: float = FLOOR
    relative: float = RELATIVE
    gain: float = GAIN
    per_session: int = PER_SESSION
    count: int = 3


SMALL_TALK_CHARS: Final = 200
"""Small talk is short: a longer prompt is never taken for it."""
NAMED_CODE_CHARS: Final = 4000
"""Where a prompt names code: its start (a pasted file or log is read no further)."""


def small_talk(prompt: str) -> bool:
    """True when no word of ``prompt`` asks for anything (greetings, thanks, praise)."""
    if len(prompt) > SMALL_TALK_CHARS:
        return False
    said = [w.strip(".,!?;:'\"()") for w in words(prompt)]
    said = [w for w in said if any(ch.isalnum() for ch in w)]
    return all(w in SMALL_TALK or w in STOP_WORDS for w in said)


def chit_chat(content: str) -> bool:
    """Whether a captured turn was small talk: its request asks nothing (``small_talk``)."""
    asked = [st.text for st in statements(content) if st.part == "request"]
    return bool(asked) and small_talk(" ".join(asked))


def off_project(content: str) -> bool:
    """Whether a captured turn was about nothing of the project's: small talk, or a
    question about the craft (``generic_question``) in every question its request asked."""
    asked = " ".join(st.text for st in statements(content) if st.part == "request").strip()
    if not asked:
        return False
    return small_talk(asked) or all(generic_question(part) for part in parts(asked))


def named_code(prompt: str) -> list[str]:
    """The paths, symbols and error texts ``prompt`` names (what a code chunk must hold)."""
    text = _URL.sub(" ", prompt[:NAMED_CODE_CHARS])
    found: dict[str, None] = {}
    for m in _CODE_SPAN.finditer(text):
        found[m.group(1).strip()] = None
    for pattern in (_PATH, _SYMBOL):
        for m in pattern.finditer(text):
            found[m.group(0).rstrip("(").strip(".")] = None
    for m in _ERROR.finditer(text):
        found[" ".join(m.group(0).split())[:80]] = None
    return [k for k in found if len(k) >= 3]


def holds_code(hit: Hit, names: Sequence[str]) -> bool:
    """Whether a code chunk holds (or is the file of) one of the named paths, symbols or
    errors."""
    content = hit.content
    path = hit.path or ""
    for name in names:
        if name in content or (("/" in name or "." in name) and path.endswith(name)):
            return True
    return False


def answered(hit: Hit) -> float:
    """The hit's relevance when it states something that matches (a statement that is not a
    question holds a word of the prompt), else 0: a turn that only asked the same thing holds
    no answer to it, while a question and the answer beside it are one memory. 0 without
    passages."""
    return (hit.relevance or 0.0) if _stated(hit) else 0.0


def _stated(hit: Hit) -> dict[str, float]:
    """The prompt's terms the hit's passages state, each with its share of the prompt's
    weight: those held by statements that are not questions, unless the reply comes with the
    hit (a conversation turn shown beside the turn after it)."""
    answered = any(c.position == models.AFTER for c in hit.context)
    questions = set() if answered else {st.start for st in statements(hit.content)
                                        if st.question}
    out: dict[str, float] = {}
    for passage in hit.passages:
        if passage.start not in questions:
            out.update(passage.terms)
    return out


def is_code(hit: Hit) -> bool:
    return hit.store == models.WORKSPACE and hit.doc_type == CODE


def admit(hits: Sequence[Hit], prompt: str, limits: Limits = Limits()) -> list[Hit]:
    """The hits ``prompt`` is given, in the search's order with memories and documents before
    code; none when the best does not reach the floor or the prompt is small talk. ``hits``
    must carry ``relevance`` and ``passages`` (a search with ``passages=True``)."""
    if small_talk(prompt):
        return []
    names = named_code(prompt)
    # A chunk that holds what the prompt names (a path, a symbol, an error) is relevant by
    # that alone: the prompt's other words need not be in it.
    scored = [(h, max(answered(h), limits.floor) if is_code(h) else answered(h))
              for h in hits if h.kind != models.PROMPT
              and (not is_code(h) or (names and holds_code(h, names)))]
    scored = [(h, r) for h, r in scored if r > 0]
    if not scored:
        return []
    best = max(r for _h, r in scored)
    floor = max(limits.floor, GENERIC_FLOOR) if generic_question(prompt) else limits.floor
    if best < floor:
        return []
    # The search's order (each index's own ranking, merged by relevance), code last.
    kept = [h for h, r in scored if r >= limits.relative * best]
    kept.sort(key=is_code)
    kept = replacements_first(kept, [h for h in hits if h.kind != models.PROMPT])
    return spread_sessions(adding(kept, limits.gain), limits.count, limits.per_session)


def replaced_by(hit: Hit) -> list[str]:
    """The records that replaced a claim of ``hit`` whose statement matched the query at
    least as well as anything still standing in the hit (``Hit.retired_matches`` against
    its best passage), in claim order: what the prompt asked about was changed there. A
    change to something else the record also said, or one the query only brushes (a word
    of a long retired sentence), is no answer to it."""
    best = max((p.weight for p in hit.passages), default=0.0)
    asked = {cid for cid, weight in hit.retired_matches.items() if weight >= best}
    found = dict.fromkeys(c.superseded_by for c in hit.claims
                          if c.superseded_by and c.claim_id in asked)
    return [rid for rid in found if rid and rid != hit.id]


def replacements_first(kept: Sequence[Hit], candidates: Sequence[Hit]) -> list[Hit]:
    """``kept`` with each record that replaced part of a kept hit just before it, taken from
    the prompt's other candidates (any the search found, however weakly: the words of a
    change often differ from the question's, "max_conns" for "connections"): an older record that
    still matches on what it said before ranks above the record that changed it (more of
    its words match), and the answer now must come first, not be dropped as saying the
    same thing again."""
    by_id = {h.id: h for h in candidates}
    out: list[Hit] = []
    placed: set[str] = set()
    for hit in kept:
        for rid in replaced_by(hit):
            newer = by_id.get(rid)
            if newer is not None and rid not in placed:
                out.append(newer)
                placed.add(rid)
        if hit.id not in placed:
            out.append(hit)
            placed.add(hit.id)
    return out


def adding(hits: Sequence[Hit], gain: float) -> list[Hit]:
    """The first hit, then each whose stated (not asked) terms hold at least ``gain`` of the
    prompt's weight in terms no hit before it held (``Passage.terms``), or that is the other
    side of a review waiting on a hit before it, or replaced part of another hit: two records disagreeing on one thing are
    two answers, not the same one twice, and the agent must see both."""
    out: list[Hit] = []
    covered: set[str] = set()
    disputed: set[str] = set()
    replacing = {rid for hit in hits for rid in replaced_by(hit)}
    for hit in hits:
        terms = _stated(hit)
        new = sum(w for t, w in terms.items() if t not in covered)
        if (out and new < gain and not disputed.intersection(hit.reviews)
                and hit.id not in replacing):
            older = restated(hit, terms, out, gain, replacing)
            if older is not None:
                out[out.index(older)] = hit
                covered = {t for kept in out for t in _stated(kept)}
                disputed.update(hit.reviews)
            continue
        out.append(hit)
        covered.update(terms)
        disputed.update(hit.reviews)
    return out


def restated(hit: Hit, terms: dict[str, float], kept: Sequence[Hit], gain: float,
             replacing: set[str]) -> Hit | None:
    """The older memory among ``kept`` that ``hit``, a newer memory, says again: every term
    of the prompt it stated (at least ``RESTATED_TERMS`` of them) but for less than ``gain`` of
    the prompt's weight is stated by ``hit`` too. Of two records that answer the prompt in the same terms the newer is the
    one to show: if they agree nothing is lost, and if they do not, the later statement is
    the likelier to hold (the policy may not have related them: the words of a change are
    not always the words of a rule it knows)."""
    if hit.store != models.MEMORY or hit.created_at is None:
        return None
    for older in kept:
        if older.store != models.MEMORY or older.created_at is None \
                or older.created_at >= hit.created_at or older.id in replacing \
                or older.reviews or older.supersedes:
            continue
        said = _stated(older)
        if len(said) >= RESTATED_TERMS and \
                sum(w for t, w in said.items() if t not in terms) < gain:
            return older
    return None


def spread_sessions(hits: Sequence[Hit], limit: int, per_session: int = PER_SESSION) -> list[Hit]:
    """At most ``per_session`` hits from one agent session, so one long session whose every
    turn matches cannot crowd out every other session's memories; order kept."""
    seen: dict[str, int] = {}
    out = []
    for hit in hits:
        session = hit.session_id or hit.id
        if seen.get(session, 0) >= per_session:
            continue
        seen[session] = seen.get(session, 0) + 1
        out.append(hit)
        if len(out) == limit:
            break
    return out


def interleave(lists: Sequence[Sequence[Hit]], limit: int) -> list[Hit]:
    """Each list's first hit, then each one's second, ...: what several questions of one
    prompt were given, each hit once, at most ``limit``."""
    out: list[Hit] = []
    seen: set[str] = set()
    for rank in range(max((len(x) for x in lists), default=0)):
        for found in lists:
            if rank < len(found) and found[rank].id not in seen and len(out) < limit:
                seen.add(found[rank].id)
                out.append(found[rank])
    return out
