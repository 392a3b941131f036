"""Staleness: how likely a remembered fact is out of date, scored as memlint documents it.

Every fact has a category with a decay rate per day (identity 0.0005 ... episodic 0.05). Its
score is ``age_days * rate``, less 0.08 per confirmation (at most 0.40), times 1.3 when an
agent inferred it, plus 0.40 when a newer fact contradicts it, kept within 0-1. Age counts from
the last confirmation. The score gives the level and the action: fresh (< 0.30, use), aging
(< 0.60, verify), stale (< 0.80, flag), expired (discard: not injected unless reconfirmed).

Where this differs from memlint, on purpose:
- a contradiction counts against the *older* fact only (memlint penalises both sides, so
  "User left Acme" was marked as stale as "User works at Acme"), and a contradicted fact is at
  least stale: a newer statement says it is no longer true, so it is flagged whatever its age;
- a confirmation is counted whenever a later record states the same thing again (the same
  claim on a chain, the same assertion about a person, or the same words), not only when
  someone confirms by hand; ``confirm`` adds one explicitly;
- a later statement about the same thing decides: "works at Acme", "left Acme", "works at
  Acme" again leaves the first one confirmed, not contradicted;
- facts that cannot change by nature (a name, a date of birth, a native language) have their
  own category, ``permanent``, whose default rate is 0: a two-year-old name stays fresh, where
  memlint's identity rate would call it aging after 600 days.

Pure code: the daemon feeds it stored rows (``lintaid.store_lint``), the file audit feeds it an
export (``lintaid.lint``); both read the same rules here.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from lintaid.capture.record import content_fingerprint
from lintaid_client import models
from lintaid_client.models import ACTIONS, AGING, EXPIRED_LEVEL, FRESH, STALE, Staleness

from . import assertions as facts
from .assertions import Assertion
from .inputs import RecordInput, record_claims
from .memory_store import MemoryPolicyStore
from .relations import CONFIRMS, CONFLICTS_WITH, SUPERSEDES, Relation

# -- categories and their decay --------------------------------------------------------------
PERMANENT: Final = "permanent"
IDENTITY: Final = "identity"
LOCATION: Final = "location"
EMPLOYMENT: Final = "employment"
RELATIONSHIP: Final = "relationship"
PREFERENCE: Final = "preference"
PROJECT: Final = "project"
SYSTEM_FACT: Final = "system_fact"
EPISODIC: Final = "episodic"
UNKNOWN: Final = "unknown"

DEFAULT_RATES: Final[Mapping[str, float]] = {
    PERMANENT: 0.0,
    IDENTITY: 0.0005,
    LOCATION: 0.0020,
    EMPLOYMENT: 0.0025,
    RELATIONSHIP: 0.0025,
    PREFERENCE: 0.0030,
    PROJECT: 0.0060,
    SYSTEM_FACT: 0.0100,
    EPISODIC: 0.0500,
    UNKNOWN: 0.0030,
}
"""Score per day of age; memlint's, plus ``permanent``."""
CATEGORIES: Final = tuple(DEFAULT_RATES)

THRESHOLDS: Final = ((AGING, 0.30), (STALE, 0.60), (EXPIRED_LEVEL, 0.80))
CONFIRMATION_STEP: Final = 0.08
CONFIRMATION_CAP: Final = 0.40
CONTRADICTION_PENALTY: Final = 0.40
INFERRED_SOURCE: Final = "agent_inferred"
INFERRED_FACTOR: Final = 1.3
DAY: Final = 86400.0


class ConfigError(ValueError):
    """A staleness setting that cannot be used; the message names where and what."""


@dataclass(frozen=True)
class StalenessConfig:
    """Decay rates per category, the contradiction penalty, and whether injection may show
    expired records."""

    rates: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_RATES))
    contradiction_penalty: float = CONTRADICTION_PENALTY
    inject_expired: bool = False

    def rate(self, category: str) -> float:
        return self.rates.get(category, DEFAULT_RATES.get(category, DEFAULT_RATES[UNKNOWN]))


def _fraction(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            float(value)) or not 0.0 <= float(value) <= 1.0:
        raise ConfigError(f"{where}: must be a number from 0 to 1, not {value!r}")
    return float(value)


