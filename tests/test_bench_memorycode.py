"""benchmarks/memorycode.py: its scoring rules, and its core on small hand-checked dialogues.

The dialogues are written here (tmp_path), in MemoryCode's layout, so the test needs no data.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_memorycode",
                                                  REPO / "benchmarks" / "memorycode.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


mc = _load()

TOPICS = {
    "instructions": [
        {"id": 0, "text": ["always start variable names with 'x_'",
                           "always start variable names with 'y_'"],
         "regex": [["variable", "^x_.*"], ["variable", "^y_.*"]],
         "eval_query": "function that sums a list", "shuffle_updates": True},
        {"id": 1, "text": ["always end function names with '_c'",
                           "always end function names with '_d'"],
         "regex": [["function", ".*_c$"], ["function", ".*_d$"]],
         "eval_query": "function that merges two lists", "shuffle_updates": True},
        {"id": 2, "text": ["always use all UPPERCASE for class names",
                           "always use snake_case for class names"],
         "regex": [["class", "\\b[A-Z][A-Z0-9_]*\\b"], ["class", "^[a-z0-9_]*$"]],
         "eval_query": "class for a bank account", "shuffle_updates": True},
        {"id": 3, "text": ["always include assert statements in functions"],
         "regex": [["function assert", True]], "eval_query": "x", "shuffle_updates": False},
    ],
}

FILLER = ("Bob: Thanks. I also wanted to ask about the onboarding checklist and the team lunch "
          "on Friday, and whether the design review moved to Thursday afternoon.")


def _session(text: str) -> dict[str, Any]:
    return {"type": [], "topic": [], "text": text}


def _write(root: Path, dialogues: dict[int, dict[str, Any]]) -> Path:
    (root / "dataset").mkdir(parents=True)
    (root / "topics.json").write_text(json.dumps(TOPICS))
    for number, dialogue in dialogues.items():
        (root / "dataset" / f"dialogue_{number}.json").write_text(json.dumps(dialogue))
    return root


# Dialogue 1: a prefix rule, then an update two sessions later. Hand-checked: the current gold is
# session 2 ('y_'); session 0 ('x_') is stale.
DIALOGUE_1 = {
    "sessions": [
        _session("Alice: Welcome aboard. Always start variable names with 'x_'.\n\n" + FILLER),
        _session("Alice: Let's talk about code reviews and pairing.\n\n" + FILLER),
        _session("Alice: One change. Going forward, start all variable names with 'y_'.\n\n"
                 + FILLER),
    ],
    "instructions": [[[0, 0]], [-1], [[0, 1]]],
}

# Dialogue 2: two instructions, one never updated (no chain), one updated.
DIALOGUE_2 = {
    "sessions": [
        _session("Alice: Please end all function names with '_c'.\n\n" + FILLER),
        _session("Alice: Always include assert statements in functions.\n\n" + FILLER),
        _session("Alice: From now on, end all function names with '_d'.\n\n" + FILLER),
    ],
    "instructions": [[[1, 0]], [[3, 0]], [[1, 1]]],
}


def test_markers_find_their_version_and_not_neighbours(tmp_path: Path) -> None:
    topics = mc.load_topics(_write(tmp_path / "data", {}))
    assert 3 not in topics  # a single version is never updated
    x_, y_ = (v.marker for v in topics[0].versions)
    assert x_.search("start variable names with 'x_'") and not y_.search("with 'x_'")
    assert not x_.search("use the 'wx_' prefix")  # a prefix must start the word
    c, d = (v.marker for v in topics[1].versions)
    assert c.search("end them with '_c'.") and not c.search("use snake_case")
    upper, snake = (v.marker for v in topics[2].versions)
    assert upper.search("use all uppercase letters") and snake.search("Snake case")
    assert not upper.search("use snake_case")


def _hit(status: str, content: str, claims: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": "r", "status": status, "content": content, "claims": claims}


def _claim(value: str, status: str, subject: str = "variable names") -> dict[str, Any]:
    return {"subject": subject, "predicate": "convention:prefix", "value": value,
            "evidence": f"start {subject} with '{value}'", "status": status}


def test_presents_as_current_rules(tmp_path: Path) -> None:
    topics = mc.load_topics(_write(tmp_path / "data", {}))
    ins = topics[0]
    x_ = ins.versions[0]
    text = "start variable names with 'x_'"
    assert mc.presents_as_current(_hit("current", text, []), x_, ins)  # nothing marks it
    assert not mc.presents_as_current(_hit("current", "no marker here", []), x_, ins)
    assert not mc.presents_as_current(_hit("historical", text, []), x_, ins)
    assert not mc.presents_as_current(_hit("conflicted", text, [_claim("x_", "superseded")]),
                                      x_, ins)
    # A second claim for the same statement that nothing retired still presents it.
    echo = _claim("x_' prefix", "current", subject="all my new code")
    hit = _hit("conflicted", text, [_claim("x_", "superseded"), echo])
    assert mc.presents_as_current(hit, x_, ins)
    # Another instruction's claim with the same affix is not this instruction's.
    other = _claim("x_", "current", subject="class names")
    assert not mc.presents_as_current(_hit("conflicted", text, [_claim("x_", "superseded"),
                                                                  other]), x_, ins)
    # A sibling rule on the same object, stated in the same sentence, is not this version.
    sibling = {**_claim("_q", "current"), "predicate": "convention:suffix",
               "evidence": "start variable names with 'x_' and end them with '_q'"}
    assert not mc.presents_as_current(_hit("conflicted", text, [_claim("x_", "superseded"),
                                                                  sibling]), x_, ins)
    # With the policy off the same record is a leak: no status, no claims.
    off = mc.without_policy(_hit("conflicted", text, [_claim("x_", "superseded")]))
    assert mc.presents_as_current(off, x_, ins)


def test_score_counts_recall_and_leakage(tmp_path: Path) -> None:
    topics = mc.load_topics(_write(tmp_path / "data", {}))
    ins = topics[0]
    chain = mc.Chain(0, ((0, 0), (2, 1)))
    session_of = {"old": 0, "new": 2, "other": 1}
    old = {**_hit("conflicted", "with 'x_'", [_claim("x_", "superseded")]), "id": "old"}
    new = {**_hit("current", "with 'y_'", [_claim("y_", "current")]), "id": "new"}
    assert mc.score([old, new], chain, ins, session_of) == (True, [], True, True)
    leaky = {**old, "claims": [_claim("x_", "current")]}
    assert mc.score([leaky], chain, ins, session_of) == (False, [0], False, True)
    wrongly_retired = {**new, "claims": [_claim("y_", "superseded")]}
    assert mc.score([wrongly_retired], chain, ins, session_of)[0] is False


def test_run_dialogue_end_to_end(tmp_path: Path) -> None:
    data = _write(tmp_path / "data", {1: DIALOGUE_1, 2: DIALOGUE_2})
    topics = mc.load_topics(data)
    assert mc.dialogue_numbers(data) == [1, 2]
    one = mc.run_dialogue(data, 1, topics, explain=True)
    assert (one.sessions, one.records, one.chains, one.mentions) == (3, 3, 1, 2)
    assert one.marker_missing == 0
    assert len(one.queries) == 4  # topic and eval_query, each ON and OFF
    by = {(q.kind, q.arm): q for q in one.queries}
    topic_on, topic_off = by[("topic", "on")], by[("topic", "off")]
    assert topic_on.query == "variable" and by[("eval_query", "on")].query == topics[0].eval_query
    assert topic_on.current_session == 2 and topic_on.versions == {0: 0, 2: 1}
    # Hand-checked: both rule sessions mention "variable", but the policy retires the 'x_'
    # claim, and a retired claim's sentence no longer matches a current query.
    assert topic_on.gold_retrieved and not topic_on.stale_retrieved
    assert topic_off.gold_retrieved and topic_off.stale_retrieved
    assert topic_on.recall and topic_on.leak_sessions == []
    assert topic_off.recall and topic_off.leak_sessions == [0]
    assert one.stale_mentions == 1 and one.stale_retired == 1
    two = mc.run_dialogue(data, 2, topics)
    assert two.chains == 1  # the never-updated assert rule is no chain
    assert {q.query for q in two.queries} == {"function", topics[1].eval_query}
    on = next(q for q in two.queries if q.kind == "topic" and q.arm == "on")
    assert on.recall and on.leak_sessions == []


def test_missing_data_is_a_clear_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                         ) -> None:
    assert mc.main(["--data", str(tmp_path / "nowhere")]) == 2
    assert "MemoryCode data not found" in capsys.readouterr().err
