"""History intent: how well a question alone tells lintaid it asks about the past.

``lintaid.policy.history.is_history_query`` decides whether a search lifts the supersession
filter. The labelled questions in ``benchmarks/data/questions/`` (400, written by a helper
that never saw the rules: ``history``, ``current``, ``event``, ``general``) are split by id
into a development half (even ids; the weights were set on it) and a test half (odd ids,
frozen before tuning). Printed per split: precision and recall of ``history``, the share of
the other labels switched into history mode (false switches), and the misjudged questions
with ``--show``.

    python benchmarks/history_intent.py [--split dev|test|both] [--show N]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client")]

from lintaid.policy.history import is_history_query, score  # noqa: E402

DATA = REPO / "benchmarks" / "data" / "questions"


def report(split: str, rows: list[dict[str, Any]], said: Callable[[dict[str, Any]], bool],
           truth: Callable[[dict[str, Any]], bool], describe: Callable[[dict[str, Any]], str],
           show: int, name: str, false_name: str) -> dict[str, float | int]:
    """A classifier's precision and recall on labelled ``rows`` (``said``: its verdict,
    ``truth``: the label's), printed with the first ``show`` misjudged rows; shared with
    ``craft_questions.py``."""
    tp = fp = fn = 0
    wrong: list[str] = []
    for q in rows:
        verdict, right = said(q), truth(q)
        if verdict and right:
            tp += 1
        elif verdict:
            fp += 1
            wrong.append(f"  {false_name} {describe(q)}")
        elif right:
            fn += 1
            wrong.append(f"  missed {describe(q)}")
    others = len(rows) - tp - fn
    out: dict[str, float | int] = {
        "questions": len(rows), name: tp + fn,
        "precision": round(tp / (tp + fp), 3) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 3) if tp + fn else 0.0,
        f"{false_name.replace(' ', '_')}_rate": round(fp / others, 3) if others else 0.0}
    print(f"{split}: {out}")
    for line in wrong[:show]:
        print(line)
    return out


def evaluate(split: str, show: int) -> dict[str, float | int]:
    rows = json.loads((DATA / f"history.{split}.json").read_text(encoding="utf-8"))
    return report(split, rows, lambda q: is_history_query(q["question"]),
                  lambda q: q["label"] == "history",
                  lambda q: f"[{q['label']}] {score(q['question']):+.1f} {q['question']}",
                  show, "history", "false switch")


def splits(evaluate_split: Callable[[str, int], object], doc: str | None,
           argv: list[str] | None) -> int:
    """The command line of a labelled-questions script: ``--split dev|test|both``, ``--show``."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "both"), default="dev")
    ap.add_argument("--show", type=int, default=0)
    args = ap.parse_args(argv)
    for split in (("dev", "test") if args.split == "both" else (args.split,)):
        evaluate_split(split, args.show)
    return 0


def main(argv: list[str] | None = None) -> int:
    return splits(evaluate, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