def checked_rates(rates: Mapping[str, Any], where: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, value in rates.items():
        if name not in DEFAULT_RATES:
            raise ConfigError(f"{where}.{name}: unknown category (known: "
                              f"{', '.join(CATEGORIES)})")
        out[name] = _fraction(value, f"{where}.{name}")
    return out


def parse_rates(text: str, where: str) -> dict[str, float]:
    """``"project=0.004, system_fact=0.02"`` as rates."""
    pairs: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or math.isnan(number):
            raise ConfigError(f"{where}: {part!r} is not CATEGORY=RATE")
        pairs[name.strip()] = number
    return checked_rates(pairs, where)


def config_from(data: Mapping[str, Any], where: str,
                base: StalenessConfig | None = None) -> StalenessConfig:
    """A config from a parsed settings table: ``rates`` (a table of category = rate),
    ``contradiction_penalty``, ``inject_expired``; unknown keys are refused."""
    base = base or StalenessConfig()
    known = {"rates", "contradiction_penalty", "inject_expired"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s) {', '.join(unknown)} "
                          f"(known: {', '.join(sorted(known))})")
    rates = dict(base.rates)
    if "rates" in data:
        if not isinstance(data["rates"], Mapping):
            raise ConfigError(f"{where}: rates must be a table of category = rate")
        rates.update(checked_rates(data["rates"], f"{where}: rates"))
    penalty = base.contradiction_penalty
    if "contradiction_penalty" in data:
        penalty = _fraction(data["contradiction_penalty"], f"{where}: contradiction_penalty")
    inject = base.inject_expired
    if "inject_expired" in data:
        if not isinstance(data["inject_expired"], bool):
            raise ConfigError(f"{where}: inject_expired must be true or false")
        inject = data["inject_expired"]
    return StalenessConfig(rates, penalty, inject)


# -- classification --------------------------------------------------------------------------
_BY_ATTRIBUTE: Final = {facts.EMPLOYER: EMPLOYMENT, facts.HOME: LOCATION, facts.NAME: PERMANENT,
                        facts.MANAGER: RELATIONSHIP, facts.TOOL: PROJECT, facts.ANY: EMPLOYMENT}
_BY_PREDICATE: Final = {"version": SYSTEM_FACT, "owner": RELATIONSHIP, "convention": PREFERENCE}
_EPISODE_KINDS: Final = frozenset({"capture", "prompt"})
"""Turn records: what happened in a session. Episodic unless they state a decision (a claim)."""


def _words(*patterns: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(patterns) + r")\b", re.IGNORECASE)


_VERSION = r"v?\d+(?:\.\d+)+|v\d+"
_TOOLS = (r"python|node(?:\.?js)?|npm|pnpm|yarn|pip|poetry|uv|java|jdk|golang|go|rust|rustc|"
          r"cargo|ruby|php|dotnet|gcc|clang|docker|kubernetes|k8s|postgres(?:ql)?|mysql|redis|"
          r"django|flask|fastapi|react|vue|angular|typescript|eslint|ruff|mypy|pytest|"
          r"terraform|ubuntu|debian|macos|windows|linux|sqlite|tantivy|numpy|pandas")
