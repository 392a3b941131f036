"""benchmarks/locomo.py: its recall metric and gold handling, and the runner end to end.

The conversation is written here (tmp_path) in LoCoMo's layout with hand-checked answers, so the
test needs none of the real data.
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
    spec = importlib.util.spec_from_file_location("bench_locomo",
                                                  REPO / "benchmarks" / "locomo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


lb = _load()


def _turn(dia: str, speaker: str, text: str) -> dict[str, str]:
    return {"speaker": speaker, "dia_id": dia, "text": text}


# Six turns in two sessions. Hand-checked against each question below:
# q0 shares "start", "learn", "cello" (and Alice's name) with D1:1 only -> found at every k.
# q1 evidence D2:1 (shares "garden") and D1:3 (shares nothing) -> recall 1/2.
# q2 shares no word with any turn -> nothing retrieved -> recall 0.
# q3 is adversarial (category 5) and q4 cites a turn that does not exist: both left out.
# q5 cites D1:1 (no shared word: recall 0); the audit corrects it to D1:3 ("rehearsals": 1).
CONVERSATION = {
    "sample_id": "conv-t1",
    "conversation": {
        "speaker_a": "Alice", "speaker_b": "Bob",
        "session_1_date_time": "1:00 pm on 3 March, 2023",
        "session_1": [
            _turn("D1:1", "Alice", "I started learning the cello last winter."),
            _turn("D1:2", "Bob", "Nice! Orchestra evenings sound demanding."),
            _turn("D1:3", "Alice", "Yes, rehearsals happen on Tuesdays."),
        ],
        "session_2_date_time": "10:00 am on 20 April, 2023",
        "session_2": [
            _turn("D2:1", "Bob", "My garden has tomatoes now."),
            _turn("D2:2", "Alice", "Gardening relaxes everyone."),
            _turn("D2:3", "Bob", "Tomatoes need sunshine daily."),
        ],
    },
    "qa": [
        {"question": "When did Alice start learning the cello?", "answer": "last winter",
         "evidence": ["D1:1"], "category": 4},
        {"question": "What grows in Bob's garden?", "answer": "tomatoes",
         "evidence": ["D2:1; D1:3"], "category": 2},
        {"question": "Which pet animal exists?", "answer": "none", "evidence": ["D1:2"],
         "category": 1},
        {"question": "What is Bob's favourite car?", "adversarial_answer": "a van",
         "evidence": ["D2:1"], "category": 5},
        {"question": "Anything?", "answer": "x", "evidence": ["D9:99"], "category": 3},
        {"question": "Where are rehearsals?", "answer": "Tuesdays", "evidence": ["D1:1"],
         "category": 4},
    ],
}
AUDIT = [{"question_id": "locomo_0_qa5", "question": "Where are rehearsals?",
          "golden_answer": "Tuesdays", "category": 4, "error_type": "WRONG_CITATION",
          "cited_evidence": ["D1:1"], "correct_evidence": ["D1:3"], "reasoning": "",
          "correct_answer": "Tuesdays"}]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    root = tmp_path / "locomo"
    root.mkdir()
    (root / lb.DATA_FILE).write_text(json.dumps([CONVERSATION]))
    (root / lb.AUDIT_FILE).write_text(json.dumps(AUDIT))
    return root


def test_recall_at_counts_the_share_of_evidence_in_the_top_k() -> None:
    ranked = ["D1:1", "D1:2", "D1:3", "D2:1"]
    assert lb.recall_at(ranked, ["D1:2", "D2:1"], 2) == 0.5
    assert lb.recall_at(ranked, ["D1:2", "D2:1"], 4) == 1.0
    assert lb.recall_at(ranked, ["D3:1"], 25) == 0.0
    assert lb.recall_at([], ["D1:1"], 5) == 0.0
    assert lb.recall_at(ranked, [], 5) == 1.0  # LoCoMo's convention


def test_evidence_ids_split_normalise_and_drop_unknown() -> None:
    conv, dropped = lb.parse_conversation(CONVERSATION, {}, 0)
    assert lb.evidence_ids(["D2:1; D1:3", "D:1:2", "D1:03 D9:9", "D"], conv.by_id) == (
        "D2:1", "D1:3", "D1:2")
    assert dropped == 1  # q4: no resolvable evidence
    assert [q.number for q in conv.questions] == [0, 1, 2, 5]  # category 5 ignored


def test_neighbours_stay_in_the_session() -> None:
    conv, _ = lb.parse_conversation(CONVERSATION, {}, 0)
    assert conv.neighbours("D1:1") == (None, "D1:2")
    assert conv.neighbours("D1:3") == ("D1:2", None)
    assert conv.neighbours("D2:2") == ("D2:1", "D2:3")
    assert lb._expand(["D1:3", "D2:1"], conv, "next", 3) == ["D1:3", "D2:1", "D2:2"]
    fused = lb._fuse({"D1:1": 2.0}, conv, "prev", 0.5)
    assert fused == {"D1:1": 2.0, "D1:2": 1.0}


def test_date_spans_are_general_and_skip_the_verb_may() -> None:
    march = lb._span(2023, 3)
    assert lb.date_spans("What did she do in March 2023?", [2023], 0.0) == [march]
    assert lb.date_spans("What happened on 3 March, 2023?", [2023], 0.0) == [
        lb._span(2023, 3, 3)]
    assert lb.date_spans("Where did he go in June?", [2022, 2023], 0.0) == [
        lb._span(2022, 6), lb._span(2023, 6)]
    assert lb.date_spans("May I ask what she paints?", [2023], 0.0) == []
    now = lb._span(2023, 5, 10)[0]
    (lo, hi), = lb.date_spans("What did he cook last week?", [2023], now)
    assert lo < now < hi


def test_runner_end_to_end(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
                           ) -> None:
    out = tmp_path / "out.json"
    assert lb.main(["--data", str(data), "--json", str(out), "--analyse",
                    "--experiments"]) == 0
    report: dict[str, Any] = json.loads(out.read_text())
    assert report["questions"] == 4 and report["questions_dropped"] == 1
    assert report["audit_changed"] == 1
    lint = report["lintaid"]["recall"]
    # (q0 1 + q1 1/2 + q2 0 + q5 0) / 4; with the audit gold q5 is found: 2.5 / 4.
    for k in lb.KS:
        assert lint["locomo"]["all"][f"R@{k}"] == 37.5
        assert lint["audit"]["all"][f"R@{k}"] == 62.5
        assert lint["locomo"]["4"][f"R@{k}"] == 50.0
        assert lint["audit"]["4"][f"R@{k}"] == 100.0
        assert lint["locomo"]["2"][f"R@{k}"] == 50.0
        assert lint["locomo"]["1"][f"R@{k}"] == 0.0
    assert report["lintaid"]["records"] == 6
    assert report["lintaid"]["latency"]["p50_ms"] > 0
    bm25 = report["bm25"]["recall"]
    assert bm25["locomo"]["1"]["R@25"] == 0.0  # no shared word: nothing retrieved
    assert bm25["audit"]["4"]["R@25"] == 100.0
    analysis = report["analysis"]["lintaid"]
    # Missed at k=10: D1:3 (q1), D1:2 (q2), D1:1 (q5), none sharing a content word.
    assert analysis["missed_evidence_turns"] == 3
    assert analysis["no_shared_word"] == 100.0
    rows = {r["name"]: r for r in report["experiments"]["rows"]}
    assert rows[lb.BASELINE.name]["locomo"]["all"]["R@25"] == 37.5
    # Every hit brings its next turn: q2's D1:2 is still unreachable (nothing matches).
    assert rows["(a) hit + next turn, same budget"]["locomo"]["1"]["R@25"] == 0.0
    printed = capsys.readouterr().out
    assert "| lintaid | locomo | **all** | 4 | 37.5 | 37.5 | 37.5 |" in printed
    assert "wall time:" in printed
