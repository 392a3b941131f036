""""X uses Y for Z" keeps its actor: the rule table's weak claim, the sentence retired together.

Extraction and chain rules as units, then through the real store and read path (``MemoryStore``
+ ``Writer`` + ``Reader`` on SQLite and Tantivy in ``tmp_path``), the injected text rendered from
the same hits as the hook renders it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lintaid.integrations import injection
from lintaid.policy import RecordInput, extract_claims
from lintaid.policy.memory_store import MemoryPolicyStore
from lintaid.search import SearchRequest
from tests.test_policy_reverts import REVERT, SWITCH, Store

ACTOR = "The gateway uses requests for outbound HTTP calls."
QUERY = "which HTTP client does the gateway use"


def claims(text: str) -> list[tuple[str, str, str, bool]]:
    return [(c.subject, c.predicate, c.value, c.weak) for c in extract_claims(text)]


# ---------------------------------------------------------------------------------------------
# Extraction


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ACTOR, [("outbound http calls", "implementation", "requests", False),
                 ("gateway", "implementation", "requests", True)]),
        ("The billing service relies on Stripe for payments.",
         [("payments", "implementation", "stripe", False),
          ("billing service", "implementation", "stripe", True)]),
        # A pronoun is no actor: the purpose alone.
        ("We use Redis for caching.", [("caching", "implementation", "redis", False)]),
        # No purpose: the actor's claim is the sentence's own, and strong.
        ("The gateway uses requests.", [("gateway", "implementation", "requests", False)]),
        # An instruction or a promise is no actor.
        ("Always rely on print statements for debugging your code.",
         [("debugging your code", "implementation", "print statements", False)]),
        ("I'll make sure to rely on print statements from now on for debugging purposes.",
         [("debugging purposes", "implementation", "print statements", False)]),
        ("The team does not use Jira for tracking.", []),
    ],
)
def test_an_actor_beside_a_purpose_yields_a_weak_claim(
        text: str, expected: list[tuple[str, str, str, bool]]) -> None:
    assert claims(text) == expected


def test_a_weak_claim_never_hides_the_same_statement_made_outright() -> None:
    got = claims(f"{ACTOR} The gateway uses requests.")
    assert ("gateway", "implementation", "requests", False) in got
    assert claims(f"The gateway uses requests. {ACTOR}") == [
        ("gateway", "implementation", "requests", False),
        ("outbound http calls", "implementation", "requests", False)]


# ---------------------------------------------------------------------------------------------
# Relations: an actor's sentence is retired only by a statement naming its value


def _gateway_statuses(*texts: str) -> dict[str, str]:
    """Record statuses of ``texts`` as notes, in order, a minute apart."""
    d = MemoryPolicyStore()
    d.put(*(RecordInput(f"r{i}", text, kind="note", created_at=100.0 + 60 * i)
            for i, text in enumerate(texts)))
    return {f"r{i}": d.status(f"r{i}") for i in range(len(texts))}


@pytest.mark.parametrize(
    ("newer", "status"),
    [
        (SWITCH, "superseded"),  # names requests: retires it
        ("The gateway now uses httpx.", "current"),  # a cue naming nothing: another purpose?
        ("The gateway uses httpx.", "current"),  # newer, same kind, but the actor is weak
        ("The gateway uses Redis for caching.", "current"),  # weak beside weak: another purpose
        ("The gateway uses requests for retries.", "current"),  # the same value: confirms
    ],
)
def test_a_weak_claim_is_retired_only_by_a_claim_naming_its_value(newer: str,
                                                                  status: str) -> None:
    got = _gateway_statuses(ACTOR, newer)
    assert got["r0"] == status and got["r1"] == "current"


def test_a_weak_claim_retires_nothing_and_conflicts_with_nothing() -> None:
    states = _gateway_statuses("The gateway uses requests.",
                               "The gateway uses Redis for caching.")
    assert states == {"r0": "current", "r1": "current"}


# ---------------------------------------------------------------------------------------------
# Through the store and the read path: the sentence is retired together


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path)
    try:
        yield store
    finally:
        store.close()


T0 = 1_780_000_000.0


def _injected(s: Store, query: str) -> str:
    hits = s.reader.search(SearchRequest(query=query, passages=True)).results
    return injection.render(hits, where=injection.Where(None, None, None)) or ""


def test_naming_the_actors_value_retires_the_whole_sentence(s: Store) -> None:
    actor = s.put(ACTOR, T0)
    switch = s.put(SWITCH, T0 + 60)
    got = s.reader.get(actor, None)
    assert (got.status, got.superseded_by) == ("superseded", switch)
    # the sentence's claim (its purpose, its actor in its topic) goes with it
    assert [(c.subject, c.status, c.superseded_by, c.replaced_by_value) for c in got.claims] == [
        ("outbound http calls", "superseded", switch, "httpx")]
    hits, hidden = s.search(QUERY)
    assert hits == [(switch, "current")] and hidden == 1
    text = _injected(s, QUERY)
    assert "now uses httpx" in text and "for outbound HTTP calls" not in text


def test_a_revert_after_the_switch_is_current_and_the_sentence_stays_retired(s: Store) -> None:
    actor = s.put(ACTOR, T0)
    switch = s.put(SWITCH, T0 + 60)
    revert = s.put(REVERT, T0 + 120)
    assert [s.reader.get(r, None).status for r in (actor, switch, revert)] == [
        "superseded", "superseded", "current"]
    assert s.search(QUERY)[0] == [(revert, "current")]


def test_forgetting_the_switch_brings_the_sentence_back(s: Store) -> None:
    actor = s.put(ACTOR, T0)
    switch = s.put(SWITCH, T0 + 60)
    s.writer.run(lambda: s.store.forget(switch, "local", None, "test"), 60)
    got = s.reader.get(actor, None)
    assert got.status == "current" and got.claims
    assert {c.status for c in got.claims} == {"current"}


def test_two_purposes_of_one_actor_stay_current(s: Store) -> None:
    storage = s.put("The service uses Postgres for storage.", T0)
    caching = s.put("The service uses Redis for caching.", T0 + 60)
    for rid in (storage, caching):
        got = s.reader.get(rid, None)
        assert got.status == "current" and {c.status for c in got.claims} == {"current"}


def test_a_newer_statement_of_the_purpose_retires_the_actors_claim_too(s: Store) -> None:
    actor = s.put(ACTOR, T0)
    newer = s.put("We now use httpx for outbound HTTP calls.", T0 + 60)
    got = s.reader.get(actor, None)
    assert (got.status, got.superseded_by) == ("superseded", newer)
    assert got.claims and {c.status for c in got.claims} == {"superseded"}
    assert s.reader.get(newer, None).status == "current"


def test_a_newer_purpose_without_a_cue_retires_the_actor_as_a_newer_same_kind(
        s: Store) -> None:
    """Nobody said the client changed, but the newer note names the same thing by the same
    name: the newer same-kind statement holds (design: 0.90), the actor's sentence retires."""
    actor = s.put(ACTOR, T0)
    newer = s.put("We use httpx for outbound HTTP calls.", T0 + 60)
    assert s.reader.get(actor, None).status == "superseded"
    assert s.reader.get(newer, None).status == "current"