# (category, weight, pattern): a category's score is the sum of the weights of its patterns
# that occur; the best wins, ties in the order listed.
_TEXT_RULES: Final[list[tuple[str, int, re.Pattern[str]]]] = [
    (PERMANENT, 3, _words(r"born\s+(?:on|in)", r"birthday", r"date\s+of\s+birth",
                          r"native\s+language", r"mother\s+tongue", r"first\s+language")),
    (IDENTITY, 2, _words(r"speaks", r"nationality", r"years\s+old", r"pronouns", r"gender",
                         r"graduated", r"alumn(?:us|a|i)", r"degree", r"education", r"citizen")),
    (LOCATION, 2, _words(r"lives?\s+in", r"based\s+in", r"located\s+in", r"hometown",
                         r"address", r"relocat\w*", r"moved\s+(?:to|from)", r"resid\w+",
                         r"office\s+in", r"time\s*zone")),
    (EMPLOYMENT, 2, _words(r"works?\s+(?:at|for)", r"employ\w*", r"job", r"role", r"position",
                           r"company", r"hired", r"joined", r"job\s+title", r"consultant",
                           r"intern(?:ship)?", r"promot\w+", r"resigned", r"quit", r"salary",
                           r"career")),
    (RELATIONSHIP, 2, _words(r"friend", r"colleague", r"manager", r"reports\s+to", r"partner",
                             r"teammates?", r"mentor", r"collaborator", r"family", r"wife",
                             r"husband", r"sister", r"brother", r"mother", r"father",
                             r"daughter", r"son", r"team\s+has", r"owns", r"owner")),
    (SYSTEM_FACT, 3, re.compile(rf"\b(?:{_TOOLS})\b[\s:=@v-]*(?:{_VERSION})\b|"
                                rf"\b(?:pin(?:s|ned)?)\b[^.\n]*?\b(?:{_VERSION})\b",
                                re.IGNORECASE)),
    (SYSTEM_FACT, 1, _words(r"version", r"versions", r"pin(?:s|ned)?", r"upgrad\w+",
                            r"downgrad\w+", r"installed", r"dependenc(?:y|ies)", r"toolchain",
                            r"runtime", r"interpreter", r"operating\s+system", r"environment",
                            r"lockfile", r"requirements\.txt", r"package\.json", r"pyproject",
                            r"cpu", r"ram", r"disk")),
    (PREFERENCE, 1, _words(r"prefer\w*", r"likes?", r"favou?rite", r"enjoys?", r"dislikes?",
                           r"hates?", r"theme", r"dark\s+mode", r"light\s+mode", r"style",
                           r"conventions?", r"naming", r"snake_case", r"camel\s*case",
                           r"pascal\s*case", r"kebab-case", r"indent\w*", r"tabs", r"always",
                           r"never", r"format(?:ting|ter)")),
    (PROJECT, 1, _words(r"project", r"building", r"repo(?:sitory)?", r"codebase", r"app",
                        r"working\s+on", r"developing", r"implement\w*", r"stack",
                        r"framework", r"library", r"api", r"endpoints?", r"deploy\w*",
                        r"launched", r"decided", r"decisions?", r"architecture",
                        r"migrat\w+", r"we\s+use", r"using", r"services?", r"database",
                        r"modules?", r"features?", r"roadmap", r"milestone", r"release")),
    (EPISODIC, 2, _words(r"today", r"yesterday", r"last\s+(?:week|night|month)",
                         r"this\s+(?:morning|afternoon|evening|week)", r"tonight", r"just",
                         r"recently", r"earlier", r"debugg\w+", r"fixed", r"resolved",
                         r"discussed", r"asked\s+about", r"mentioned", r"said\s+that",
                         r"tried")),
]
_TIE_ORDER: Final = (PERMANENT, IDENTITY, LOCATION, EMPLOYMENT, RELATIONSHIP, SYSTEM_FACT,
                     PREFERENCE, PROJECT, EPISODIC)


def _predicate_kind(predicate: str) -> str:
    return predicate.split(":", 1)[0]


def _predicate_category(predicate: str) -> str:
    return _BY_PREDICATE.get(_predicate_kind(predicate), PROJECT)


def _majority(categories: Sequence[str], rates: StalenessConfig | None = None) -> str:
    """The most frequent; on a tie the faster-decaying (it goes out of date first)."""
    config = rates or StalenessConfig()
    counts: dict[str, int] = {}
    for c in categories:
        counts[c] = counts.get(c, 0) + 1
    return max(counts, key=lambda c: (counts[c], config.rate(c), -_TIE_ORDER.index(c)
                                      if c in _TIE_ORDER else 0))


def text_category(text: str) -> str | None:
    """The category the words suggest, or None when nothing matches."""
    scores: dict[str, int] = {}
    for category, weight, rx in _TEXT_RULES:
        if rx.search(text):
            scores[category] = scores.get(category, 0) + weight
    if not scores:
        return None
    return max(scores, key=lambda c: (scores[c], -_TIE_ORDER.index(c)))


