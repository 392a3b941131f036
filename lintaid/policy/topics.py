"""Topics: what a statement is about, as weighted terms, and how close two topics are.

A statement's topic is its content words once its values, cue words and filler are taken out:
"Rolled the image builder back to Kaniko" is about {image, build}; "Switched image builds to
buildx" too. Words are lowercased and stemmed (builder, builds -> build), identifiers are
split (``max_conns`` -> max, conn), and a few spellings of one software notion share a term
("TTL", "expiry", "lifetime"; "throttle", "rate limit"). Words from a statement's context (its
heading, its lead-in, a commit's scope) weigh half; generic words ("setting", "value",
"service") weigh little.

``similarity`` is the cosine of the two weighted term vectors, in [0, 1]. It is a pure function
of the two topics, so the relation between two statements never depends on what else the
store holds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

Topic = dict[str, float]

CONTEXT_WEIGHT: Final = 0.5
LEAD_WEIGHT: Final = 0.8
REQUEST_WEIGHT: Final = 0.2
"""Words of the turn's request, for a result's claims: what the turn was about."""
NEAR_WORDS: Final = 3
"""Words this close to a value (in its fragment) weigh fully; farther ones less."""
NEAR_WEIGHT: Final = 0.6
"""Terms at least this heavy were said near the value (or name it: a key, a lead-in)."""
GENERIC_WEIGHT: Final = 0.25

STOPWORDS: Final = frozenset(
    """a an the and or but nor so yet of to in on at by for with from into onto over under
    about above below after before between through during without within via per than then
    as if when while because since until unless though although whether which who whom whose
    what where why how that this these those there here it its it's itself they them their
    we us our you your i me my he him his she her is are was were be been being am do does
    did done doing has have had having will would shall should can could may might must
    also just only even still already now again back once more most less least very too
    quite really all any both each every few many much some such no not nor none other
    another own same one two three first last next new old up down out off yes ok okay
    please thanks thank hi hello hey sure great good nice cool let lets let's get got gets
    go goes going gone went make makes made take took use uses used using set sets put keep
    keeps kept stay stays say says said see seen look looks like want wants need needs
    there's that's what's it'll we'll we're they're i'm i've we've don't doesn't didn't won't
    isn't aren't wasn't weren't can't cannot couldn't shouldn't wouldn't""".split())

CUE_WORDS: Final = frozenset(
    """now instead rather replace replaced replaces replacing switch switched switching move
    moved moving migrate migrated migrating change changed changes changing bump bumped raise
    raised lower lowered increase increased decrease decreased reduce reduced cut tighten
    tightened loosen loosened relax relaxed shorten shortened extend extended upgrade upgraded
    downgrade downgraded update updated rename renamed revert reverted rolled roll rollback
    restore restored undo undid undone return returned previously formerly longer dropped drop
    removed remove retired deprecated unchanged remain remains remained still again
    from to anymore going forward henceforth adopted introduced""".split())

GENERIC: Final = frozenset(
    """setting settings value values config configuration option options default defaults
    parameter param params thing things stuff item items part parts way ways kind type types
    service services system systems project app application tool tools feature features
    change changes version versions number numbers amount level levels mode modes name names
    file files line lines step steps time times job jobs task tasks issue issues
    case cases point detail details note notes idea plan status state current latest main user
    general basic simple standard normal proper right correct actual real
    start bring come follow run pick handle show give call read write send take open
    close check try mean help add fix need want allow support provid includ contain creat
    build deploy enabl disabl configur appl updat""".split())

# Spellings of one notion (after stemming): mapped to one term.
SYNONYMS: Final = {
    "throttle": "ratelimit", "throttl": "ratelimit", "ratelimit": "ratelimit",
    "ttl": "ttl", "expiry": "ttl", "expir": "ttl", "expire": "ttl", "expiration": "ttl",
    "lifetime": "ttl",
    "owner": "owner", "own": "owner", "ownership": "owner", "maintainer": "owner",
    "maintain": "owner", "codeowner": "owner", "responsible": "owner",
    "host": "host", "hosting": "host",
    "db": "database", "database": "database",
    "repository": "repo", "repo": "repo",
    "configur": "config", "config": "config",
    "environment": "env", "env": "env",
    "k8s": "kubernetes", "kube": "kubernetes",
    "dep": "dependency", "dependency": "dependency", "dependenci": "dependency",
    "authentication": "auth", "authn": "auth",
    "maximum": "max", "ceiling": "max", "cap": "max", "upper": "max",
    "minimum": "min", "floor": "min",
    "deadline": "timeout",
    "retrie": "retry", "retri": "retry",
    "connection": "conn", "connect": "conn",
    "cron": "schedule", "cadence": "schedule", "frequency": "schedule",
    "cutoff": "threshold",
    "doc": "doc", "documentation": "doc",
    "builder": "build", "buildx": "buildx",
    "img": "image", "pic": "image", "photo": "image", "picture": "image",
    "perf": "performance",
    "msg": "message",
    "instance": "instance", "vm": "instance", "machine": "instance",
    "stored": "storage", "storing": "storage",
    "log": "log", "logging": "log", "logger": "log",
    "test": "test", "testing": "test",
    "port": "port", "listen": "port",
}
# Words that tell two otherwise alike things apart: "max conns" is not "min conns", the access
# token's TTL is not the refresh token's. Two topics holding different members of one group,
# and not the other's, are about different things.
CONTRASTS: Final = tuple(frozenset(g.split()) for g in (
    "min max", "read write", "access refresh", "stag prod dev test local qa sandbox preview",
    "ios android web desktop", "input output", "upload download", "request respons",
    "inbound outbound ingress egress", "primary replica secondary standby", "soft hard",
    "warn error crit", "p50 p75 p90 p95 p99", "daily weekly monthly hourly nightly yearly",
    "frontend backend", "public privat internal", "major minor patch", "start end",
    "before after", "free paid pro enterprise", "anonymous authenticat", "user admin",
    "mobile web", "arm64 amd64 x86", "linux macos windows darwin freebsd",
    "sync async", "cpu memory", "unit integration e2e"))

_BIGRAMS: Final = {("rate", "limit"): "ratelimit", ("rate", "limiting"): "ratelimit",
                   ("rate", "limiter"): "ratelimit", ("cut", "off"): "threshold",
                   ("code", "owners"): "owner", ("time", "out"): "timeout"}

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['\u2019][a-z]+)?|\d+[A-Za-z]+[A-Za-z0-9]*")
_IDENT_SPLIT = re.compile(r"[_./:\-]+|(?<=[a-z0-9])(?=[A-Z])")


_KEEP_WHOLE: Final = frozenset(
    """atlas redis postgres kubernetes jenkins status analysis basis alias canvas bus gas
    https news series species axis chaos thesis mysql nginx express""".split())


def stem(word: str) -> str:
    """A light English stem: builds, building, built-in "build"; tracing, traces, trace ->
    "trac" (a final e goes too, so the verb and the noun meet)."""
    w = word.lower()
    if len(w) <= 3 or w in _KEEP_WHOLE or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    base = w
    verb = False
    if w.endswith("ing") and len(w) - 3 >= 3:
        base, verb = w[:-3], True
    elif w.endswith("ed") and len(w) - 2 >= 3:
        base, verb = w[:-2], True
    elif w.endswith(("ches", "shes", "sses", "xes", "zes")):
        base = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is", "as", "os")):
        base = w[:-1]
    if verb and len(base) > 2 and base[-1] == base[-2] and base[-1] not in "sl":
        base = base[:-1]  # running -> run, stopped -> stop
    if base.endswith("e") and len(base) > 3:
        base = base[:-1]
    return base


def _norm_term(word: str) -> str:
    s = stem(word)
    return SYNONYMS.get(s, SYNONYMS.get(word.lower(), s))


# A synonym's target is a term too: the word itself ("schedule", "image") must come out as
# it, or "cron" and "the nightly schedule" never meet ("schedule" against "schedul").
SYNONYMS.update({stem(target): target for target in set(SYNONYMS.values())
                 if _norm_term(target) != target})


def words(text: str) -> list[str]:
    """The words of ``text`` as terms (identifiers split, stems, synonyms), in order, with
    stopwords and cue words left out."""
    raw: list[str] = []
    for token in re.findall(r"[A-Za-z0-9][\w./:@-]*[A-Za-z0-9]|[A-Za-z0-9]", text):
        parts = [p for p in _IDENT_SPLIT.split(token) if p]
        if len(parts) > 1:
            raw.extend(parts)
        else:
            raw.append(token)
    out: list[str] = []
    lowered = [w.lower() for w in raw]
    i = 0
    while i < len(lowered):
        w = lowered[i]
        if i + 1 < len(lowered) and (w, lowered[i + 1]) in _BIGRAMS:
            out.append(_BIGRAMS[(w, lowered[i + 1])])
            i += 2
            continue
        i += 1
        if not w or w in STOPWORDS or w in CUE_WORDS or w.isdigit() or len(w) < 2:
            continue
        if re.fullmatch(r"v?\d[\d.]*[a-z]?", w):
            continue
        out.append(_norm_term(w))
    return out


_CONTENT = re.compile(r"[A-Za-z0-9][\w./:@-]*[A-Za-z0-9]|[A-Za-z0-9]")


def near_terms(text: str, start: int, end: int, fragment: tuple[int, int]) -> Topic:
    """The topic of the value at ``text[start:end]``: the words of its fragment, weighing
    fully within NEAR_WORDS of it and less with distance; words outside the fragment (the
    rest of the statement) at a fifth."""
    tokens = [(m.start(), words(m.group(0))) for m in _CONTENT.finditer(text)]
    before = [t for t in tokens if t[0] < start and fragment[0] <= t[0]]
    after = [t for t in tokens if t[0] >= end and t[0] < fragment[1]]
    out: Topic = {}

    def put(terms: list[str], weight: float) -> None:
        for term in terms:
            w = weight * (GENERIC_WEIGHT if term in GENERIC else 1.0)
            if w > out.get(term, 0.0):
                out[term] = w

    for distance, (_pos, terms) in enumerate(reversed([t for t in before if t[1]])):
        put(terms, 1.0 if distance < NEAR_WORDS else 0.6 if distance < 2 * NEAR_WORDS else 0.3)
    for distance, (_pos, terms) in enumerate([t for t in after if t[1]]):
        put(terms, 1.0 if distance < NEAR_WORDS else 0.6 if distance < 2 * NEAR_WORDS else 0.3)
    for pos, terms in tokens:
        if not fragment[0] <= pos < fragment[1]:
            put(terms, 0.2)
    return out


def name_terms(name: str) -> list[str]:
    """What a value is of ("go" of "go 1.22", ``db_pool_size``): terms even when they are
    short or common words, since they name the thing."""
    if not name:
        return []
    parts = [p.lower() for p in _IDENT_SPLIT.split(name) if p and not p.isdigit()]
    out = [_norm_term(p) for p in parts if p not in ("v", "the", "a")]
    whole = name.lower().strip("/")
    if len(parts) > 1 and whole:
        out.append(whole)
    return out


def weigh(terms: Iterable[str], base: float) -> Topic:
    out: Topic = {}
    for t in terms:
        w = base * (GENERIC_WEIGHT if t in GENERIC else 1.0)
        if w > out.get(t, 0.0):
            out[t] = w
    return out


def merge(*topics: Mapping[str, float]) -> Topic:
    out: Topic = {}
    for topic in topics:
        for t, w in topic.items():
            if w > out.get(t, 0.0):
                out[t] = w
    return out


def similarity(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Cosine of the two weighted term vectors: light words (context, far away) count
    little, shared heavy ones a lot."""
    if not a or not b:
        return 0.0
    if len(b) < len(a):
        a, b = b, a
    dot = sum(w * b[t] for t, w in a.items() if t in b)
    if dot == 0.0:
        return 0.0
    return dot / (_norm(a) * _norm(b))


