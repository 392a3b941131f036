"""A record's claims: its statements' values, each with a topic and a cue.

For every belief statement (``lintaid.policy.statements``) that asserts something (no
question, proposal, condition or plan, neither its own cue nor its lead-in's), each value
(``lintaid.policy.values``) that is not the old side of a transition becomes a claim: its
topic is the words around it (its fragment of a list-like statement, the statement's key
before a ":", the value's own name: "python" of "Python 3.11", the setting of
``DB_POOL_SIZE=40``) with the statement's context at half weight; the values the statement
names as old ("instead of 3.10", "from Jenkins") are what the claim ``replaces``. A
statement that only removes something ("no longer uses Redis") yields a claim with no value
that replaces it.

The rule table (``lintaid.policy.claims``) still reads every sentence: where a rule finds a
claim its subject and value are sharper than the general reading (naming conventions,
ownership, "X uses Y for Z"), so the statement's claims come from the rule, and the general
reading adds only values the rule did not cover.

A capture's request is context: a request statement is a belief only when the result
confirms its value (the value is in the result, and not as an old side). Otherwise its
values are *context* claims (``relations.CONTEXT``): never a decision, never retiring,
confirming or disputing anything, but retired by a later belief on their topic, so that a
request quoting a value the project has since changed is never shown as if it held. The turn's intent (``cues.turn_intent``) counts as a change cue for the
result's statements that state no cue of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from . import cues, topics
from .claims import Claim, extract_claims
from .kinds import kind_of
from .relations import CONTEXT, INTENT, REMOVED, SEP
from .statements import Statement, headline, record_statements, request_text
from .values import (
    CODE,
    HANDLE,
    NAME,
    NUMBER,
    PATH,
    VERSION,
    Value,
    compatible,
    find_values,
    same_value,
)
from .vocabulary import COMMON_WORDS, ENGLISH_TOOL_NAMES, is_tool_word

MAX_CLAIMS_PER_STATEMENT: Final = 8
MAX_SUBJECT_WORDS: Final = 6

# Types a rule's predicate stands for, when its value has no typed form of its own.
_RULE_TYPES: Final = {"implementation": NAME, "owner": NAME, "status": "status",
                      "convention": "convention", "version": "version"}
_FRAGMENT_SPLIT = re.compile(r",\s+(?![^(]*\))|\s+\band\b\s+(?=[\w`@]+\s*(?:[:=]|\d|v\d))|"
                             r"\s+/\s+|\s+\u00b7\s+")
_KEY_PREFIX = re.compile(r"^([^:=`]{1,60}?)\s*:\s+\S")
# Where a statement puts a value even without a typed form: "switched to poetry",
# "back to goose", "replace goose with Atlas", "goose is the migration tool".
_VALUE_POSITION = re.compile(
    r"\b(?P<kw>to|with|onto|on|via|through|by|uses?|using|use|chose|picked|adopted|prefer|"
    r"instead\s+of|rather\s+than|replac(?:e|ed|ing)|from|back\s+to)\s+(?:the\s+|our\s+|a\s+)?"
    r"(?P<v>[A-Za-z][\w.+-]{1,30})", re.IGNORECASE)
_PREPOSITIONS = frozenset({"to", "with", "onto", "on", "via", "through", "by", "from"})
_LEADING_TOOL = re.compile(r"^([a-z][\w.+-]{1,30})\s+(?:is|are|was|stays|remains|handles|runs|"
                           r"does|owns|manages|now)\b")


@dataclass(frozen=True)
class Turn:
    """What a record says about the turn it closes (captures only)."""

    request: str
    headline: str
    intent: bool


def record_claims_of(text: str, kind: str) -> list[Claim]:
    """Every claim of a record's text, in order (see the module docstring)."""
    belief, request = record_statements(text, kind)
    req = request_text(text, kind)
    turn = Turn(req, headline(text, kind), cues.turn_intent(req, headline(text, kind))) \
        if req else None
    rules = _rule_claims(text, belief)
    out: list[Claim] = []
    taken: set[tuple[str, str]] = set()
    result_values: list[Value] = []
    weighed: list[tuple[int, int]] = []
    asked: list[Claim] = []
    result_text = " ".join(st.text for st in belief)
    for st in belief:
        claims = _statement_claims(st, text, rules.get((st.start, st.end), []), turn)
        if st.background:
            # A decision record's context tells what was: never a decision, retired by one.
            asked.extend(replace(c, cue=False, cue_kind=CONTEXT) for c in claims
                         if c.value != REMOVED)
            continue
        for c in claims:
            key = (c.value, topics.encode(dict(c.topic)))
            if key in taken:
                continue
            taken.add(key)
            out.append(c)
        if not _asserts(st):
            # "Possible, but I'm not sure: one ALB per service = 3+ ALBs" confirms nothing
            # the request proposed
            weighed.append((st.start, st.end))
            continue
        said = text[st.start:st.end]
        found = _values(said)
        result_values.extend(v for v in found if v not in _old_sides(said, found))
    for st in request:
        for c in _statement_claims(st, text, [], None):
            if c.value == REMOVED:
                continue
            if c.predicate == PATH or st.background or _TROUBLE.search(st.text) \
                    or not _confirmed(
                    c, result_values, text, st.code and _applied(result_text), weighed):
                # A file a request names is what to work on ("Read README.md and confirm"),
                # never a decision, even when the result names it too.
                asked.append(replace(c, cue=False, cue_kind=CONTEXT))
                continue
            if any(o.value == c.value and topics.similarity(dict(o.topic), dict(c.topic)) > 0.3
                   for o in out):
                continue
            asked.append(c)
    # What was asked comes before what was done: in a record's order a result's statement is
    # the later one, so it may retire what its own request said.
    return [c for c in asked + out if not _work_report(c) and _says_something(c.value)]


