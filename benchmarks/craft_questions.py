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

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client")]

from lintaid.retrieval.admit import generic_question  # noqa: E402

DATA = REPO / "benchmarks" / "data" / "questions"


def evaluate(split: str, show: int) -> dict[str, float | int]:
    rows = json.loads((DATA / f"craft.{split}.json").read_text(encoding="utf-8"))
    tp = fp = fn = 0
    wrong: list[str] = []
    for q in rows:
        said = generic_question(q["text"])
        truth = q["label"] == "craft"
        if said and truth:
            tp += 1
        elif said:
            fp += 1
            wrong.append(f"  project read as craft: {q['text']}")
        elif truth:
            fn += 1
            wrong.append(f"  craft missed: {q['text']}")
    out: dict[str, float | int] = {
        "questions": len(rows), "craft": tp + fn,
        "precision": round(tp / (tp + fp), 3) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 3) if tp + fn else 0.0,
        "project_read_as_craft": fp}
    print(f"{split}: {out}")
    for line in wrong[:show]:
        print(line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "both"), default="dev")
    ap.add_argument("--show", type=int, default=0)
    args = ap.parse_args(argv)
    for split in (("dev", "test") if args.split == "both" else (args.split,)):
        evaluate(split, args.show)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
