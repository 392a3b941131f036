"""Retrieval beyond word overlap (issue 10), through the real store, writer and reader
(SQLite and Tantivy in tmp_path): per-user statistics, authors as a name field, time named in
a query, neighbour fusion and context for conversation turns, and the query's stop words."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from lintaid.capture.record import NewRecord
from lintaid.retrieval.dates import date_spans
from lintaid.retrieval.query import STOP_WORDS, content_words, words
from lintaid.search import Reader, SearchRequest
from lintaid.store.memory import MemoryStore
from lintaid.store.user_index import user_dir_name
from lintaid.writer import Writer
from lintaid_client import mcp_tools, models
from tests.conftest import Served


def ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


class Store:
    def __init__(self, root: Path) -> None:
        self.store = MemoryStore(root)
        self.writer = Writer(self.store)
        self.writer.start()
        self.reader = Reader(memory=self.store, wait_visible=self.writer.wait_visible)

    def add(self, records: list[NewRecord]) -> list[str]:
        ids = self.writer.run(lambda: [self.store.put(r, "test")[0] for r in records])
        assert self.reader.settle(None, 30)
        return ids

    def search(self, query: str, user: str | None = None, top_k: int = 10,
               now: float | None = None, **kw: object) -> list[models.Hit]:
        return self.reader.search(SearchRequest(query=query, user_id=user, top_k=top_k,
                                                store="memory", now=now, **kw)).results

    def close(self) -> None:
        self.writer.stop()
        self.store.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "a")
    yield s
    s.close()


def turn(author: str, text: str, session: str, at: float, user: str = "chat") -> NewRecord:
    return NewRecord(content=f"{author}: {text}", kind="note", source=f"test://{session}/{at}",
                     user_id=user, session_id=session, created_at=at,
                     metadata={"author": author})


def note(text: str, user: str | None = None, at: float = 1_700_000_000.0) -> NewRecord:
    return NewRecord(content=text, kind="note", source="api", user_id=user or "local",
                     created_at=at)


# -- per-user statistics ----------------------------------------------------------------------
ALICE = ["The billing service retries failed charges three times.",
         "Deploys go out on Tuesdays after the billing freeze lifts.",
         "The gateway timeout is thirty seconds for billing calls.",
         "Redis holds the session cache; billing reads it too.",
         "Nothing to see here, just notes about lunch and coffee.",
         "The billing team owns the invoice renderer."]
QUERIES = ["billing retries", "when do deploys go out", "gateway timeout billing",
           "who owns the invoice renderer", "session cache", "coffee"]


def _ranking(s: Store) -> list[list[tuple[float, str]]]:
    """Scores and ids, best first (records of equal score in id order: Tantivy orders a tie
    by where the documents sit in its segments)."""
    return [sorted((-h.score, h.id) for h in s.search(q, user="alice")) for q in QUERIES]


def test_one_users_ranking_and_scores_do_not_depend_on_another_users_records(
        tmp_path: Path) -> None:
    alone = Store(tmp_path / "alone")
    shared = Store(tmp_path / "shared")
    try:
        # Alice's records in the same two writes in both stores (ties keep write order).
        alone.add([note(t, "alice") for t in ALICE[:3]])
        alone.add([note(t, "alice") for t in ALICE[3:]])
        # Another user's records, many and on the same words, written before, between and
        # after Alice's: with statistics shared across users they would move her ranking.
        rnd = random.Random(3)
        vocab = "billing retries deploys gateway timeout cache session invoice coffee".split()
        bob = [note(" ".join(rnd.choice(vocab) for _ in range(rnd.randint(2, 12))), "bob",
                    at=1_600_000_000.0 + i) for i in range(300)]
        shared.add(bob[:150])
        shared.add([note(t, "alice") for t in ALICE[:3]])
        shared.add(bob[150:])
        shared.add([note(t, "alice") for t in ALICE[3:]])
        expected = _ranking(alone)
        assert all(expected), "every query finds something of Alice's"
        assert _ranking(shared) == expected  # same ids, same order, same scores
        assert {h.user_id for q in QUERIES for h in shared.search(q, user="bob")} == {"bob"}
    finally:
        alone.close()
        shared.close()


def test_a_user_without_records_finds_nothing(store: Store) -> None:
    store.add([note("billing retries", "alice")])
    assert store.search("billing", user="carol") == []


def test_each_user_index_is_rebuilt_after_damage(tmp_path: Path) -> None:
    s = Store(tmp_path)
    s.add([note("billing retries three times", "alice"), note("billing freeze", "bob")])
    s.close()
    folder = next(p for p in (tmp_path / ".lint-ai" / "index" / "memory").iterdir()
                  if p.is_dir() and (p / "lintaid-user").read_text() == "alice")
    (folder / "meta.json").write_text("{broken")
    s = Store(tmp_path)
    try:
        assert [h.content for h in s.search("billing", user="alice")] == \
            ["billing retries three times"]
        assert [h.content for h in s.search("billing", user="bob")] == ["billing freeze"]
    finally:
        s.close()


def test_a_users_index_folder_removed_is_fed_again_at_start(tmp_path: Path) -> None:
    s = Store(tmp_path)
    s.add([note("billing retries three times", "alice"), note("billing freeze", "bob")])
    s.close()
    folder = tmp_path / ".lint-ai" / "index" / "memory" / user_dir_name("alice")
    shutil.rmtree(folder)
    s = Store(tmp_path)
    try:
        assert [h.content for h in s.search("billing", user="alice")] == \
            ["billing retries three times"]
    finally:
        s.close()


# -- authors as a name field --------------------------------------------------------------------
def test_a_named_author_is_a_bonus_not_a_word_and_tolerates_a_typo(store: Store) -> None:
    day = ts("2023-05-08T13:00:00")
    store.add([
        turn("Caroline", "I painted a sunrise over the lake last week.", "s1", day),
        turn("Melanie", "Caroline, your painting of the lake is lovely!", "s1", day + 1),
        turn("Melanie", "I painted my kids playing in the garden.", "s1", day + 2),
        turn("Caroline", "Thanks! How are the kids?", "s1", day + 3),
        turn("Caroline", "Hi!", "s2", day + 86400),
    ])
    for query in ("What did Caroline paint?", "What did Carolin paint?",
                  "what did caroilne paint"):
        hits = store.search(query, user="chat")
        assert hits[0].content.startswith("Caroline: I painted a sunrise"), query
        # The name alone lifts none of Caroline's turns that do not match the question (her
        # thanks comes only after a match, as its reply).
        assert "Caroline: Hi!" not in [h.content for h in hits], query
    # A short name needs the exact spelling: "Mel" is no author here.
    def scores(query: str) -> list[tuple[float, str]]:
        return sorted((-h.score, h.id) for h in store.search(query, user="chat"))

    assert scores("What did Mel paint?") == scores("paint")  # no bonus for anyone


def test_records_without_authors_rank_as_plain_text(store: Store) -> None:
    store.add([note("Caroline owns the billing service."), note("billing freeze on Fridays")])
    hits = store.search("who owns billing caroline")
    assert hits[0].content == "Caroline owns the billing service."


# -- time named in a query ------------------------------------------------------------------------
def test_a_query_naming_a_month_ranks_records_of_then_first(store: Store) -> None:
    march, june = ts("2023-03-10T10:00:00"), ts("2023-06-10T10:00:00")
    ids = store.add([note("We went camping by the river.", at=june),
                     note("We went camping in the mountains.", at=march)])
    plain = store.search("camping trip")
    assert len(plain) == 2 and plain[0].score == plain[1].score  # the same words, a tie
    for query in ("camping trip in March 2023", "camping trip in March",
                  "camping on 10 March, 2023"):
        first, second = store.search(query)
        assert first.id == ids[1] and first.score > second.score, query
    # Relative times count from the search's time.
    assert store.search("camping last week", now=march + 3 * 86400)[0].id == ids[1]
    assert store.search("camping last week", now=june + 3 * 86400)[0].id == ids[0]


def test_a_query_naming_no_time_keeps_the_plain_ranking_and_scores(store: Store) -> None:
    store.add([note(f"retry budget {i} for the gateway", at=1_700_000_000.0 + i * 86400)
               for i in range(8)])
    a = [(h.id, h.score) for h in store.search("gateway retry budget")]
    b = [(h.id, h.score) for h in store.search("what is the gateway retry budget?")]
    assert a == b  # the stop words changed nothing; no boost applied


def test_date_phrases() -> None:
    now = ts("2024-01-15T12:00:00")
    assert date_spans("how do I deploy the gateway", now) == []
    assert date_spans("may I use the cache", now) == []  # the verb is no month
    (span,) = date_spans("what happened on 8 May, 2023", now)
    assert span.holds(ts("2023-05-08T23:00:00")) and not span.holds(ts("2023-05-09T01:00:00"))
    (span,) = date_spans("in March", now)
    assert span.holds(ts("2021-03-31T00:00:00")) and not span.holds(ts("2021-04-01T00:00:00"))
    assert span.holds(ts("2021-04-20T00:00:00"), slack=30 * 86400)
    (span,) = date_spans("what did we do yesterday", now)
    assert span.holds(now - 86400 + 60) and not span.holds(now - 3 * 86400)
    (span,) = date_spans("the decisions of 2022", now)
    assert span.holds(ts("2022-12-31T23:00:00")) and not span.holds(ts("2023-01-01T01:00:00"))


# -- conversation turns: fusion and context --------------------------------------------------------
def test_a_reply_sharing_no_word_with_the_question_is_found_beside_the_question(
        store: Store) -> None:
    t = ts("2023-05-08T13:00:00")
    ids = store.add([
        turn("Bob", "Which instrument did you take up this spring?", "s1", t),
        turn("Alice", "The cello! Lessons every Tuesday.", "s1", t + 1),
        turn("Bob", "Do you still sing in the choir?", "s1", t + 2),
        turn("Alice", "Yes, and the instrument shop is near the choir hall.", "s1", t + 3),
    ])
    hits = store.search("what instrument did Alice take up", user="chat", top_k=3)
    assert ids[1] in [h.id for h in hits]  # the answer, though it shares no word
    # Every hit that is a turn brings its neighbours, short, in order.
    first = next(h for h in hits if h.id == ids[0])
    assert [(c.position, c.id) for c in first.context] == [(models.AFTER, ids[1])]
    answer = next(h for h in hits if h.id == ids[1])
    assert [(c.position, c.id, c.author) for c in answer.context] == [
        (models.BEFORE, ids[0], "Bob"), (models.AFTER, ids[2], "Bob")]
    assert answer.context[0].said() == "Bob: Which instrument did you take up this spring?"


def test_context_leaves_out_what_is_forgotten_or_superseded_and_plain_notes_have_none(
        store: Store) -> None:
    t = ts("2023-05-08T13:00:00")
    ids = store.add([turn("Bob", "The cache lives in Redis.", "s1", t),
                     turn("Alice", "Good to know about the cache.", "s1", t + 1),
                     turn("Bob", "Lunch at noon?", "s1", t + 2)])
    store.writer.run(lambda: store.store.forget(ids[2], "chat", None, "test"))
    store.writer.run(lambda: store.store.set_supersedes(ids[1], ids[0], "chat", "test"))
    store.reader.settle(None, 30)
    (hit,) = [h for h in store.search("good to know", user="chat") if h.id == ids[1]]
    assert hit.context == []
    history = [h for h in store.search("good to know", user="chat", history=True)
               if h.id == ids[1]][0]
    assert [c.id for c in history.context] == [ids[0]]  # history shows what was retired
    store.add([note("The cache lives in Redis.", at=t), note("Lunch at noon?", at=t + 1)])
    assert all(h.context == [] for h in store.search("cache lunch"))


def test_stop_words_are_dropped_from_the_query_unless_nothing_else_is_left() -> None:
    assert content_words(words("What is the gateway's retry budget?")) == \
        ["gateway", "retry", "budget"]
    assert content_words(words("who is it")) == ["who", "is", "it"]
    assert {"the", "what", "is"} <= STOP_WORDS


# -- through the daemon: the Python client, the MCP tool's view, injection ------------------------
def test_context_reaches_the_client_the_mcp_view_and_injection(served: Served) -> None:
    with served.memory() as mem:
        for who, text in [("Bob", "Which database did the team pick for the ledger?"),
                          ("Alice", "Postgres, with logical replication to the warehouse."),
                          ("Bob", "Great, lunch at noon?")]:
            mem.add(f"{who}: {text}", metadata={"author": who}, session_id="standup-1")
        raw = served.call("search", {"query": "which database for the ledger",
                                     "store": "memory"})
    first = models.Hit.from_dict(raw["results"][0])
    assert first.content.startswith("Bob: Which database")
    assert [(c.position, c.author) for c in first.context] == [(models.AFTER, "Alice")]
    _view, shape = mcp_tools.VIEWS["search"]
    line = shape(raw, {}, served.root).results[0]
    assert line.context == ["after: Alice: Postgres, with logical replication to the "
                            "warehouse."]
    out = served.hook("UserPromptSubmit", {"session_id": "s9",
                                           "prompt": "Which database did we pick for the "
                                                     "ledger?"})
    text = json.dumps(out)
    assert "Said after: Alice: Postgres, with logical replication" in text
    # status says which search runs: lexical (no semantic extra ships), one index per user.
    assert served.call("status")["search"] == {"mode": "lexical", "indexes": "per user",
                                               "users": 1}
