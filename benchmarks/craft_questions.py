"""Questions about the craft: how well a prompt alone tells lintaid it needs nothing of memory.

``lintaid.retrieval.admit.generic_question`` decides whether a prompt must reach the higher
relevance floor (``GENERIC_FLOOR``) and whether a captured turn was about nothing of the
project's (``off_project``: never a decision at SessionStart). The labelled questions in
``benchmarks/data/questions/craft.*.json`` (300, written by a helper that never saw the rules:
``craft``, a general programming question, or ``project``, one a good answer needs the
project's memory for; hard on purpose: craft questions in a project's words, project
questions without "we" or "our") are split by id into a development half (even ids) and a
test half (odd ids, frozen before tuning). Printed per split: the precision and recall of
``craft`` and the misjudged questions with ``--show``.

    python benchmarks/craft_questions.py [--split dev|test|both] [--show N]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client"), str(REPO / "benchmarks")]

from history_intent import report, splits  # noqa: E402

from lintaid.retrieval.admit import generic_question  # noqa: E402

DATA = REPO / "benchmarks" / "data" / "questions"


def evaluate(split: str, show: int) -> dict[str, float | int]:
    rows = json.loads((DATA / f"craft.{split}.json").read_text(encoding="utf-8"))
    return report(split, rows, lambda q: generic_question(q["text"]),
                  lambda q: q["label"] == "craft", lambda q: q["text"], show, "craft",
                  "project read as craft")


def main(argv: list[str] | None = None) -> int:
    return splits(evaluate, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