# A request that reports trouble ("The Android emulator can't reach my local backend on
# localhost:8080", "`make test-integration` fails on my mac") says what went wrong, not
# what was decided, whatever its result repeats of it.
_TROUBLE = re.compile(
    r"\b(?:can'?t|cannot|couldn'?t|doesn'?t|don'?t|won'?t|isn'?t|aren'?t)\s+(?:\w+\s+)?(?:reach|"
    r"connect|find|load|start|build|run|work|see|open|compile|resolve|deploy|install|boot|"
    r"log\s*in|sign\s*in)\b|\b(?:fails?|failing|failed|broken|crash(?:es|ed|ing)?|"
    r"times?\s+out|timing\s+out|timed\s+out|hangs?|stuck|flaky|incompatible|not\s+compatible|"
    r"not\s+working)\b|\b(?:get(?:ting)?|got|throws?|threw|see(?:ing)?)\s+(?:an?\s+|this\s+|"
    r"the\s+)?(?:error|exception)\b|\berror:", re.IGNORECASE)


def _own_cue(st: Statement) -> str:
    """A statement's cue: its words', or for a code line its block's."""
    return cues.cue(st.text) if not st.code else st.context_cue


def _asserts(st: Statement, own: str | None = None) -> bool:
    """Whether a statement says what is (no question, proposal, condition or plan, neither
    its own cue, ``own`` when known, nor its lead-in's or heading's)."""
    own = _own_cue(st) if own is None else own
    return own not in cues.NOT_BELIEFS and st.context_cue not in cues.NOT_BELIEFS


def _says_something(value: str) -> bool:
    """A value with a letter or digit in it, or a removal: ``{`` of ``KEY = {"a": 1}`` is
    punctuation cut out of code, and a supersession drawn to it retires a real value."""
    return value == REMOVED or any(ch.isalnum() for ch in value)


_WORK_VERBS: Final = frozenset(
    """added created wired configured updated implemented wrote rewrote fixed refactored
    edited modified extended introduced registered hooked documented tested covered cleaned
    extracted split renamed tidied adjusted tweaked reworked restructured simplified
    generated scaffolded bootstrapped initialised initialized exposed""".split())


def _work_report(claim: Claim) -> bool:
    """"Added workers/consumer.py", "Updated gateway/cache.py for pymemcache": a statement
    with no subject but a verb of editing, about the files or identifiers it touched. That
    is a turn's work (its outcome shows it), not a belief about anything: two of them are
    not two values of one thing, and neither is a decision."""
    first = claim.evidence.split(maxsplit=1)[0].lower() if claim.evidence.strip() else ""
    if first not in _WORK_VERBS:
        return False
    return claim.predicate in (PATH, CODE) or (claim.cue_kind == cues.ADD
                                               and " " not in claim.subject)


def _confirmed(claim: Claim, result_values: list[Value], text: str, applied: bool,
               weighed: Sequence[tuple[int, int]]) -> bool:
    """A request's value that the result states too (``result_values``, or written in the
    result outside its statements that assert nothing, ``weighed``: a proposal weighed, a
    question), not as the old side of a change; or a setting the request pasted (a diff, a
    config line) that the result says it applied."""
    if applied:
        return True
    if any(v.norm == claim.value for v in result_values):
        return True
    needle = claim.value.lower()
    hay = text.lower()
    result = hay.find("result:")
    if len(needle) < 3 or result < 0:
        return False
    at = hay.find(needle, result)
    while at >= 0:
        if not any(s <= at < e for s, e in weighed) \
                and not cues.is_old_side(text, at, at + len(needle)):
            return True
        at = hay.find(needle, at + 1)
    return False