def _norm(topic: Mapping[str, float]) -> float:
    return math.sqrt(sum(w * w for w in topic.values()))


@dataclass(frozen=True)
class Shape:
    """A stored topic read once: its terms, its strong terms and its length, so relating a
    claim with many others does not read its topic again for each."""

    terms: Mapping[str, float]
    strong: frozenset[str]
    norm: float
    groups: tuple[tuple[int, frozenset[str]], ...]
    ids: frozenset[str]
    """Identity terms (``#17`` of "Service 17 timeout: 30"): two topics naming different
    ones are about different things."""
    near: Mapping[str, float]
    """The terms said near the value (weight at least NEAR_WEIGHT): what a plain number or
    name is about, without the rest of its sentence."""
    near_norm: float


@lru_cache(maxsize=65536)
def shape(topic: tuple[tuple[str, float], ...]) -> Shape:
    terms = dict(topic)
    strong = frozenset(t for t, w in topic if w >= LEAD_WEIGHT)
    groups = tuple((i, strong & g) for i, g in enumerate(CONTRASTS) if strong & g)
    ids = frozenset(t for t in terms if t.startswith("#"))
    near = {t: w for t, w in topic if w >= NEAR_WEIGHT}
    return Shape(terms, strong, _norm(terms), groups, ids, near, _norm(near))