def classify(text: str, kind: str = "note", predicates: Sequence[str] = (),
             stated: Sequence[Assertion] | None = None) -> str:
    """The category of a record: from what it asserts about a person, else from its claims'
    predicates (versions are system facts, conventions preferences, owners relationships,
    the rest project decisions), else episodic for a turn record, else from its words."""
    stated = facts.assertions(text) if stated is None else stated
    personal = [_BY_ATTRIBUTE[a.attribute] for a in stated if a.attribute in _BY_ATTRIBUTE]
    if personal:
        return _majority(personal)
    if predicates:
        # A value alone (a name, a number) says nothing of how long it holds: "User debugged
        # a LangGraph memory issue today" is an episode, whatever it names.
        if not any(_predicate_kind(p) in _BY_PREDICATE for p in predicates) \
                and text_category(text) == EPISODIC:
            return EPISODIC
        return _majority([_predicate_category(p) for p in predicates])
    if kind in _EPISODE_KINDS:
        return EPISODIC
    return text_category(text) or UNKNOWN


TEXT: Final = "text"
"""The assertion every record makes: its own words (restating them confirms it)."""


_WORD = re.compile(r"\w+")


def record_assertions(text: str) -> list[Assertion]:
    """What staleness reads from a record: its assertions, and its words (case and
    punctuation aside) as one more."""
    words = " ".join(_WORD.findall(text.lower()))
    return [*facts.assertions(text), Assertion("", TEXT, content_fingerprint(words)[:32])]


# -- evidence: confirmations and contradictions -----------------------------------------------
@dataclass(frozen=True)
class Evidence:
    """What other records (and people) say about a fact: when it was confirmed (each record
    or explicit confirmation once) and the newest record contradicting it, if any."""

    confirmed_at: Mapping[str, float] = field(default_factory=dict)
    contradicted_by: str | None = None
    contradicted_at: float | None = None

    def as_of(self, now: float) -> Evidence:
        """What was known at ``now``: later confirmations and contradictions left out."""
        confirmed = {k: t for k, t in self.confirmed_at.items() if t <= now}
        if self.contradicted_at is not None and self.contradicted_at > now:
            return Evidence(confirmed)
        return Evidence(confirmed, self.contradicted_by, self.contradicted_at)

    def merged(self, other: Evidence) -> Evidence:
        confirmed = dict(self.confirmed_at)
        for key, at in other.confirmed_at.items():
            confirmed[key] = max(at, confirmed.get(key, at))
        mine, theirs = self.contradicted_at, other.contradicted_at
        if theirs is not None and (mine is None or theirs > mine):
            return Evidence(confirmed, other.contradicted_by, theirs)
        return Evidence(confirmed, self.contradicted_by, mine)


Stated = tuple[str, float, Assertion]
"""(record id, when it was stated, the assertion)."""


class Statements:
    """Assertions of many records, in time order, found by what they may bear on: the same
    subject and value (confirmations, leavings), or the same subject and single-valued
    attribute (a newer, different value). Looking up what came after a time is a bisection,
    so judging every record costs about what the confirmations found do, not the square of
    how often something was said."""

    def __init__(self, stated: Iterable[Stated]) -> None:
        by_value: dict[tuple[str, str], list[Stated]] = {}
        by_attribute: dict[tuple[str, str], list[Stated]] = {}
        for item in stated:
            a = item[2]
            by_value.setdefault((a.subject, a.value), []).append(item)
            if a.attribute in facts.SINGLE_VALUED and not a.leaves:
                by_attribute.setdefault((a.subject, a.attribute), []).append(item)
        self.by_value = {k: _timed(v) for k, v in by_value.items()}
        self.by_attribute = {k: _timed(v) for k, v in by_attribute.items()}

    def after(self, a: Assertion, at: float, until: float | None = None) -> Iterator[Stated]:
        """Statements later than ``at`` (and not after ``until``) that may bear on ``a``:
        every one with its value, and of those giving its attribute another value, the
        latest."""
        def window(times: Sequence[float]) -> slice:
            end = len(times) if until is None else bisect.bisect_right(times, until)
            return slice(bisect.bisect_right(times, at), end)

        times, items = self.by_value.get((a.subject, a.value), ((), ()))
        yield from items[window(times)]
        if a.attribute in facts.SINGLE_VALUED and not a.leaves:
            times, items = self.by_attribute.get((a.subject, a.attribute), ((), ()))
            for item in reversed(items[window(times)]):
                if item[2].value != a.value:
                    yield item
                    break


