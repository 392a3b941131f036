"""Reverts retire what they revert; two values for one subject are never both current unmarked.

Extraction and chain rules as units, then through the real read path: ``MemoryStore`` +
``Writer`` + ``Reader`` on SQLite and Tantivy in ``tmp_path`` (search, ``get``) and the injected
text rendered from the same hits, as the hook renders it. The MCP tools call the same ``Reader``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lintaid.capture.record import NewRecord
from lintaid.integrations import injection
from lintaid.policy import RecordInput, extract_claims
from lintaid.policy.memory_store import MemoryPolicyStore
from lintaid.search import Reader, SearchRequest
from lintaid.store.memory import MemoryStore
from lintaid.writer import Writer

SWITCH = "The gateway now uses httpx instead of requests."
REVERT = "The gateway uses requests again instead of httpx."


def triples(text: str) -> list[tuple[str, str, str]]:
    return [(c.subject, c.predicate, c.value) for c in extract_claims(text)]


# ---------------------------------------------------------------------------------------------
# Extraction: the restored value lands on the chain of what it reverts, with a cue


def test_the_issue_sentences_meet_on_one_chain() -> None:
    [switch] = extract_claims(SWITCH)
    [revert] = extract_claims(REVERT)
    assert (switch.subject, switch.predicate, switch.value, switch.replaces) == (
        "gateway", "implementation", "httpx", "requests")
    assert (revert.subject, revert.predicate, revert.value, revert.replaces) == (
        "gateway", "implementation", "requests", "httpx")
    assert revert.cue


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The gateway uses requests again.", ("gateway", "implementation", "requests")),
        ("The gateway went back to requests.", ("gateway", "implementation", "requests")),
        ("The gateway is back on requests.", ("gateway", "implementation", "requests")),
        ("The gateway was rolled back to requests.", ("gateway", "implementation", "requests")),
        ("The gateway has been reverted to requests.",
         ("gateway", "implementation", "requests")),
        ("We reverted the gateway to requests.", ("gateway", "implementation", "requests")),
        ("We rolled the gateway back to requests.", ("gateway", "implementation", "requests")),
        ("We went back to requests for the gateway.", ("gateway", "implementation", "requests")),
        ("We returned to requests for the gateway.", ("gateway", "implementation", "requests")),
        ("We use requests again for the gateway.", ("gateway", "implementation", "requests")),
        ("We undid the gateway's switch from requests to httpx.",
         ("gateway", "implementation", "requests")),
        # The undone value alone: the gateway's chain gets "not httpx", which retires httpx.
        ("We undid the switch to httpx in the gateway.",
         ("gateway", "implementation", "not httpx")),
        # No subject named: the anchor a purpose-less switch from requests used.
        ("We went back to requests.", ("tool:requests", "implementation", "requests")),
        ("We switched back to requests.", ("tool:requests", "implementation", "requests")),
        ("We use requests again.", ("tool:requests", "implementation", "requests")),
        ("We reverted to requests.", ("tool:requests", "implementation", "requests")),
        ("We rolled back to requests.", ("tool:requests", "implementation", "requests")),
        ("We undid the switch from requests to httpx.",
         ("tool:requests", "implementation", "requests")),
        ("Retry attempts are back to 3.", ("retry attempts", "value", "3")),
    ],
)
def test_revert_phrasings(text: str, expected: tuple[str, str, str]) -> None:
    claims = extract_claims(text)
    assert [(c.subject, c.predicate, c.value) for c in claims] == [expected]
    assert claims[0].cue


def test_a_purpose_less_switch_and_its_revert_share_the_anchor() -> None:
    assert triples("We switched from requests to httpx.") == [
        ("tool:requests", "implementation", "httpx")]
    assert triples("We went back to requests.")[0][0] == "tool:requests"


def test_undoing_a_switch_without_a_subject_or_the_old_value_retires_the_tool() -> None:
    assert triples("We undid the switch to httpx.") == [("httpx", "status", "deprecated")]


@pytest.mark.parametrize(
    "text",
    [
        "Let's get back to work.",
        "I'll go back to review my recent work.",
        "We went back to the drawing board.",
        "Thanks again for your help.",
        "I wanted to touch base with you again.",
        "We never went back to requests.",
        "If we went back to requests, the proxy tests would pass.",
    ],
)
def test_not_reverts(text: str) -> None:
    assert triples(text) == []


def test_the_revert_retires_the_switch_and_the_original_stays_retired() -> None:
    d = MemoryPolicyStore()
    d.put(RecordInput("a", "The gateway uses requests.", kind="note", created_at=100.0),
          RecordInput("b", SWITCH, kind="note", created_at=200.0),
          RecordInput("c", REVERT, kind="note", created_at=300.0))
    assert [d.status(r) for r in "abc"] == ["superseded", "superseded", "current"]
    [b] = d.claims(["b"])
    state = d.claim_state[b.claim_id]
    assert state.superseded_by_record == "c" and state.confidence == 0.95


# ---------------------------------------------------------------------------------------------
# Through the store and the read path


class Store:
    def __init__(self, root: Path) -> None:
        self.store = MemoryStore(root)
        self.writer = Writer(self.store)
        self.writer.start()
        self.reader = Reader(memory=self.store, wait_visible=self.writer.wait_visible)

    def put(self, text: str, at: float, *, kind: str = "note", user: str = "local") -> str:
        rec = NewRecord(content=text, kind=kind, source="api", user_id=user, created_at=at)
        rid, event = self.writer.run(lambda: self.store.put(rec, "test"), 60)
        assert event == "ADD"
        return str(rid)

    def search(self, query: str, **kw: object) -> tuple[list[tuple[str, str]], int]:
        self.reader.settle(None)
        result = self.reader.search(SearchRequest(query=query, top_k=10, **kw))  # type: ignore
        return [(h.id, h.status) for h in result.results], result.hidden

    def close(self) -> None:
        self.writer.stop()
        self.store.close()


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path)
    try:
        yield store
    finally:
        store.close()


T0 = 1_780_000_000.0


def test_a_revert_is_current_and_hides_what_it_reverted(s: Store) -> None:
    switched = s.put(SWITCH, T0)
    reverted = s.put(REVERT, T0 + 3600)
    hits, hidden = s.search("which HTTP client does the gateway use")
    assert hits == [(reverted, "current")] and hidden == 1
    old = s.reader.get(switched, None)
    assert (old.status, old.superseded_by) == ("superseded", reverted)
    history, _ = s.search("which HTTP client does the gateway use", history=True)
    assert history == [(reverted, "current"), (switched, "superseded")]
    text = injection.render(s.reader.search(SearchRequest(
        query="which HTTP client does the gateway use", passages=True)).results,
        where=injection.Where(None, None, None))
    assert text is not None and "requests again" in text and "now uses httpx" not in text


def test_a_revert_without_a_subject_retires_a_purpose_less_switch(s: Store) -> None:
    switched = s.put("We switched from pip to uv.", T0)
    reverted = s.put("We went back to pip.", T0 + 60)
    assert s.reader.get(switched, None).status == "superseded"
    assert s.reader.get(reverted, None).status == "current"


def test_two_notes_seconds_apart_the_newer_wins(s: Store) -> None:
    alpha = s.put("Artifact bucket is s3://alpha.", T0)
    beta = s.put("Artifact bucket is now s3://beta.", T0 + 2)
    hits, hidden = s.search("artifact bucket")
    assert hits == [(beta, "current")] and hidden == 1
    got = s.reader.get(alpha, None)
    assert (got.status, got.superseded_by, got.confidence) == ("superseded", beta, 0.95)
    assert [c.status for c in got.claims] == ["superseded"]


def test_two_notes_seconds_apart_without_a_cue_the_newer_holds(s: Store) -> None:
    """Nobody said the bucket changed, but both name one setting alike: the newer note holds
    (a newer same-kind source, 0.90) and the older is hidden."""
    alpha = s.put("Artifact bucket is s3://alpha.", T0)
    beta = s.put("Artifact bucket is s3://beta.", T0 + 2)
    hits, hidden = s.search("artifact bucket")
    assert hits == [(beta, "current")] and hidden == 1
    got = s.reader.get(alpha, None)
    assert (got.status, got.confidence) == ("superseded", 0.9)
    assert [c.status for c in got.claims] == ["superseded"]


def test_two_notes_with_no_order_are_both_marked_conflicted(s: Store) -> None:
    alpha = s.put("Artifact bucket is s3://alpha.", T0)
    beta = s.put("Artifact bucket is s3://beta.", T0)  # stamped alike: neither is newer
    hits, hidden = s.search("artifact bucket")
    assert sorted(hits) == sorted([(alpha, "conflicted"), (beta, "conflicted")]) and hidden == 0
    for rid in (alpha, beta):
        assert [c.status for c in s.reader.get(rid, None).claims] == ["conflicted"]
    text = injection.render(s.reader.search(SearchRequest(query="artifact bucket",
                                                          passages=True)).results,
                            where=injection.Where(None, None, None))
    assert text is not None and text.count("CONFLICTED") == 2


def test_one_note_stating_two_values_is_marked(s: Store) -> None:
    both = s.put("Artifact bucket is s3://alpha.\nArtifact bucket: s3://beta", T0)
    got = s.reader.get(both, None)
    assert got.status == "conflicted"
    assert [c.status for c in got.claims] == ["conflicted", "conflicted"]


def test_one_note_listing_two_things_with_two_values_is_no_conflict(s: Store) -> None:
    # Two schedules of two DAGs, side by side in one summary: two things it lists, not one
    # setting it states twice (that is the note above, which is marked).
    listing = s.put("Schedules:\n- `churn_weekly` Mondays 06:00 UTC\n"
                    "- `brightleaf_daily` at 02:00 UTC", T0)
    got = s.reader.get(listing, None)
    assert got.status == "current"
    assert got.claims and {c.status for c in got.claims} == {"current"}