_APPLIED = re.compile(r"\b(?:applied|done|merged|deployed|rolled\s+out|shipped|committed|"
                      r"pushed|lgtm|looks\s+good|in\s+place|live\s+now|is\s+live|went\s+out)\b",
                      re.IGNORECASE)


def _applied(result: str) -> bool:
    """The result says it applied what the request pasted."""
    return bool(_APPLIED.search(result))


def _rule_claims(text: str, belief: list[Statement]) -> dict[tuple[int, int], list[Claim]]:
    """The rule table's claims, by the belief statement whose span holds them."""
    out: dict[tuple[int, int], list[Claim]] = {}
    if not belief:
        return out
    for claim in extract_claims(text):
        if claim.weak:
            continue
        for st in belief:
            if st.start <= claim.start < st.end or claim.start <= st.start < claim.end:
                out.setdefault((st.start, st.end), []).append(claim)
                break
    return out


def _statement_claims(st: Statement, text: str, rules: list[Claim],
                      turn: Turn | None) -> list[Claim]:
    own = _own_cue(st)
    if not _asserts(st, own) and not (st.request and own == cues.PLAN):
        return []
    if own == cues.NONE and st.context_cue in cues.RETIRING:
        own = st.context_cue
    if own == cues.NONE and turn is not None and turn.intent and not st.request:
        own = INTENT
    raw = text[st.start:st.end]
    values = _values(raw)
    old = _old_sides(raw, values)
    if st.old:  # a diff's "-" line said what this "+" line replaces
        old = old + [Value(0, 0, st.old, v.norm, v.type, v.name) for v in find_values(st.old)
                     if v.type != NAME] or old
    new = [v for v in values if v not in old]
    new = _drop_owners_and_keys(raw, new)
    new = _drop_aliases(new)
    context = topics.weigh(topics.words(st.context), topics.CONTEXT_WEIGHT)
    request = topics.weigh(topics.words(turn.request), topics.REQUEST_WEIGHT) \
        if turn is not None and not st.request else {}
    key = _KEY_PREFIX.match(raw)
    lead = topics.weigh(topics.words(key.group(1)), topics.LEAD_WEIGHT) if key else {}
    if key is not None:
        # "Service 17 timeout seconds: 30": what stands before the ":" names the thing
        in_key = [v for v in new if v.end <= key.end(1)]
        lead = topics.merge(lead, {f"#{v.norm}": topics.LEAD_WEIGHT for v in in_key})
        new = [v for v in new if v not in in_key] or new
    out: list[Claim] = []
    rule_values: set[str] = set()
    for rc in rules:
        vtype = _rule_type(rc)
        topic = topics.merge(topics.weigh(topics.words(rc.subject), 1.0), lead, context,
                             _kind_term(rc.value, vtype))
        out.append(_claim(st, rc.subject, vtype if rc.predicate in _RULE_TYPES else rc.predicate,
                          rc.value, topic, own, _old_norms(old, rc.replaces)))
        rule_values.add(rc.value)
    fragments = _fragments(raw)
    for v in new:
        if v.norm in rule_values or any(same_value(v, o) for o in old if o.type == v.type):
            continue
        frag = next(((a, b) for a, b in fragments if a <= v.start < b), (0, len(raw)))
        spans = [(x.start, x.end) for x in values]
        near = topics.near_terms(_masked(raw, spans), v.start, v.end, frag)
        named = _named_before(raw, values, v)
        topic = topics.merge(near, topics.weigh(topics.name_terms(v.name), 1.0), lead, context,
                             request, _kind_term(v.norm, v.type),
                             topics.weigh(topics.words(named), topics.LEAD_WEIGHT))
        olds = [o.norm for o in old if compatible(o.type, v.type)]
        # A generic word said right beside the value names it too: "Deploys go to Fly.io",
        # "builds run on Blacksmith" (such a word only weighs less in similarity).
        said_near = any(t in topics.GENERIC and w >= topics.GENERIC_WEIGHT
                        for t, w in near.items())
        if not olds and not said_near and not any(w >= topics.LEAD_WEIGHT
                                                  for w in topic.values()):
            continue  # nothing of its own says what it is about, and it names nothing old
        local = raw[frag[0]:frag[1]]
        cue = _value_cue(raw, frag, own)
        subject = _subject(_masked(local, [(a - frag[0], b - frag[0])
                                           for a, b in spans if frag[0] <= a < frag[1]]), v)
        out.append(_claim(st, subject or named, v.type, v.norm, topic, cue, olds))
        if len(out) >= MAX_CLAIMS_PER_STATEMENT:
            break
    if len(out) > 1:
        every = [c.value for c in out]
        out = [replace(c, peers=SEP.join(dict.fromkeys(x for x in every if x != c.value)))
               for c in out]
    if not out and old and own in cues.RETIRING:
        topic = topics.merge(topics.weigh(topics.words(_masked(raw, [(x.start, x.end)
                                                                      for x in values])), 1.0),
                             lead, context)
        out.append(_claim(st, _subject(raw, old[0]), old[0].type, REMOVED, topic, cues.REMOVE,
                          [o.norm for o in old]))
    return out