def _timed(items: list[Stated]) -> tuple[list[float], list[Stated]]:
    items.sort(key=lambda item: (item[1], item[0]))
    return [item[1] for item in items], items


def weigh(record_id: str, at: float, own: Sequence[Assertion], others: Statements,
          until: float | None = None) -> Evidence:
    """Evidence from assertions: a later record saying the same confirms; for each of this
    record's assertions the latest later record bearing on it decides whether it stands
    contradicted. Statements after ``until`` are not known yet."""
    confirmed: dict[str, float] = {}
    contradiction: tuple[float, str] | None = None
    for mine in own:
        latest: tuple[float, str, str] | None = None
        for rid, when, theirs in others.after(mine, at, until):
            if rid == record_id:
                continue
            kind = facts.relation(mine, theirs)
            if kind is None:
                continue
            if kind == facts.CONFIRMS:
                confirmed[rid] = max(when, confirmed.get(rid, when))
            if latest is None or (when, rid, kind) > latest:
                latest = (when, rid, kind)
        if latest is not None and latest[2] == facts.CONTRADICTS:
            if contradiction is None or latest[0] > contradiction[0]:
                contradiction = (latest[0], latest[1])
    if contradiction is None:
        return Evidence(confirmed)
    return Evidence(confirmed, contradiction[1], contradiction[0])


def confirmation_closure(record_id: str, into_record: Mapping[str, Sequence[Relation]],
                         into_claim: Mapping[str, Sequence[Relation]]) -> list[Relation]:
    """The claim relations aimed at a record, and every ``confirms`` relation aimed at a claim
    confirming it, and so on: "x, x, x" on a chain confirms the first through the second."""
    out = list(into_record.get(record_id, ()))
    todo = [r.source_claim for r in out if r.kind == CONFIRMS]
    seen = set(todo)
    while todo:
        for rel in into_claim.get(todo.pop(), ()):
            if rel.kind != CONFIRMS:
                continue
            out.append(rel)
            if rel.source_claim not in seen:
                seen.add(rel.source_claim)
                todo.append(rel.source_claim)
    return out


def relation_evidence(record_id: str, closure: Iterable[Relation], at: Mapping[str, float],
                      retired: Collection[str] = (), until: float | None = None) -> Evidence:
    """Evidence from the policy engine's claim relations (``confirmation_closure``): each
    other record confirming, at its time ``at[record]`` (records absent from ``at`` no longer
    count); and the newest record superseding or conflicting with one of this record's claims
    that is not ``retired`` (a retired claim is already left out wherever it is shown).
    Records after ``until`` are not known yet."""
    confirmed: dict[str, float] = {}
    contradiction: tuple[float, str] | None = None
    for rel in closure:
        source = rel.source_record
        if source == record_id or source not in at or (until is not None
                                                       and at[source] > until):
            continue
        if rel.kind == CONFIRMS:
            confirmed[source] = at[source]
        elif (rel.kind in (SUPERSEDES, CONFLICTS_WITH) and rel.target_record == record_id
                and rel.target_claim not in retired):
            if contradiction is None or (at[source], source) > contradiction:
                contradiction = (at[source], source)
    if contradiction is None:
        return Evidence(confirmed)
    return Evidence(confirmed, contradiction[1], contradiction[0])


# -- a fact, judged ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Fact:
    """One fact to judge: a stored record or an entry of a memory export.

    ``confirmation_count`` and ``last_confirmed_at`` are confirmations known beside the
    evidence (an export's fields); ``source`` "agent_inferred" decays 1.3 times as fast.
    """

    id: str
    content: str
    created_at: float
    category: str
    source: str | None = None
    confirmation_count: int = 0
    last_confirmed_at: float | None = None


