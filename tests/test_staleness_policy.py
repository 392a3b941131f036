"""Staleness rules, pure (``lintaid.policy.staleness`` and ``assertions``), with a fixed clock.

The acceptance cases of issue 15 run here against facts judged on their own (an export); the
same cases run against the real store in ``test_staleness_store.py`` and through the CLI in
``test_e2e_lint.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from lintaid.policy import staleness as st
from lintaid.policy.assertions import Assertion, assertions, relation
from lintaid_client import models

DAY = st.DAY
T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def fact(fid: str, text: str, days_before: float, **kw) -> st.Fact:
    return st.Fact(fid, text, T0 - days_before * DAY, st.fact_category(text, kw.pop("category",
                                                                                  None)), **kw)


def judged(facts: list[st.Fact], now: float = T0) -> dict[str, models.Staleness]:
    evidence = st.relate(facts)
    return {f.id: st.judge(f, evidence[f.id], now) for f in facts}


# -- acceptance ------------------------------------------------------------------------------
def test_leaving_a_job_flags_the_older_fact_only() -> None:
    out = judged([fact("works", "User works at Acme", 30), fact("left", "User left Acme", 2)])
    assert out["works"].level == models.STALE and out["works"].action == "flag"
    assert out["works"].contradicted_by == "left"
    assert out["left"].level == models.FRESH and out["left"].contradicted_by is None


def test_moving_flags_the_older_location_only() -> None:
    out = judged([fact("delhi", "User lives in Delhi", 40),
                  fact("mumbai", "User moved from Delhi to Mumbai", 1)])
    assert out["delhi"].category == out["mumbai"].category == st.LOCATION
    assert out["delhi"].level == models.STALE and out["delhi"].contradicted_by == "mumbai"
    assert out["mumbai"].level == models.FRESH


def test_a_name_of_two_years_stays_fresh() -> None:
    out = judged([fact("name", "User's name is Priya", 730)])["name"]
    assert out.category == st.PERMANENT and out.level == models.FRESH and out.age_days == 730


def test_an_episodic_turn_record_of_a_month_is_expired() -> None:
    turn = st.Fact("turn", "Request: fix the flaky test\nResult: Fixed the race in the backoff "
                   "test.", T0 - 30 * DAY, st.classify("Request: fix it", "capture"))
    out = judged([turn])["turn"]
    assert out.category == st.EPISODIC and out.level == models.EXPIRED_LEVEL
    assert out.action == "discard"


def test_a_dependency_pin_unconfirmed_for_200_days_is_flagged() -> None:
    out = judged([fact("pin", "We pin Django 4.2", 200)])["pin"]
    assert out.category == st.SYSTEM_FACT
    assert out.level in st.FLAGGED and out.confirmations == 0


def test_a_later_statement_of_the_same_claim_resets_the_clock() -> None:
    pin = fact("pin", "We pin Django to 4.2", 200)
    alone = judged([pin])["pin"]
    again = judged([pin, fact("later", "Django version is 4.2.", 20)])["pin"]
    assert alone.level == models.EXPIRED_LEVEL
    assert again.confirmations == 1 and again.age_days == 20
    assert again.last_confirmed_at == T0 - 20 * DAY
    assert again.level == models.FRESH  # 20 * 0.01 - 0.08 = 0.12


# -- scoring as memlint documents it -----------------------------------------------------------
@pytest.mark.parametrize(("category", "days", "score", "level"), [
    (st.EMPLOYMENT, 279, 0.6975, models.STALE),     # memlint's README sample row: 0.70 STALE
    (st.EPISODIC, 29, 1.0, models.EXPIRED_LEVEL),   # capped at 1.0
    (st.PROJECT, 49, 0.294, models.FRESH),
    (st.PROJECT, 50, 0.3, models.AGING),
    (st.IDENTITY, 1200, 0.6, models.STALE),
    (st.SYSTEM_FACT, 80, 0.8, models.EXPIRED_LEVEL),
])
def test_score_is_age_times_the_category_rate(category: str, days: int, score: float,
                                              level: str) -> None:
    f = st.Fact("f", "x", T0 - days * DAY, category)
    out = st.judge(f, st.Evidence(), T0)
    assert (out.score, out.level, out.action) == (score, level, models.ACTIONS[level])


def test_confirmations_and_inference_move_the_score() -> None:
    base = st.Fact("f", "x", T0 - 100 * DAY, st.PROJECT)
    assert st.judge(base, st.Evidence(), T0).score == 0.6
    counted = st.Fact("f", "x", T0 - 100 * DAY, st.PROJECT, confirmation_count=3)
    assert st.judge(counted, st.Evidence(), T0).score == pytest.approx(0.36)
    many = st.Fact("f", "x", T0 - 100 * DAY, st.PROJECT, confirmation_count=9)
    assert st.judge(many, st.Evidence(), T0).score == pytest.approx(0.2)  # at most -0.40
    inferred = st.Fact("f", "x", T0 - 100 * DAY, st.PROJECT, source="agent_inferred")
    assert st.judge(inferred, st.Evidence(), T0).score == pytest.approx(0.78)


def test_a_contradiction_adds_its_penalty_and_is_at_least_stale() -> None:
    old = st.Fact("f", "x", T0 - 100 * DAY, st.EMPLOYMENT)
    against = st.Evidence(contradicted_by="g", contradicted_at=T0 - DAY)
    assert st.judge(old, against, T0).score == pytest.approx(0.65)
    fresh = st.Fact("f", "x", T0 - 2 * DAY, st.EMPLOYMENT)
    assert st.judge(fresh, against, T0).level == models.STALE


def test_judging_as_of_an_earlier_time_ignores_what_came_later() -> None:
    f = st.Fact("f", "x", T0 - 100 * DAY, st.EMPLOYMENT)
    evidence = st.Evidence({"g": T0 - 10 * DAY}, "h", T0 - 5 * DAY)
    earlier = st.judge(f, evidence, T0 - 20 * DAY)
    assert earlier.confirmations == 0 and earlier.contradicted_by is None
    assert earlier.age_days == 80


def test_when_stale_projects_each_threshold_and_agrees_with_the_level() -> None:
    f = st.Fact("f", "x", T0, st.SYSTEM_FACT)
    when = st.judge(f, st.Evidence(), T0).when
    assert when == {"aging": T0 + 30 * DAY, "stale": T0 + 60 * DAY, "expired": T0 + 80 * DAY}
    for name, at in when.items():
        assert at is not None
        assert st.judge(f, st.Evidence(), at).level == name
        assert st.judge(f, st.Evidence(), at - 1).level != name
    permanent = st.judge(st.Fact("n", "x", T0, st.PERMANENT), st.Evidence(), T0)
    assert permanent.when == {"aging": None, "stale": None, "expired": None}


# -- what contradicts and what confirms --------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("User works at Acme Corp as a consultant.", [("user", "employer", "acme", False)]),
    ("User left Acme", [("user", "*", "acme", True)]),
    ("User no longer works at Acme.", [("user", "employer", "acme", True)]),
    ("User moved from Delhi to Mumbai",
     [("user", "home", "delhi", True), ("user", "home", "mumbai", False)]),
    ("My name is Priya Sharma.", [("user", "name", "priya sharma", False)]),
    ("User is building with Pinecone", [("user", "tool", "pinecone", False)]),
    ("The service works at scale.", []),
    ("Is the user based in Berlin?", []),
])
def test_assertions_about_people(text: str, expected: list[tuple]) -> None:
    assert [(a.subject, a.attribute, a.value, a.leaves) for a in assertions(text)] == expected


def test_relation_of_a_later_assertion_to_an_earlier_one() -> None:
    works = Assertion("user", "employer", "acme")
    assert relation(works, Assertion("user", "*", "acme", True)) == "contradicts"
    assert relation(works, Assertion("user", "employer", "globex")) == "contradicts"
    assert relation(works, Assertion("user", "employer", "acme")) == "confirms"
    assert relation(works, Assertion("alice", "employer", "globex")) is None
    uses = Assertion("user", "tool", "pinecone")
    assert relation(uses, Assertion("user", "tool", "qdrant")) is None  # several at once
    assert relation(uses, Assertion("user", "tool", "pinecone", True)) == "contradicts"


def test_the_latest_later_statement_decides() -> None:
    out = judged([fact("a", "User works at Acme", 300), fact("b", "User left Acme", 200),
                  fact("c", "User works at Acme", 10)])
    assert out["a"].contradicted_by is None and out["a"].confirmations == 1
    assert out["b"].contradicted_by == "c"
    assert out["c"].level == models.FRESH


def test_a_new_employer_contradicts_the_old_one_and_the_same_words_confirm() -> None:
    out = judged([fact("a", "User works at Acme", 100), fact("b", "User works at Globex", 5),
                  fact("c", "Prefers dark mode in every editor", 90),
                  fact("d", "prefers dark mode in every editor.", 3)])
    assert out["a"].contradicted_by == "b" and out["b"].level == models.FRESH
    assert out["c"].confirmations == 1 and out["c"].age_days == 3


def test_confirmations_pass_along_a_chain() -> None:
    out = judged([fact("a", "The payments service uses Postgres.", 300),
                  fact("b", "Reminder: the payments service uses Postgres.", 200),
                  fact("c", "As agreed, the payments service uses Postgres.", 10)])
    assert out["a"].confirmations == 2 and out["a"].age_days == 10


# -- classification ----------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "kind", "category"), [
    ("We pin Django 4.2", "note", st.SYSTEM_FACT),
    ("Python version is 3.11.", "note", st.SYSTEM_FACT),
    ("Always start function names with 'x_'.", "note", st.PREFERENCE),
    ("We use Redis for session storage.", "note", st.PROJECT),
    ("The platform team owns the control surface.", "note", st.RELATIONSHIP),
    ("User speaks Hindi and English", "note", st.IDENTITY),
    ("User was born in 1990 in Pune", "note", st.PERMANENT),
    ("Alice reports to Bob.", "note", st.RELATIONSHIP),
    ("Debugged a LangGraph memory issue today", "note", st.EPISODIC),
    ("Request: tidy up\nResult: Renamed two helpers.", "capture", st.EPISODIC),
    ("Request: cache\nResult: We use Redis for session storage.", "capture", st.PROJECT),
    ("Likes long walks", "note", st.PREFERENCE),
    ("zzz", "note", st.UNKNOWN),
])
def test_classification(text: str, kind: str, category: str) -> None:
    from lintaid.policy import extract_claims

    predicates = [c.predicate for c in extract_claims(text)]
    assert st.classify(text, kind, predicates) == category


# -- settings ----------------------------------------------------------------------------------
def test_settings_are_checked_and_merged() -> None:
    config = st.config_from({"rates": {"project": 0.01}, "inject_expired": True}, "f.toml")
    assert config.rate(st.PROJECT) == 0.01 and config.rate(st.EPISODIC) == 0.05
    assert config.inject_expired
    assert st.parse_rates("project=0.004, system_fact=0.02", "ENV") == {
        "project": 0.004, "system_fact": 0.02}
    for bad, message in [({"rates": {"projct": 0.1}}, "projct: unknown category"),
                         ({"rates": {"project": 2}}, "from 0 to 1"),
                         ({"rates": {"project": "fast"}}, "from 0 to 1"),
                         ({"inject_expired": "yes"}, "true or false"),
                         ({"decay": 1}, r"unknown setting\(s\) decay")]:
        with pytest.raises(st.ConfigError, match=message):
            st.config_from(bad, "f.toml")
    with pytest.raises(st.ConfigError, match="not CATEGORY=RATE"):
        st.parse_rates("project", "ENV")


def test_a_configured_rate_changes_the_level() -> None:
    f = st.Fact("f", "x", T0 - 100 * DAY, st.PROJECT)
    slow = st.StalenessConfig(rates={**st.DEFAULT_RATES, st.PROJECT: 0.001})
    assert st.judge(f, st.Evidence(), T0).level == models.STALE
    assert st.judge(f, st.Evidence(), T0, slow).level == models.FRESH


@settings(max_examples=300, deadline=None)
@given(category=hs.sampled_from(st.CATEGORIES), count=hs.integers(0, 8),
       inferred=hs.booleans(), contradicted=hs.booleans(),
       rate=hs.one_of(hs.none(), hs.floats(0.0, 0.2)), penalty=hs.floats(0.0, 1.0))
def test_projections_agree_with_judgements(category: str, count: int, inferred: bool,
                                           contradicted: bool, rate: float | None,
                                           penalty: float) -> None:
    rates = dict(st.DEFAULT_RATES) if rate is None else {**st.DEFAULT_RATES, category: rate}
    config = st.StalenessConfig(rates=rates, contradiction_penalty=penalty)
    f = st.Fact("f", "x", T0, category, "agent_inferred" if inferred else None, count)
    evidence = st.Evidence(contradicted_by="g", contradicted_at=T0) if contradicted \
        else st.Evidence()
    when = st.judge(f, evidence, T0, config).when
    order = [name for name, _ in st.THRESHOLDS]
    for name, at in when.items():
        if at is None:
            far = st.judge(f, evidence, T0 + 1_000_000 * DAY, config).level
            assert order.index(far) < order.index(name) if far in order else True
            continue
        assert st.at_least(st.judge(f, evidence, at, config).level, name)
        if at > T0:
            assert not st.at_least(st.judge(f, evidence, at - 1, config).level, name)


def brute_weigh(rid: str, at: float, own: list[Assertion],
                others: list[tuple[str, float, Assertion]], until: float) -> st.Evidence:
    """The rule as written: every later statement (known by ``until``) bearing on each
    assertion, the latest deciding; what ``weigh`` computes by lookups."""
    confirmed: dict[str, float] = {}
    contradiction = None
    for mine in own:
        events = [(when, other, relation(mine, theirs)) for other, when, theirs in others
                  if other != rid and at < when <= until and relation(mine, theirs)]
        for when, other, kind in events:
            if kind == "confirms":
                confirmed[other] = max(when, confirmed.get(other, when))
        if events:
            when, other, kind = max(events)
            if kind == "contradicts" and (contradiction is None or when > contradiction[0]):
                contradiction = (when, other)
    if contradiction is None:
        return st.Evidence(confirmed)
    return st.Evidence(confirmed, contradiction[1], contradiction[0])


assertion_st = hs.builds(Assertion, hs.sampled_from(["user", "alice"]),
                         hs.sampled_from(["employer", "home", "tool", "*"]),
                         hs.sampled_from(["acme", "globex", "delhi"]), hs.booleans())


@settings(max_examples=300, deadline=None)
@given(hs.lists(hs.tuples(hs.integers(0, 6), assertion_st), min_size=1, max_size=14),
       hs.integers(0, 7))
def test_weigh_by_lookup_equals_the_rule(said: list[tuple[int, Assertion]], until: int) -> None:
    stated = [(f"r{i}", float(t), a) for i, (t, a) in enumerate(said)]
    lookup = st.Statements(stated)
    for rid, at, mine in stated:
        assert st.weigh(rid, at, [mine], lookup, until) == brute_weigh(rid, at, [mine], stated,
                                                                       until)


def test_judged_as_of_a_time_an_earlier_contradiction_still_counts() -> None:
    facts = [fact("a", "User works at Acme", 300), fact("b", "User works at Globex", 200),
             fact("c", "User left Globex", 10)]
    then = st.relate(facts, until=T0 - 100 * DAY)
    assert then["a"].contradicted_by == "b" and then["b"].contradicted_by is None
    assert st.relate(facts)["b"].contradicted_by == "c"