# "`TRANSFORM_WH` is X-Small again", "`LOG_LEVEL` = debug", "`max_conns` → 40": what stands
# between a setting's name and its value.
_COPULA = re.compile(r"^[\s`'\"*]*(?:is|are|was|were|=|:|\u2192|->|stays|remains)"
                     r"(?:\s+(?:now|again|still|back\s+to|set\s+to))?[\s`'\"*]*$", re.IGNORECASE)
_IDENTIFIER_NAME = re.compile(r"[a-z][a-z0-9]*(?:[_.][a-z0-9]+)+")


def _named_before(raw: str, values: list[Value], v: Value) -> str:
    """The setting a value is given to when the statement names it as a value of its own
    right before it ("`TRANSFORM_WH` is X-Small again": nothing else says what X-Small is
    of), written as an identifier (``snake_case``, ``dotted.name``); else ""."""
    before = [u for u in values if u.end <= v.start and u.type in (CODE, NAME)]
    if not before:
        return ""
    u = before[-1]
    if _IDENTIFIER_NAME.fullmatch(u.norm) and _COPULA.match(raw[u.end:v.start]):
        return u.norm
    return ""


def _kind_term(value: str, vtype: str) -> topics.Topic:
    """A named tool's kind (``lintaid.policy.kinds``) as a topic term: two choices of one kind
    of tool are about one slot, however their statements name it."""
    if vtype not in (NAME, CODE):
        return {}
    kind = kind_of(value)
    return {"kind:" + kind: 1.0} if kind else {}


def _value_cue(raw: str, frag: tuple[int, int], statement_cue: str) -> str:
    """A value's cue: its own fragment's ("and still Python 3.11" keeps 3.11 even where the
    statement changes something else), else the statement's, unless the statement's is a
    local one (keep, add) that another fragment said."""
    local = cues.cue(raw[frag[0]:frag[1]])
    if local not in (cues.NONE,) and local not in cues.NOT_BELIEFS:
        return local
    if statement_cue in (cues.KEEP, cues.ADD) and (frag[1] - frag[0]) < len(raw):
        rest = cues.cue(raw[:frag[0]] + " " + raw[frag[1]:])
        return cues.NONE if rest == statement_cue else statement_cue
    return statement_cue


_LIST_GAP = re.compile(r"^[\s,`*]*(?:,|\band\b|\bor\b|&|\+|/)[\s,`*]*$", re.IGNORECASE)


def _old_sides(raw: str, values: list[Value]) -> list[Value]:
    """The values named as old: each one a transition names, and the ones listed right after
    it ("removed `apnsSender` and `sideshow/apns2`")."""
    old: list[Value] = []
    for i, v in enumerate(values):
        if cues.is_old_side(raw, v.start, v.end):
            old.append(v)
        elif old and values[i - 1] is old[-1] and _LIST_GAP.match(raw[old[-1].end:v.start]) \
                and not re.search(r"\b(?:to|with|by|for)\s*$", raw[:v.start], re.IGNORECASE):
            old.append(v)
    return old