def _score(days: int, rate: float, confirmations: int, inferred: bool, contradicted: bool,
           penalty: float) -> float:
    score = days * rate - min(confirmations * CONFIRMATION_STEP, CONFIRMATION_CAP)
    if inferred:
        score *= INFERRED_FACTOR
    if contradicted:
        score = max(score + penalty, dict(THRESHOLDS)[STALE])
    return round(min(max(score, 0.0), 1.0), 6)


def level_of(score: float) -> str:
    level = FRESH
    for name, threshold in THRESHOLDS:
        if score >= threshold:
            level = name
    return level


def judge(fact: Fact, evidence: Evidence, now: float,
          config: StalenessConfig | None = None) -> Staleness:
    """The fact's staleness at ``now``."""
    config = config or StalenessConfig()
    evidence = evidence.as_of(now)
    times = [t for t in (fact.last_confirmed_at, *evidence.confirmed_at.values())
             if t is not None and t <= now]
    confirmations = fact.confirmation_count + len(evidence.confirmed_at)
    last = max(times) if times else None
    ref = max(fact.created_at, last) if last is not None else fact.created_at
    days = max(int((now - ref) // DAY), 0)
    rate = config.rate(fact.category)
    inferred = fact.source == INFERRED_SOURCE
    contradicted = evidence.contradicted_by is not None

    def score(d: int) -> float:
        return _score(d, rate, confirmations, inferred, contradicted,
                      config.contradiction_penalty)

    value = score(days)
    level = level_of(value)
    factor = INFERRED_FACTOR if inferred else 1.0
    offset = min(confirmations * CONFIRMATION_STEP, CONFIRMATION_CAP)
    penalty = config.contradiction_penalty if contradicted else 0.0
    return Staleness(
        level=level, score=value, category=fact.category, age_days=days,
        action=ACTIONS[level], confirmations=confirmations, last_confirmed_at=last,
        contradicted_by=evidence.contradicted_by,
        reason=_reason(days, fact.category, rate, confirmations, last, evidence, inferred),
        when={name: _crossing(score, threshold, ref, rate, factor, offset, penalty)
              for name, threshold in THRESHOLDS},
        checked_at=now,
    )


MAX_PROJECTED_DAYS: Final = 1_000_000


def _crossing(score: Any, threshold: float, ref: float, rate: float, factor: float,
              offset: float, penalty: float) -> float | None:
    """When the score first reaches ``threshold`` (whole days after ``ref``), or None.

    Solved from the formula, then settled against ``score`` itself (rounding, the floor of a
    contradiction), so a projection and a judgement never disagree."""
    if score(0) >= threshold:
        return ref
    if rate <= 0 or score(MAX_PROJECTED_DAYS) < threshold:
        return None
    guess = ((threshold - penalty) / factor + offset) / rate
    day = max(0, math.ceil(min(float(MAX_PROJECTED_DAYS), guess) - 1e-9))
    while day > 0 and score(day - 1) >= threshold:  # the score never falls with age
        day -= 1
    while score(day) < threshold:
        day += 1
    return ref + day * DAY


def _reason(days: int, category: str, rate: float, confirmations: int, last: float | None,
            evidence: Evidence, inferred: bool) -> str:
    since = "last confirmed" if last is not None else "stated"
    expires = 0.8 / rate if rate > 0 else math.inf
    lifetime = (f"{category} facts expire after ~{math.ceil(expires)} days"
                if expires <= MAX_PROJECTED_DAYS else f"{category} facts do not age")
    parts = [f"{days} days since {since} ({lifetime})"]
    if confirmations:
        parts.append(f"confirmed {confirmations} time(s)")
    if inferred:
        parts.append("inferred by an agent")
    if evidence.contradicted_by:
        parts.append(f"contradicted by newer {evidence.contradicted_by}")
    return "; ".join(parts)


# -- a set of facts on its own (a memory export) -----------------------------------------------
def relate(facts_in: Sequence[Fact], until: float | None = None) -> dict[str, Evidence]:
    """Evidence among the facts themselves, by the same rules as the store: claim chains
    (one scope: the export is one user's), assertions about people, the same words; facts
    stated after ``until`` are not known yet."""
    times = {f.id: f.created_at for f in facts_in}
    stated: list[Stated] = []
    own: dict[str, list[Assertion]] = {}
    for f in facts_in:
        own[f.id] = record_assertions(f.content)
        stated.extend((f.id, f.created_at, a) for a in own[f.id])
    store = MemoryPolicyStore()
    store.put(*(RecordInput(f.id, f.content, "note", created_at=f.created_at)
                for f in facts_in))
    relations = [r for r in store.all_relations() if r.method != "explicit"]
    statements = Statements(stated)
    into_record: dict[str, list[Relation]] = {}
    into_claim: dict[str, list[Relation]] = {}
    for rel in relations:
        into_record.setdefault(rel.target_record, []).append(rel)
        into_claim.setdefault(rel.target_claim, []).append(rel)
    out: dict[str, Evidence] = {}
    for f in facts_in:
        closure = confirmation_closure(f.id, into_record, into_claim)
        from_claims = relation_evidence(f.id, closure, times, until=until)
        out[f.id] = weigh(f.id, f.created_at, own[f.id], statements,
                          until).merged(from_claims)
    return out


def fact_category(content: str, given: str | None = None) -> str:
    """An export entry's category: as given, else classified like an API note."""
    if given is not None:
        if given not in DEFAULT_RATES:
            raise ConfigError(f"unknown category {given!r} (known: {', '.join(CATEGORIES)})")
        return given
    predicates = [c.predicate for c in record_claims(RecordInput("x", content, "note"))]
    return classify(content, "note", predicates)


def counts(levels: Iterable[str]) -> dict[str, int]:
    out = dict.fromkeys(models.LEVELS, 0)
    for level in levels:
        out[level] += 1
    return out


FLAGGED: Final = frozenset({STALE, EXPIRED_LEVEL})
"""memlint's "flagged": not to be injected as it is."""


def at_least(level: str, floor: str) -> bool:
    return models.LEVELS.index(level) >= models.LEVELS.index(floor)


def report(judged: Iterable[tuple[str, str, Staleness]], checked_at: float,
           only_flagged: bool = False, limit: int | None = None) -> dict[str, Any]:
    """A lint report: ``total`` and ``counts`` per level over everything judged, and
    ``results`` (``id``, ``content`` and the staleness fields; most likely out of date first),
    only the flagged ones (stale, expired) with ``only_flagged``, at most ``limit`` of them
    (``omitted`` says how many more there were). The same shape for the store and for an
    export, so one printer serves both."""
    items = list(judged)
    chosen = [(rid, content, s) for rid, content, s in items
              if not only_flagged or s.level in FLAGGED]
    chosen.sort(key=lambda item: (-item[2].score, item[0]))
    shown = chosen if limit is None else chosen[:limit]
    rows = []
    for rid, content, s in shown:
        row = {"id": rid, "content": content, **s.to_dict()}
        del row["checked_at"]  # the report's own
        rows.append(row)
    return {"checked_at": checked_at, "total": len(items),
            "counts": counts(s.level for _, _, s in items), "results": rows,
            "omitted": len(chosen) - len(shown)}


def verify_brief(items: Sequence[Mapping[str, Any]], max_chars: int = 160) -> str | None:
    """A few lines naming what to verify (``StoreJudge.needs_verifying``), or None."""
    if not items:
        return None
    lines = ["Memories that may be out of date (lintaid staleness): verify them before relying "
             "on them; `lintaid confirm ID` when still true, `lintaid supersede ID` when not."]
    for item in items:
        text = str(item["content"])
        if len(text) > max_chars:
            text = text[: max_chars - 3] + "..."
        lines.append(f"- {item['id']} [{item['level']}, {item['category']}, "
                     f"{item['age_days']} days]: {text}")
    return "\n".join(lines)


__all__ = ["CATEGORIES", "DEFAULT_RATES", "EPISODIC", "FLAGGED", "PERMANENT", "SYSTEM_FACT",
           "TEXT", "THRESHOLDS", "ConfigError", "Evidence", "Fact", "StalenessConfig", "Statements",
           "at_least", "classify", "config_from", "confirmation_closure", "counts",
           "fact_category", "judge", "level_of", "parse_rates", "record_assertions", "relate",
           "relation_evidence", "report", "text_category", "verify_brief", "weigh"]