def _cosine(a: Mapping[str, float], norm_a: float, b: Mapping[str, float], norm_b: float) -> float:
    if not a or not b:
        return 0.0
    x, y = (a, b) if len(a) <= len(b) else (b, a)
    dot = sum(w * y[t] for t, w in x.items() if t in y)
    return dot / (norm_a * norm_b) if dot else 0.0


def near_similarity(a: Shape, b: Shape) -> float:
    """``similarity`` of the terms said near each value only."""
    return _cosine(a.near, a.near_norm, b.near, b.near_norm)


def shaped_similarity(a: Shape, b: Shape) -> float:
    return _cosine(a.terms, a.norm, b.terms, b.norm)


def shaped_contrasting(a: Shape, b: Shape) -> bool:
    if a.ids and b.ids and not a.ids & b.ids:
        return True
    if not a.groups or not b.groups:
        return False
    mine = dict(a.groups)
    return any(i in mine and not mine[i] & members for i, members in b.groups)


def shaped_strong_overlap(a: Shape, b: Shape) -> bool:
    return any(t in b.terms for t in a.strong) or any(t in a.terms for t in b.strong)


def contrasting(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    """Whether the topics name different members of one contrast group (``CONTRASTS``) with
    full weight: "max conns" and "min conns", "staging URL" and "prod URL"."""
    strong_a = {t for t, w in a.items() if w >= LEAD_WEIGHT}
    strong_b = {t for t, w in b.items() if w >= LEAD_WEIGHT}
    for group in CONTRASTS:
        ga, gb = strong_a & group, strong_b & group
        if ga and gb and not ga & gb:
            return True
    return False


def strong_overlap(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    """Whether the two topics share a term that weighs fully on at least one side."""
    return any(t in b and max(w, b[t]) >= LEAD_WEIGHT for t, w in a.items())


def encode(topic: Mapping[str, float]) -> str:
    """A topic as stored: ``term:weight`` pairs, heaviest first."""
    return " ".join(f"{t}:{w:.2f}" for t, w in sorted(topic.items(), key=lambda x: (-x[1], x[0])))


def decode(text: str) -> Topic:
    out: Topic = {}
    for pair in (text or "").split():
        term, _, weight = pair.rpartition(":")
        try:
            out[term] = float(weight)
        except ValueError:
            continue
    return out


__all__ = ["CONTEXT_WEIGHT", "GENERIC_WEIGHT", "LEAD_WEIGHT", "Topic", "decode", "encode",
           "contrasting", "merge", "name_terms", "near_terms", "similarity", "stem", "strong_overlap", "weigh", "words"]
