"""History queries rank like the present, through the one read path.

A real ``MemoryStore`` + ``Writer`` and a real ``WorkspaceStore`` (SQLite and Tantivy in
``tmp_path``) behind one ``Reader``: a history query must return the current hits of both stores
with the scores and order the plain query gives them, the superseded records interleaved by
score and labelled, and automatic history mode must come only from a question about a change.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lintaid.capture.record import NewRecord
from lintaid.derivation import apply_files
from lintaid.search import Reader, SearchRequest
from lintaid.store.memory import MemoryStore
from lintaid.store.workspace import WorkspaceStore
from lintaid.workspace.service import file_update
from lintaid.writer import Writer

T0 = 1_780_000_000.0
MEMORIES = [
    "Gateway timeout retry attempts: 5.",
    "Gateway timeout retry attempts: now 2.",  # supersedes the first (its "now" says it changed)
    "The gateway dashboard moved to Grafana.",
    "Retry attempts for the payment worker are unlimited; the gateway keeps its own budget.",
    "We use Redis for session storage.",
    "We use Memcached for session storage instead of Redis.",  # supersedes Redis
    "The script is used to build the docs with Sphinx.",
    "The history module keeps the audit trail of each record.",
]
FILES = {
    "gateway/client.py": "RETRY_ATTEMPTS = 2\n\ndef gateway_retry(attempts):\n"
                         "    # gateway retry attempts, capped\n    return attempts\n",
    "gateway/README.md": "# Gateway\n\nThe gateway retries a timed-out call; attempts are capped.\n",
    "docs/retries.md": "# Retries\n\nRetry attempts back off exponentially in the gateway and "
                       "the worker.\n",
    "ops/runbook.md": "# Runbook\n\nIf the gateway times out, check retry attempts in the "
                      "dashboard.\n",
}


class Workspace:
    """The workspace side of ``Reader`` over a real ``WorkspaceStore`` (what the daemon's
    workspace service forwards to)."""

    def __init__(self, store: WorkspaceStore) -> None:
        self.store = store

    def search_hits(self, query: str, limit: int, *,
                    history: bool) -> tuple[list[dict[str, Any]], int]:
        return self.store.search(query, limit, history=history)

    def changed_since(self, file_hashes: dict[str, str]) -> list[str]:
        return []


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[Reader]:
    memory = MemoryStore(tmp_path)
    writer = Writer(memory)
    writer.start()
    workspace = WorkspaceStore(tmp_path, derived_version="test")
    try:
        for i, text in enumerate(MEMORIES):
            rec = NewRecord(content=text, kind="note", source=f"api/{i}", created_at=T0 + i)
            writer.run(lambda rec=rec: memory.put(rec, "test"), 60)
        apply_files(workspace, [file_update(p, t.encode(), len(t), int(T0 * 1e9), read_at=T0)
                                for p, t in FILES.items()], [])
        workspace.flush_index()
        r = Reader(memory=memory, workspace=Workspace(workspace),
                   wait_visible=writer.wait_visible)
        r.settle(None)
        yield r
    finally:
        writer.stop()
        memory.close()
        workspace.close()


def ranked(reader: Reader, query: str, **kw: Any) -> list[tuple[str, float, bool, str]]:
    result = reader.search(SearchRequest(query=query, top_k=kw.pop("top_k", 10), **kw))
    return [(h.id, round(h.score, 6), h.historical, h.status) for h in result.results]


def content(reader: Reader, rid: str) -> str:
    return reader.get(rid, None).content


@pytest.mark.parametrize("query", ["gateway retry attempts", "session storage",
                                   "what store do we use for sessions"])
def test_a_history_query_keeps_the_plain_ranks_and_adds_the_past(reader: Reader,
                                                                  query: str) -> None:
    plain = ranked(reader, query, top_k=20)
    history = ranked(reader, query, top_k=20, history=True)
    past = [h for h in history if h[2]]
    assert past and all(status == "superseded" for _, _, _, status in past)
    assert [h for h in history if not h[2]] == plain  # same hits, same scores, same order
    assert not any(h[2] for h in plain)


def test_the_current_record_keeps_its_score_and_rank(reader: Reader) -> None:
    plain = ranked(reader, "gateway retry attempts", top_k=5)
    history = ranked(reader, "gateway retry attempts", top_k=5, history=True)
    at = next(i for i, h in enumerate(plain) if not h[0].startswith("ws:"))
    assert content(reader, plain[at][0]) == "Gateway timeout retry attempts: now 2."
    assert history[at] == plain[at]  # the same rank with the same score
    old = next(h for h in history if h[2])
    assert content(reader, old[0]) == "Gateway timeout retry attempts: 5."


def test_what_changed_finds_the_current_and_the_past_record(reader: Reader) -> None:
    result = reader.search(SearchRequest(query="what changed in gateway retry attempts",
                                         top_k=5))
    assert result.history
    texts = [(h.content, h.status, h.historical) for h in result.results if h.store == "memory"]
    assert texts[0] == ("Gateway timeout retry attempts: now 2.", "current", False)
    assert ("Gateway timeout retry attempts: 5.", "superseded", True) in texts


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("which script is used to build the docs", "The script is used to build the docs with "
                                                   "Sphinx."),
        ("what does the history module keep", "The history module keeps the audit trail of "
                                              "each record."),
    ],
)
def test_used_to_and_history_alone_stay_plain_queries(reader: Reader, query: str,
                                                      answer: str) -> None:
    result = reader.search(SearchRequest(query=query, top_k=5))
    assert not result.history
    assert result.results[0].content == answer
    assert not any(h.historical for h in result.results)


def test_an_explicit_history_flag_on_a_plain_question_moves_nothing(reader: Reader) -> None:
    query = "which script is used to build the docs"
    plain = ranked(reader, query, top_k=5)
    history = ranked(reader, query, top_k=5, history=True)
    assert history[0] == plain[0]


def test_a_retired_sentence_inside_a_visible_record_is_history(tmp_path: Path) -> None:
    """A capture whose Redis sentence was superseded stays visible for the rest it says; a
    current query no longer matches the retired sentence, a history query does."""
    memory = MemoryStore(tmp_path)
    writer = Writer(memory)
    writer.start()
    try:
        texts = ["Request: store sessions\nResult: We use Redis for session storage. Added a "
                 "health check endpoint for the load balancer.",
                 "We use Memcached for session storage instead of Redis."]
        ids = []
        for i, text in enumerate(texts):
            rec = NewRecord(content=text, kind="capture", source=f"cc/{i}", created_at=T0 + i)
            ids.append(writer.run(lambda rec=rec: memory.put(rec, "test"), 60)[0])
        reader = Reader(memory=memory, wait_visible=writer.wait_visible)
        reader.settle(None)
        assert reader.get(ids[0], None).status == "partly_superseded"
        plain = reader.search(SearchRequest(query="redis", top_k=5))
        assert [h.id for h in plain.results] == [ids[1]]  # "instead of Redis" only
        past = reader.search(SearchRequest(query="what did we use before memcached redis",
                                           top_k=5))
        assert past.history
        by_id = {h.id: h for h in past.results}
        assert by_id[ids[0]].historical and by_id[ids[0]].status == "partly_superseded"
        assert not by_id[ids[1]].historical
    finally:
        writer.stop()
        memory.close()