def _values(raw: str) -> list[Value]:
    found = find_values(raw)
    taken = [(v.start, v.end) for v in found]
    for m in list(_VALUE_POSITION.finditer(raw)) + list(_LEADING_TOOL.finditer(raw)):
        group = "v" if "v" in m.re.groupindex else 1
        s = m.start(group)
        word = m.group(group).rstrip(".")
        e = s + len(word)
        if any(a < e and s < b for a, b in taken):
            continue
        if not is_tool_word(word) or word.lower() in ("to", "the"):
            continue
        if word.lower() in COMMON_WORDS and not _transition_near(raw, s):
            continue
        if (word.lower() in ENGLISH_TOOL_NAMES and word[0].islower()
                and "kw" in m.re.groupindex and m.group("kw").lower() in _PREPOSITIONS
                and not _transition_near(raw, s)):
            continue  # "camping by the river": a preposition's lowercase English word
        found.append(Value(s, e, word, word.lower(), NAME))
        taken.append((s, e))
    found.sort(key=lambda v: v.start)
    return found


def _transition_near(raw: str, at: int) -> bool:
    return re.search(r"\b(?:instead|replac|switch|migrat|back\s+to|moved|from|again|"
                     r"rather)\w*", raw, re.IGNORECASE) is not None


def _drop_owners_and_keys(raw: str, values: list[Value]) -> list[Value]:
    """Names a version belongs to ("Python" of "Python 3.11"), keys before ":" or "="
    (``CODEOWNERS:``), and paths beside a sharper value are topic, not values."""
    owners = {v.name for v in values if v.name}
    out = []
    sharper = any(v.type not in (PATH, CODE, NAME) for v in values)
    for v in values:
        if v.type in (NAME, CODE) and v.norm in owners:
            continue
        after = raw[v.end:v.end + 3]
        if v.type in (NAME, CODE, PATH) and re.match(r"\s*[:=](?!//)", after) and \
                len(values) > 1:
            continue
        if v.type == PATH and sharper and any(x.type == HANDLE for x in values):
            continue
        out.append(v)
    return out


def _drop_aliases(values: list[Value]) -> list[Value]:
    """One value said twice ("5% (0.05)", "40 (DB_POOL_SIZE=40)"): the first, with the
    second's name."""
    out: list[Value] = []
    for v in values:
        twin = next((o for o in out if same_value(o, v) and compatible(o.type, v.type)), None)
        if twin is None:
            out.append(v)
        elif v.name and not twin.name:
            out[out.index(twin)] = Value(twin.start, twin.end, twin.raw, twin.norm, twin.type,
                                         v.name)
    return out


def _fragments(raw: str) -> list[tuple[int, int]]:
    """Comma- or "and"-separated parts of a list-like statement, after its key prefix."""
    cuts = [0]
    for m in _FRAGMENT_SPLIT.finditer(raw):
        if raw[:m.start()].count("`") % 2 == 0:
            cuts.extend((m.start(), m.end()))
    cuts.append(len(raw))
    return [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]


def _masked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for s, e in spans:
        for i in range(max(0, s), min(len(chars), e)):
            chars[i] = " "
    return "".join(chars)


def _subject(local: str, v: Value) -> str:
    """A short label for what the claim is about: the fragment's words without its values."""
    text = " ".join(local.replace("`", " ").replace("*", " ").split())
    words = [w.strip(":,;()[]{}.!?\"'") for w in text.split()]
    words = [w for w in words if re.search(r"[A-Za-z]", w) and w.lower() not in topics.STOPWORDS
             and w.lower() not in topics.CUE_WORDS and w.lower() != v.raw.lower()]
    label = " ".join(words[:MAX_SUBJECT_WORDS]).lower()
    if v.name and v.name not in label:
        label = (v.name.replace("_", " ") + " " + label).strip()
    return label[:80]


def _rule_type(rc: Claim) -> str:
    typed = find_values(rc.value)
    if len(typed) == 1 and typed[0].end - typed[0].start >= len(rc.value.strip()) - 1:
        if typed[0].type == NUMBER and rc.predicate == VERSION:
            return VERSION  # "3.11" alone reads as a number; the rule read a version
        return typed[0].type
    return _RULE_TYPES.get(rc.predicate, rc.predicate)


def _old_norms(old: list[Value], replaces: str | None) -> list[str]:
    out = [o.norm for o in old]
    if replaces:
        out.append(replaces)
    return out


def _claim(st: Statement, subject: str, vtype: str, value: str, topic: topics.Topic, cue: str,
           replaces: list[str]) -> Claim:
    rep = SEP.join(dict.fromkeys(r for r in replaces if r and r != value)) or None
    return Claim(subject=subject, predicate=vtype, value=value, evidence=st.text,
                 start=st.start, end=st.end, cue=cue in cues.RETIRING or cue == INTENT,
                 replaces=rep,
                 topic=tuple(sorted(topic.items())), cue_kind=cue)


__all__ = ["Turn", "record_claims_of"]
